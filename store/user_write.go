package store

import (
	"context"

	"errors"
	"fmt"
	"github.com/uptrace/bun"
	"strings"
	"time"
)

// Sign-up conflicts, told apart so the form can mark the right field.
var (
	ErrEmailTaken    = errors.New("email already registered")
	ErrUsernameTaken = errors.New("username already taken")
)

// NormalizeEmail is how emails are stored and compared: trimmed, lower-case.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CreateUser stores a new account. passwordHash is already argon2id-hashed;
// the store never sees a password.
func (s *Storage) CreateUser(ctx context.Context, email, username, passwordHash string) (*User, error) {
	u, err := createUser(ctx, s.db, email, username, passwordHash)
	if err != nil {
		// The unique indexes decide races; look up which one refused.
		if taken := s.takenError(ctx, NormalizeEmail(email), strings.TrimSpace(username)); taken != nil {
			return nil, taken
		}
		return nil, err
	}
	return u, nil
}

func createUser(ctx context.Context, db bun.IDB, email, username, passwordHash string) (*User, error) {
	now := time.Now()
	u := &User{ID: NewID(), Email: NormalizeEmail(email), Username: strings.TrimSpace(username),
		PasswordHash: passwordHash, CreatedAt: now, UpdatedAt: now}
	if _, err := db.NewInsert().Model(u).Exec(ctx); err != nil {
		return nil, fmt.Errorf("create user %s: %w", u.Username, err)
	}
	return u, nil
}

// takenError reports whether the email or the username is already in use.
func (s *Storage) takenError(ctx context.Context, email, username string) error {
	if n, err := s.db.NewSelect().Model((*User)(nil)).Where("email = ?", email).Count(ctx); err == nil && n > 0 {
		return ErrEmailTaken
	}
	if n, err := s.db.NewSelect().Model((*User)(nil)).Where("lower(username) = lower(?)", username).Count(ctx); err == nil && n > 0 {
		return ErrUsernameTaken
	}
	return nil
}

// CheckAvailable is the friendly pre-check of sign-up (CreateUser still
// relies on the unique indexes for races).
func (s *Storage) CheckAvailable(ctx context.Context, email, username string) error {
	return s.takenError(ctx, NormalizeEmail(email), strings.TrimSpace(username))
}

// UserByID loads a user, or ErrNotFound.
func (s *Storage) UserByID(ctx context.Context, id string) (*User, error) {
	u := new(User)
	if err := selectOne(ctx, s.db.NewSelect().Model(u).Where("id = ?", id), "user "+id); err != nil {
		return nil, err
	}
	return u, nil
}

// UserByLogin finds a user by email or username (sign-in accepts either);
// usernames compare case-insensitively so 'Creator' finds 'creator'.
func (s *Storage) UserByLogin(ctx context.Context, login string) (*User, error) {
	login = strings.TrimSpace(login)
	if login == "" {
		return nil, ErrNotFound
	}
	u := new(User)
	// A disabled account signs in as nobody (`marquee user disable`).
	q := s.db.NewSelect().Model(u).Where("disabled_at IS NULL")
	if strings.Contains(login, "@") {
		q = q.Where("email = ?", NormalizeEmail(login))
	} else {
		q = q.Where("lower(username) = lower(?)", login)
	}
	if err := selectOne(ctx, q, "user by login"); err != nil {
		return nil, err
	}
	return u, nil
}
