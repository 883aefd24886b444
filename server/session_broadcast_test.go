package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

// TestSignOutReachesEveryInstance: two servers share PostgreSQL and Redis,
// each remembering session lookups for a second (SessionMemoTTL). A logout
// on one, a sign-out everywhere (the CLI's `sessions revoke`) and disabling
// the account are announced on the Redis channel, and the other instance
// refuses the session as soon as it hears it, not a second later.
func TestSignOutReachesEveryInstance(t *testing.T) {
	db := demoDB(t)
	rdb := storetest.Redis(t)
	ns := store.NewID()[:12] // one deployment: this test's own channel
	deployment := func(o *store.Options) { o.Redis, o.Namespace = rdb, ns }
	a, b := newTestServerStore(t, db, nil, deployment), newTestServerStore(t, db, nil, deployment)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ts := range []*testServer{a, b} {
		go ts.WatchPageVersions(ctx)
	}
	waitFor(t, func() bool { return a.store.PageVersionsLive() && b.store.PageVersionsLive() })

	me := func(ts *testServer, token string) int {
		return ts.do(t, "GET", "/api/auth/me", nil, withSession(token)).Status
	}
	// heard waits for b to receive an announcement, then b must refuse the
	// session although its memo of it has most of its second left.
	heard := func(what string, before int64, token string) {
		t.Helper()
		start := time.Now()
		deadline := start.Add(5 * time.Second)
		for b.store.EndedHeard() == before {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the other instance never heard of it", what)
			}
			time.Sleep(time.Millisecond)
		}
		if st := me(b, token); st != http.StatusUnauthorized {
			t.Errorf("%s: the other instance still answers %d for the session", what, st)
		}
		t.Logf("%s reached the other instance in %s", what, time.Since(start))
	}
	follower, err := a.store.UserByEmail(context.Background(), "follower@demo.test")
	if err != nil {
		t.Fatal(err)
	}

	// A logout.
	token := sessionFor(t, a, "follower@demo.test")
	if me(a, token) != http.StatusOK || me(b, token) != http.StatusOK {
		t.Fatal("the session does not work on both instances")
	}
	before := b.store.EndedHeard()
	if res := a.do(t, "POST", "/api/auth/logout", nil, withSession(token, "Content-Type", "application/json")); res.Status != http.StatusOK {
		t.Fatalf("logout: %d %s", res.Status, res.Body)
	}
	heard("logout", before, token)

	// Sign out everywhere (`marquee sessions revoke`).
	t1, t2 := sessionFor(t, a, "follower@demo.test"), sessionFor(t, a, "follower@demo.test")
	if me(b, t1) != http.StatusOK || me(b, t2) != http.StatusOK {
		t.Fatal("new sessions do not work")
	}
	before = b.store.EndedHeard()
	if n, err := a.store.EndOtherSessions(context.Background(), follower.ID, ""); err != nil || n < 2 {
		t.Fatalf("end sessions: %d %v", n, err)
	}
	heard("sign-out everywhere", before, t1)
	if me(b, t2) != http.StatusUnauthorized {
		t.Error("sign-out everywhere: the second session lives on the other instance")
	}

	// Disabling the account (`marquee user disable`).
	t3 := sessionFor(t, a, "follower@demo.test")
	if me(b, t3) != http.StatusOK {
		t.Fatal("new session does not work")
	}
	before = b.store.EndedHeard()
	if _, err := a.store.SetUserDisabled(context.Background(), follower.ID, true); err != nil {
		t.Fatal(err)
	}
	heard("disable", before, t3)
}
