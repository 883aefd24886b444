package store

import (
	"runtime"
	"testing"
	"time"
)

// A memo expires when read after SessionMemoTTL, and a revoked session
// cannot be put back for three times that; all on a clock the test moves.
func TestSessionMemoExpiresOnRead(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := newSessionMemo()
	m.now = func() time.Time { return now }

	m.put("s1", &User{ID: "u1", Email: "a@example.test"})
	if u, ok := m.get("s1"); !ok || u.ID != "u1" {
		t.Fatalf("a fresh memo answers u1, got %v %v", u, ok)
	}
	now = now.Add(SessionMemoTTL - time.Millisecond)
	if _, ok := m.get("s1"); !ok {
		t.Fatal("a memo within its TTL answers")
	}
	now = now.Add(time.Millisecond)
	if u, ok := m.get("s1"); ok {
		t.Fatalf("a memo at its TTL is gone, got %v", u)
	}

	m.put("s2", &User{ID: "u2"})
	m.revoke("s2")
	if _, ok := m.get("s2"); ok {
		t.Fatal("a revoked session is forgotten at once")
	}
	now = now.Add(3*SessionMemoTTL - time.Millisecond)
	m.put("s2", &User{ID: "u2"})
	if _, ok := m.get("s2"); ok {
		t.Fatal("a lookup that raced the logout cannot put the session back")
	}
	now = now.Add(time.Millisecond)
	m.put("s2", &User{ID: "u2"})
	if _, ok := m.get("s2"); !ok {
		t.Fatal("after 3 TTLs the revocation is over (the session id would be a new login's)")
	}

	// A copy: changing what get answered changes nothing remembered.
	u, _ := m.get("s2")
	u.ID = "changed"
	if again, _ := m.get("s2"); again.ID != "u2" {
		t.Fatalf("the memo was changed through a returned copy: %q", again.ID)
	}
}

// A Storage's memo starts no goroutine: an expiring cache with a sweeper
// (golang-lru's expirable) woke every 10 ms for the life of the process.
func TestSessionMemoStartsNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	memos := make([]*sessionMemo, 50)
	for i := range memos {
		memos[i] = newSessionMemo()
	}
	if after := runtime.NumGoroutine(); after >= before+len(memos) {
		t.Fatalf("%d memos started %d goroutines", len(memos), after-before)
	}
	runtime.KeepAlive(memos)
}
