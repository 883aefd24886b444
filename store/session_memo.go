package store

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
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
type sessionMemo struct {
	users   *expirable.LRU[string, User]
	revoked *expirable.LRU[string, struct{}]
}

func newSessionMemo() *sessionMemo {
	return &sessionMemo{
		users:   expirable.NewLRU[string, User](10_000, nil, SessionMemoTTL),
		revoked: expirable.NewLRU[string, struct{}](10_000, nil, 3*SessionMemoTTL),
	}
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
	return &u, true
}

func (m *sessionMemo) put(id string, u *User) {
	if m == nil {
		return
	}
	if _, gone := m.revoked.Get(id); gone {
		return
	}
	m.users.Add(id, *u)
}

func (m *sessionMemo) revoke(id string) {
	if m == nil {
		return
	}
	m.revoked.Add(id, struct{}{})
	m.users.Remove(id)
}

// forgetUser drops every memo of the user's sessions (their profile changed).
func (m *sessionMemo) forgetUser(userID string) {
	if m == nil {
		return
	}
	for _, id := range m.users.Keys() {
		if u, ok := m.users.Peek(id); ok && u.ID == userID {
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
