package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// ErrEmailNotVerified: the member must confirm their address before paying,
// posting or donating (REQUIRE_VERIFIED_EMAIL).
var ErrEmailNotVerified = errors.New("e-mail address not verified")

// ErrOwnsApp: an account that owns an app cannot be deleted until the app
// has another owner or is gone.
var ErrOwnsApp = errors.New("account owns an app")

// RequestEmailChange mails a confirmation link to the new address; the
// account keeps its address until the link is used.
func (s *Storage) RequestEmailChange(ctx context.Context, u *User, newEmail string, from AccountMailContext) error {
	newEmail = NormalizeEmail(newEmail)
	if newEmail == u.Email {
		return nil
	}
	taken, err := s.db.NewSelect().Model((*User)(nil)).Where("email = ?", newEmail).Exists(ctx)
	if err != nil {
		return fmt.Errorf("check e-mail: %w", err)
	}
	if taken {
		return ErrEmailTaken
	}
	now := time.Now().UTC()
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		token, id, err := issueToken(ctx, tx, u.ID, TokenEmailChange, newEmail, EmailChangeTTL, now)
		if err != nil {
			return err
		}
		_, err = QueueMail(ctx, tx, OutgoingMail{Key: "email-change:" + id, Kind: MailEmailChange, AppID: from.AppID, UserID: u.ID,
			To: newEmail, Transactional: true, Content: MailContent{
				Subject:    "Confirm your new e-mail address",
				Heading:    "Confirm your new e-mail address",
				Paragraphs: []string{"@" + u.Username + " asked to use " + newEmail + " for their account. Your account keeps its current address until you confirm.", "The link works for 24 hours."},
				Action:     &MailLink{Label: "Use this address", Path: "/authenticate/verify?token=" + token + from.query(), Site: "auth"},
				Note:       "If you did not ask for this, ignore this mail.",
			}})
		return err
	})
}

// ConfirmEmailChange spends an e-mail change token: the account takes the
// new address (verified, since the link reached it) and the old address is
// told.
func (s *Storage) ConfirmEmailChange(ctx context.Context, token string) (*User, error) {
	now := time.Now().UTC()
	var user *User
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		t, err := useToken(ctx, tx, token, TokenEmailChange, now)
		if err != nil {
			return err
		}
		old := new(User)
		if err := selectOne(ctx, tx.NewSelect().Model(old).Where("id = ? AND deleted_at IS NULL", t.UserID), "user"); err != nil {
			return err
		}
		taken, err := tx.NewSelect().Model((*User)(nil)).Where("email = ? AND id <> ?", t.Email, t.UserID).Exists(ctx)
		if err != nil {
			return fmt.Errorf("check e-mail: %w", err)
		}
		if taken {
			return ErrEmailTaken
		}
		if _, err := tx.NewUpdate().Model((*User)(nil)).Set("email = ?", t.Email).Set("email_verified = true").
			Set("updated_at = ?", now).Where("id = ?", t.UserID).Exec(ctx); err != nil {
			return fmt.Errorf("change e-mail: %w", err)
		}
		// The old address can take the account back for a week: whoever
		// changed it may have had a stolen session (and then reset the
		// password through the new address).
		undo, _, err := issueToken(ctx, tx, t.UserID, TokenEmailUndo, old.Email, EmailUndoTTL, now)
		if err != nil {
			return err
		}
		if _, err := QueueMail(ctx, tx, OutgoingMail{Key: "email-changed:" + t.ID, Kind: MailEmailChanged, UserID: t.UserID,
			To: old.Email, Transactional: true, Content: MailContent{
				Subject: "Your e-mail address was changed",
				Heading: "Your e-mail address was changed",
				Paragraphs: []string{"The account @" + old.Username + " now uses " + t.Email + " instead of this address.",
					"If you did not do this, undo it: the account takes this address back, every session is signed out and you choose a new password. The link works for 7 days."},
				Action: &MailLink{Label: "Undo the change", Path: "/authenticate/email/undo?token=" + undo, Site: "auth"},
				Note:   "If you made this change, ignore this mail.",
			}}); err != nil {
			return err
		}
		user = old
		user.Email, user.EmailVerified = t.Email, true
		return nil
	})
	if err != nil {
		if isUniqueViolation(err) {
			return nil, ErrEmailTaken
		}
		return nil, err
	}
	s.sessions.forgetUser(user.ID)
	return user, nil
}

// UndoEmailChange spends the old address's undo link (ConfirmEmailChange):
// the account takes that address back (verified: the link reached it),
// every session ends, every other link of the account dies and the
// password is cleared, since whoever made the change may have set it. It
// answers the user and a fresh password reset token for the page the
// owner chooses a new password on.
func (s *Storage) UndoEmailChange(ctx context.Context, token string) (*User, string, error) {
	now := time.Now().UTC()
	var user *User
	var reset string
	var ended []string
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		t, err := useToken(ctx, tx, token, TokenEmailUndo, now)
		if err != nil {
			return err
		}
		taken, err := tx.NewSelect().Model((*User)(nil)).Where("email = ? AND id <> ?", t.Email, t.UserID).Exists(ctx)
		if err != nil {
			return fmt.Errorf("check e-mail: %w", err)
		}
		if taken {
			return ErrEmailTaken
		}
		res, err := tx.NewUpdate().Model((*User)(nil)).Set("email = ?", t.Email).Set("email_verified = true").
			Set("password_hash = ''").Set("updated_at = ?", now).Where("id = ? AND deleted_at IS NULL", t.UserID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("undo e-mail change: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrTokenInvalid
		}
		if _, err := tx.NewUpdate().Model((*AccountToken)(nil)).Set("used_at = ?", now).
			Where("user_id = ? AND used_at IS NULL", t.UserID).Exec(ctx); err != nil {
			return fmt.Errorf("retire account links: %w", err)
		}
		if ended, err = deleteSessionsTx(ctx, tx, t.UserID, ""); err != nil {
			return err
		}
		if reset, _, err = issueToken(ctx, tx, t.UserID, TokenPasswordReset, t.Email, PasswordResetTTL, now); err != nil {
			return err
		}
		user = new(User)
		return selectOne(ctx, tx.NewSelect().Model(user).Where("id = ?", t.UserID), "user")
	})
	if err != nil {
		if isUniqueViolation(err) {
			return nil, "", ErrEmailTaken
		}
		return nil, "", err
	}
	s.sessions.forgetUser(user.ID)
	s.InvalidateUser(ctx, user.ID)
	return user, reset, s.forgetSessions(ctx, ended)
}

// ChangeUsername renames the account (the unique index decides races).
func (s *Storage) ChangeUsername(ctx context.Context, userID, username string) error {
	username = strings.TrimSpace(username)
	taken, err := s.db.NewSelect().Model((*User)(nil)).Where("lower(username) = lower(?) AND id <> ?", username, userID).Exists(ctx)
	if err != nil {
		return fmt.Errorf("check username: %w", err)
	}
	if taken {
		return ErrUsernameTaken
	}
	if _, err := s.db.NewUpdate().Model((*User)(nil)).Set("username = ?", username).Set("updated_at = ?", time.Now().UTC()).
		Where("id = ?", userID).Exec(ctx); err != nil {
		if isUniqueViolation(err) {
			return ErrUsernameTaken
		}
		return fmt.Errorf("change username: %w", err)
	}
	s.sessions.forgetUser(userID)
	s.InvalidateUser(ctx, userID)
	return nil
}

// ChangePassword stores a new hash and ends every other session.
func (s *Storage) ChangePassword(ctx context.Context, userID, passwordHash, keepToken string) error {
	var ended []string
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model((*User)(nil)).Set("password_hash = ?", passwordHash).Set("updated_at = ?", time.Now().UTC()).
			Where("id = ?", userID).Exec(ctx); err != nil {
			return fmt.Errorf("change password: %w", err)
		}
		var err error
		ended, err = deleteSessionsTx(ctx, tx, userID, sessionID(keepToken))
		return err
	})
	if err != nil {
		return err
	}
	return s.forgetSessions(ctx, ended)
}

// SessionView is one signed-in browser on the account settings page.
type SessionView struct {
	ID         string     `json:"id"`
	Device     string     `json:"device"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	Current    bool       `json:"current"`
}

// SessionsOf lists the user's live sessions, the current one first.
func (s *Storage) SessionsOf(ctx context.Context, userID, currentToken string) ([]SessionView, error) {
	var rows []Session
	if err := s.db.NewSelect().Model(&rows).Where("user_id = ? AND expires_at > ?", userID, time.Now()).
		Order("created_at DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	cur := sessionID(currentToken)
	out := make([]SessionView, 0, len(rows))
	for _, r := range rows {
		v := SessionView{ID: r.ID[:12], Device: DeviceName(r.UserAgent), CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, Current: r.ID == cur}
		if v.LastUsedAt == nil {
			v.LastUsedAt = &r.CreatedAt
		}
		if v.Current {
			out = append([]SessionView{v}, out...)
		} else {
			out = append(out, v)
		}
	}
	return out, nil
}

// TouchSession records that a session was used, at most every five
// minutes (one small conditional update).
func (s *Storage) TouchSession(ctx context.Context, token string, now time.Time) {
	id := sessionID(token)
	if last, ok := s.touched.Load(id); ok && now.Sub(last.(time.Time)) < 5*time.Minute {
		return
	}
	s.touched.Store(id, now)
	_, err := s.db.NewUpdate().Model((*Session)(nil)).Set("last_used_at = ?", now).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", sessionID(token), now.Add(-5*time.Minute)).Exec(ctx)
	if err != nil {
		s.logger.Debug("touch session", "err", err)
	}
}

// DeviceName is a short, human name of a browser from its User-Agent.
func DeviceName(ua string) string {
	browser := "Browser"
	switch {
	case strings.Contains(ua, "Edg/"):
		browser = "Edge"
	case strings.Contains(ua, "Firefox/"):
		browser = "Firefox"
	case strings.Contains(ua, "Chrome/") || strings.Contains(ua, "Chromium/"):
		browser = "Chrome"
	case strings.Contains(ua, "Safari/"):
		browser = "Safari"
	case ua == "":
		return "Unknown device"
	}
	osName := ""
	switch {
	case strings.Contains(ua, "iPhone"):
		osName = "iPhone"
	case strings.Contains(ua, "iPad"):
		osName = "iPad"
	case strings.Contains(ua, "Android"):
		osName = "Android"
	case strings.Contains(ua, "Mac OS X"):
		osName = "macOS"
	case strings.Contains(ua, "Windows"):
		osName = "Windows"
	case strings.Contains(ua, "Linux"):
		osName = "Linux"
	}
	if osName == "" {
		return browser
	}
	return browser + " on " + osName
}
