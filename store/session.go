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

func redisSessionKey(token string) string { return "marquee:session:" + sessionID(token) }

// CreateSession stores a new session for the user and returns its token.
// Every sign-in calls it, so every sign-in gets a fresh token.
func (s *Storage) CreateSession(ctx context.Context, userID, userAgent string) (string, error) {
	token := NewSessionToken()
	if s.Redis != nil {
		if err := s.Redis.Set(ctx, redisSessionKey(token), userID, SessionTTL).Err(); err != nil {
			return "", fmt.Errorf("create session in redis: %w", err)
		}
		return token, nil
	}
	sess := &Session{ID: sessionID(token), UserID: userID, UserAgent: userAgent, ExpiresAt: time.Now().Add(SessionTTL)}
	if _, err := s.DB.NewInsert().Model(sess).Exec(ctx); err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return token, nil
}

// SessionUser returns the user of a live session, or ErrNotFound.
func (s *Storage) SessionUser(ctx context.Context, token string) (*User, error) {
	if token == "" {
		return nil, ErrNotFound
	}
	if s.Redis != nil {
		userID, err := s.Redis.Get(ctx, redisSessionKey(token)).Result()
		if errors.Is(err, redis.Nil) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("load session from redis: %w", err)
		}
		return s.UserByID(ctx, userID)
	}
	user := new(User)
	q := s.DB.NewSelect().Model(user).Join("JOIN sessions AS s ON s.user_id = u.id").
		Where("s.id = ? AND s.expires_at > ?", sessionID(token), time.Now())
	if err := selectOne(ctx, q, "session"); err != nil {
		return nil, err
	}
	return user, nil
}

// DeleteSession ends a session; replaying its token afterwards finds nothing.
func (s *Storage) DeleteSession(ctx context.Context, token string) error {
	if s.Redis != nil {
		if err := s.Redis.Del(ctx, redisSessionKey(token)).Err(); err != nil {
			return fmt.Errorf("delete session in redis: %w", err)
		}
		return nil
	}
	if _, err := s.DB.NewDelete().Model((*Session)(nil)).Where("id = ?", sessionID(token)).Exec(ctx); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
