package store

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// SessionMemoTTL is how long this process trusts a session lookup without
// asking the database (or Redis) again. Every request of a signed-in member
// looks its session up, and a page view brings several (the page, /api/auth/me,
// the islands' calls); on the embedded SQLite default that query was most of
// a cached member page's cost. A logout or a new profile picture in this
// process drops the memo at once; one in another process (PostgreSQL without
// Redis pub/sub) is seen here within this time.
const SessionMemoTTL = time.Second

// sessionMemo remembers recent session lookups by session id. revoked holds
// the sessions this process ended, a little longer than a memo lives, so a
// lookup that read the session just before the logout deleted it cannot
// put it back.
//
// Entries expire when read, not by a sweeper: golang-lru's expirable cache
// runs a goroutine per cache that wakes every TTL/100 (10 ms here) and never
// ends, so every Storage cost 130 wake-ups a second for the life of the
// process, idle or not (and a test process building hundreds of Storages
// kept all of them ticking). Both caches are bounded by size, so an
// expired entry nobody reads again is evicted by newer ones.
type sessionMemo struct {
	users   *lru.Cache[string, memoUser]
	revoked *lru.Cache[string, time.Time]
	now     func() time.Time
}

type memoUser struct {
	user    User
	expires time.Time
}

func newSessionMemo() *sessionMemo {
	users, err := lru.New[string, memoUser](10_000)
	if err != nil {
		panic(err) // only for a size below 1
	}
	revoked, err := lru.New[string, time.Time](10_000)
	if err != nil {
		panic(err)
	}
	return &sessionMemo{users: users, revoked: revoked, now: time.Now}
}

// get answers a copy, so no caller can change what another one reads. A
// nil memo always asks.
func (m *sessionMemo) get(id string) (*User, bool) {
	if m == nil {
		return nil, false
	}
	u, ok := m.users.Get(id)
	if !ok {
		return nil, false
	}
	if !m.now().Before(u.expires) {
		m.users.Remove(id)
		return nil, false
	}
	return &u.user, true
}

func (m *sessionMemo) put(id string, u *User) {
	if m == nil {
		return
	}
	now := m.now()
	if until, gone := m.revoked.Get(id); gone {
		if now.Before(until) {
			return
		}
		m.revoked.Remove(id)
	}
	m.users.Add(id, memoUser{user: *u, expires: now.Add(SessionMemoTTL)})
}

func (m *sessionMemo) revoke(id string) {
	if m == nil {
		return
	}
	m.revoked.Add(id, m.now().Add(3*SessionMemoTTL))
	m.users.Remove(id)
}

// forgetUser drops every memo of the user's sessions (their profile changed).
func (m *sessionMemo) forgetUser(userID string) {
	if m == nil {
		return
	}
	for _, id := range m.users.Keys() {
		if u, ok := m.users.Peek(id); ok && u.user.ID == userID {
			m.users.Remove(id)
		}
	}
}

// purge forgets every session (the database was replaced: namespace.go).
func (m *sessionMemo) purge() {
	if m == nil {
		return
	}
	m.users.Purge()
}
