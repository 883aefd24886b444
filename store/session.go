package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
)

// SessionTTL is how long a sign-in lasts.
const SessionTTL = 30 * 24 * time.Hour

// NewSessionToken returns 256 random bits, URL-safe.
func NewSessionToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sessionID is what is stored: the SHA-256 of the token, so a leaked
// database or Redis dump holds no usable cookie.
func sessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// redisSessionKey is where Redis caches the session of an id, in this
// database's namespace: a deployment on a copy of the database, or this
// one after a restore, never accepts a session cached for another.
func (s *Storage) redisSessionKey(id string) string { return s.RedisKey("session:" + id) }

// sessionCacheTTL bounds how long Redis may answer for a session without
// the database: a lookup racing a logout can put a copy back into Redis just
// after the logout removed it, and that copy must not live for 30 days.
const sessionCacheTTL = time.Hour

// CreateSession stores a new session for the user and returns its token.
// Every sign-in calls it, so every sign-in gets a fresh token. The database
// holds the session; Redis only caches it, so signing in works while Redis
// is down and a Redis restart signs nobody out.
func (s *Storage) CreateSession(ctx context.Context, userID, userAgent string) (string, error) {
	return s.createSession(ctx, userID, userAgent, "")
}

// createSession is CreateSession, linked to the session of id linked when
// that is not "".
func (s *Storage) createSession(ctx context.Context, userID, userAgent, linked string) (string, error) {
	token := NewSessionToken()
	now := time.Now().UTC()
	sess := &Session{ID: sessionID(token), UserID: userID, UserAgent: userAgent, ExpiresAt: now.Add(SessionTTL), LastUsedAt: &now, LinkedID: linked}
	if _, err := s.db.NewInsert().Model(sess).Exec(ctx); err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	s.cacheSession(ctx, token, sess)
	s.touched.Store(sess.ID, now)
	return token, nil
}

func (s *Storage) cacheSession(ctx context.Context, token string, sess *Session) {
	if s.rdb == nil {
		return
	}
	ttl := min(time.Until(sess.ExpiresAt), sessionCacheTTL)
	if ttl <= 0 {
		return
	}
	if err := s.rdb.Set(ctx, s.redisSessionKey(sessionID(token)), sess.UserID, ttl).Err(); err != nil {
		s.logger.Debug("cache session: redis unavailable", "err", err)
	}
}

// SessionUser returns the user of a live session, or ErrNotFound. Redis
// answers first when it can; a miss or a Redis failure asks the database,
// which is the authority.
func (s *Storage) SessionUser(ctx context.Context, token string) (*User, error) {
	if token == "" {
		return nil, ErrNotFound
	}
	id := sessionID(token)
	if u, ok := s.sessions.get(id); ok {
		return u, nil
	}
	user, err := s.lookupSession(ctx, token)
	if err != nil {
		return nil, err
	}
	s.sessions.put(id, user)
	return user, nil
}

func (s *Storage) lookupSession(ctx context.Context, token string) (*User, error) {
	if s.rdb != nil {
		userID, err := s.rdb.Get(ctx, s.redisSessionKey(sessionID(token))).Result()
		switch {
		case err == nil:
			return liveUser(s.UserByID(ctx, userID))
		case !errors.Is(err, redis.Nil):
			s.logger.Debug("session lookup: redis unavailable, asking the database", "err", err)
		}
	}
	if s.rdb == nil {
		// One query: this runs on every request of a signed-in member.
		user := new(User)
		q := s.db.NewSelect().Model(user).Join("JOIN sessions AS s ON s.user_id = u.id").
			Where("s.id = ? AND s.expires_at > ? AND u.disabled_at IS NULL", sessionID(token), time.Now())
		if err := selectOne(ctx, q, "session"); err != nil {
			return nil, err
		}
		return user, nil
	}
	sess := new(Session)
	q := s.db.NewSelect().Model(sess).Where("id = ? AND expires_at > ?", sessionID(token), time.Now())
	if err := selectOne(ctx, q, "session"); err != nil {
		return nil, err
	}
	user, err := liveUser(s.UserByID(ctx, sess.UserID))
	if err != nil {
		return nil, err
	}
	s.cacheSession(ctx, token, sess)
	return user, nil
}

// DeleteSession ends a session in Redis and in the database; replaying its
// token afterwards finds nothing. It fails (and the caller must not report
// a sign-out) unless both are gone: a copy left in Redis while it was
// unreachable would sign the member back in when Redis returns. Redis is
// cleared on both sides of the database delete so that a lookup racing the
// logout cannot re-cache the session from the database in between.
func (s *Storage) DeleteSession(ctx context.Context, token string) error {
	ids, err := s.linkedSessions(ctx, sessionID(token))
	if err != nil {
		return err
	}
	for _, id := range ids {
		s.sessions.revoke(id)
	}
	if err := s.uncacheSessions(ctx, ids); err != nil {
		return err
	}
	if _, err := s.db.NewDelete().Model((*Session)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if err := s.uncacheSessions(ctx, ids); err != nil {
		return err
	}
	s.announceEnded(ctx, ids)
	return nil
}

// linkedSessions is the session of id and those linked with it (a custom
// domain's session and the auth host's it was made from, either way).
func (s *Storage) linkedSessions(ctx context.Context, id string) ([]string, error) {
	ids := []string{id}
	var linked []string
	err := s.db.NewSelect().Model((*Session)(nil)).ColumnExpr("id").Where("linked_id = ?", id).
		WhereOr("id = (SELECT linked_id FROM sessions WHERE id = ?)", id).Scan(ctx, &linked)
	if err != nil {
		return nil, fmt.Errorf("find linked sessions: %w", err)
	}
	for _, l := range linked {
		if l != id {
			ids = append(ids, l)
		}
	}
	return ids, nil
}

func (s *Storage) uncacheSessions(ctx context.Context, ids []string) error {
	if s.rdb == nil {
		return nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.redisSessionKey(id)
	}
	if err := s.rdb.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("delete session in redis: %w", err)
	}
	return nil
}

// liveUser refuses a disabled account: its sessions are ended when it is
// disabled, and one racing that is not honoured either.
func liveUser(u *User, err error) (*User, error) {
	if err != nil {
		return nil, err
	}
	if u.DisabledAt != nil {
		return nil, ErrNotFound
	}
	return u, nil
}
