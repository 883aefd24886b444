package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// AccountToken is a single-use link sent by e-mail: a password reset, the
// verification of an address, or the confirmation of a new one. ID is the
// SHA-256 of the token in the link, so the database holds nothing usable.
type AccountToken struct {
	bun.BaseModel `bun:"table:account_tokens"`

	ID      string `bun:",pk"`
	UserID  string `bun:",notnull"`
	Purpose string `bun:",notnull"`
	// Email is the address the token proves (verification, change).
	Email     string    `bun:",notnull,default:''"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
	ExpiresAt time.Time `bun:",notnull"`
	UsedAt    *time.Time
}

// Token purposes and how long each link lives.
const (
	TokenPasswordReset = "PASSWORD_RESET"
	TokenVerifyEmail   = "VERIFY_EMAIL"
	TokenEmailChange   = "EMAIL_CHANGE"
	// TokenEmailUndo is the old address's link that takes a changed
	// e-mail address back (EmailUndoTTL).
	TokenEmailUndo = "EMAIL_UNDO"

	PasswordResetTTL = time.Hour
	VerifyEmailTTL   = 48 * time.Hour
	EmailChangeTTL   = 24 * time.Hour
	EmailUndoTTL     = 7 * 24 * time.Hour
)

// ErrTokenInvalid: the link is unknown, used, expired or for another
// purpose (one message for all: which one is nobody's business).
var ErrTokenInvalid = errors.New("this link is invalid or has expired")

// issueToken writes a token for the user through db and returns the token
// for the link.
func issueToken(ctx context.Context, db bun.IDB, userID, purpose, email string, ttl time.Duration, now time.Time) (string, string, error) {
	token := NewSessionToken()
	row := &AccountToken{ID: sessionID(token), UserID: userID, Purpose: purpose, Email: email, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
		return "", "", fmt.Errorf("issue %s token: %w", purpose, err)
	}
	return token, row.ID, nil
}

// useToken spends a token: a conditional update, so of many concurrent uses
// exactly one succeeds. It answers the token's row.
func useToken(ctx context.Context, tx bun.Tx, token, purpose string, now time.Time) (*AccountToken, error) {
	if token == "" {
		return nil, ErrTokenInvalid
	}
	res, err := tx.NewUpdate().Model((*AccountToken)(nil)).Set("used_at = ?", now).
		Where("id = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?", sessionID(token), purpose, now).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("use %s token: %w", purpose, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, ErrTokenInvalid
	}
	row := new(AccountToken)
	if err := tx.NewSelect().Model(row).Where("id = ?", sessionID(token)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load %s token: %w", purpose, err)
	}
	return row, nil
}

// CheckToken reports whether a token could be used now (the reset form is
// shown only for a live link).
func (s *Storage) CheckToken(ctx context.Context, token, purpose string) error {
	if token == "" {
		return ErrTokenInvalid
	}
	ok, err := s.db.NewSelect().Model((*AccountToken)(nil)).
		Where("id = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?", sessionID(token), purpose, time.Now().UTC()).Exists(ctx)
	if err != nil {
		return fmt.Errorf("check %s token: %w", purpose, err)
	}
	if !ok {
		return ErrTokenInvalid
	}
	return nil
}

// AccountMailContext is what account mails need to name the app and link
// back to it: the app the member came from ("" for none).
type AccountMailContext struct {
	AppID   string
	AppName string
}

func (a AccountMailContext) query() string {
	if a.AppName == "" {
		return ""
	}
	return "&app=" + a.AppName
}

// RequestPasswordReset mails a reset link to the account with this e-mail,
// if there is one; the caller answers the same either way. The token and
// its mail are written together.
// JobPasswordReset is the job that looks an address up and, when it is an
// account's, mails it a reset link (args: PasswordResetJob).
const JobPasswordReset = "password_reset"

// PasswordResetJob is an address someone asked a reset link for.
type PasswordResetJob struct {
	Email   string `json:"email"`
	AppID   string `json:"appId,omitempty"`
	AppName string `json:"appName,omitempty"`
}

// QueuePasswordReset is what "Forgot password?" does, the same for every
// address: one job, which looks the address up outside the request. Whether
// an account uses the address changes neither the answer nor the work the
// request does, so neither its time nor its writes tell (issue 41 item 10).
func (s *Storage) QueuePasswordReset(ctx context.Context, email string, from AccountMailContext) error {
	return enqueue(ctx, s.db, JobPasswordReset, PasswordResetJob{Email: NormalizeEmail(email), AppID: from.AppID, AppName: from.AppName})
}

// RequestPasswordReset mails a reset link to the account using email, if
// any (the password_reset job's work).
func (s *Storage) RequestPasswordReset(ctx context.Context, email string, from AccountMailContext) error {
	u := new(User)
	err := selectOne(ctx, s.db.NewSelect().Model(u).Where("email = ? AND deleted_at IS NULL", NormalizeEmail(email)), "user")
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		token, id, err := issueToken(ctx, tx, u.ID, TokenPasswordReset, u.Email, PasswordResetTTL, now)
		if err != nil {
			return err
		}
		_, err = QueueMail(ctx, tx, OutgoingMail{Key: "reset:" + id, Kind: MailPasswordReset, AppID: from.AppID, UserID: u.ID,
			To: u.Email, Transactional: true, Content: MailContent{
				Subject: "Reset your password",
				Heading: "Reset your password",
				Paragraphs: []string{"Hi @" + u.Username + ", someone (hopefully you) asked to reset the password of your account.",
					"The link works once, for one hour."},
				Action: &MailLink{Label: "Choose a new password", Path: "/authenticate/reset?token=" + token + from.query(), Site: "auth"},
				Note:   "If you did not ask for this, ignore this mail: your password stays as it is.",
			}})
		return err
	})
}

// ResetPassword spends a reset token and sets the new password hash; every
// session of the account ends and every other reset link dies. It answers
// the user, for the new session the caller starts.
func (s *Storage) ResetPassword(ctx context.Context, token, passwordHash string) (*User, error) {
	now := time.Now().UTC()
	var user *User
	var ended []string
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		t, err := useToken(ctx, tx, token, TokenPasswordReset, now)
		if err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*User)(nil)).Set("password_hash = ?", passwordHash).Set("updated_at = ?", now).
			Where("id = ? AND deleted_at IS NULL", t.UserID).Exec(ctx); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		if _, err := tx.NewUpdate().Model((*AccountToken)(nil)).Set("used_at = ?", now).
			Where("user_id = ? AND purpose = ? AND used_at IS NULL", t.UserID, TokenPasswordReset).Exec(ctx); err != nil {
			return fmt.Errorf("retire reset links: %w", err)
		}
		if ended, err = deleteSessionsTx(ctx, tx, t.UserID, ""); err != nil {
			return err
		}
		user = new(User)
		return selectOne(ctx, tx.NewSelect().Model(user).Where("id = ?", t.UserID), "user")
	})
	if err != nil {
		return nil, err
	}
	return user, s.forgetSessions(ctx, ended)
}

// deleteSessionsTx deletes the user's sessions but keep (a session id, ""
// for none) and answers the ids it deleted, for forgetSessions after commit.
func deleteSessionsTx(ctx context.Context, db bun.IDB, userID, keep string) ([]string, error) {
	var ids []string
	q := db.NewSelect().Model((*Session)(nil)).Column("id").Where("user_id = ?", userID)
	if keep != "" {
		q = q.Where("id <> ?", keep)
	}
	if err := q.Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if _, err := db.NewDelete().Model((*Session)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("end sessions: %w", err)
	}
	return ids, nil
}

// forgetSessions drops ended sessions from Redis and this process's memo,
// so they stop working at once rather than when a cached copy expires.
func (s *Storage) forgetSessions(ctx context.Context, ids []string) error {
	for _, id := range ids {
		s.sessions.revoke(id)
	}
	if s.rdb == nil || len(ids) == 0 {
		return nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.redisSessionKey(id)
	}
	if err := s.rdb.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("end sessions in redis: %w", err)
	}
	s.announceEnded(ctx, ids)
	return nil
}

// announceEnded tells the other processes that sessions ended
// (SessionChannel). A lost announcement costs at most SessionMemoTTL: the
// sessions are already gone from the database and Redis.
func (s *Storage) announceEnded(ctx context.Context, ids []string) {
	if s.rdb == nil || len(ids) == 0 {
		return
	}
	for len(ids) > 0 {
		n := min(len(ids), 100)
		if err := s.rdb.Publish(ctx, s.SessionChannel(), strings.Join(ids[:n], ",")).Err(); err != nil {
			s.cacheWarn("session end announcement failed", err)
			return
		}
		ids = ids[n:]
	}
}

// EndOtherSessions signs the user out everywhere but the session keep
// (its token; "" ends all).
func (s *Storage) EndOtherSessions(ctx context.Context, userID, keepToken string) (int, error) {
	keep := ""
	if keepToken != "" {
		keep = sessionID(keepToken)
	}
	ids, err := deleteSessionsTx(ctx, s.db, userID, keep)
	if err != nil {
		return 0, err
	}
	return len(ids), s.forgetSessions(ctx, ids)
}

// SendVerification mails the member a link that verifies their current
// address, through db (the sign-up's transaction, or a resend).
func SendVerification(ctx context.Context, db bun.IDB, u *User, from AccountMailContext) error {
	now := time.Now().UTC()
	token, id, err := issueToken(ctx, db, u.ID, TokenVerifyEmail, u.Email, VerifyEmailTTL, now)
	if err != nil {
		return err
	}
	_, err = QueueMail(ctx, db, OutgoingMail{Key: "verify:" + id, Kind: MailVerifyEmail, AppID: from.AppID, UserID: u.ID,
		To: u.Email, Transactional: true, Content: MailContent{
			Subject: "Confirm your e-mail address",
			Heading: "Confirm your e-mail address",
			Paragraphs: []string{"Welcome, @" + u.Username + "! Confirm that " + u.Email + " is yours to start paying, posting and donating.",
				"The link works for 48 hours."},
			Action: &MailLink{Label: "Confirm my address", Path: "/authenticate/verify?token=" + token + from.query(), Site: "auth"},
			Note:   "If you did not sign up, ignore this mail.",
		}})
	return err
}

// ResendVerification sends a new verification link to an unverified member.
func (s *Storage) ResendVerification(ctx context.Context, u *User, from AccountMailContext) error {
	if u.EmailVerified {
		return nil
	}
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		return SendVerification(ctx, tx, u, from)
	})
}

// VerifyEmail spends a verification token: the address it was sent to is
// verified, if it is still the account's.
func (s *Storage) VerifyEmail(ctx context.Context, token string) (*User, error) {
	now := time.Now().UTC()
	var user *User
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		t, err := useToken(ctx, tx, token, TokenVerifyEmail, now)
		if err != nil {
			return err
		}
		res, err := tx.NewUpdate().Model((*User)(nil)).Set("email_verified = true").Set("updated_at = ?", now).
			Where("id = ? AND email = ? AND deleted_at IS NULL", t.UserID, t.Email).Exec(ctx)
		if err != nil {
			return fmt.Errorf("verify e-mail: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrTokenInvalid
		}
		user = new(User)
		return selectOne(ctx, tx.NewSelect().Model(user).Where("id = ?", t.UserID), "user")
	})
	if err != nil {
		return nil, err
	}
	s.sessions.forgetUser(user.ID)
	return user, nil
}

// CreateUserVerifying is CreateUser with the verification mail written in
// the same transaction.
func (s *Storage) CreateUserVerifying(ctx context.Context, email, username, passwordHash string, from AccountMailContext) (*User, error) {
	var user *User
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		u, err := createUser(ctx, tx, email, username, passwordHash)
		if err != nil {
			return err
		}
		user = u
		return SendVerification(ctx, tx, u, from)
	})
	if err != nil {
		if taken := s.takenError(ctx, NormalizeEmail(email), username); taken != nil {
			return nil, taken
		}
		return nil, err
	}
	return user, nil
}
