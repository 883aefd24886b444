package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// The weekly digest (issue 44): a member who chooses it (per app,
// NotificationPreference.EmailDigest) gets one mail a week, at the app's
// digest day and hour in the app's time zone, with the posts and events
// that were new in the week before and that they may read, instead of a
// newsletter mail for each post. A week with nothing new sends nothing.

// MailDigest is the weekly digest's mail kind.
const MailDigest = "DIGEST"

// DigestLateness bounds how long after its time a digest still goes out
// (the queue was down, or busy): a week whose time passed longer ago is not
// sent late, so turning the digest on mid-week waits for the next one.
const DigestLateness = 6 * time.Hour

// Digest limits: a digest lists at most this many posts and events.
const (
	digestPosts  = 20
	digestEvents = 10
)

// DigestSlot is the latest digest time of settings at or before now, in
// loc: the week that ends then is the one the digest tells about.
func DigestSlot(n NewsletterSettings, loc *time.Location, now time.Time) time.Time {
	t := now.In(loc)
	slot := time.Date(t.Year(), t.Month(), t.Day(), n.DigestHour, 0, 0, 0, loc)
	slot = slot.AddDate(0, 0, -((int(t.Weekday()) - n.DigestDay + 7) % 7))
	if slot.After(t) {
		slot = slot.AddDate(0, 0, -7)
	}
	return slot
}

// SetEmailDigest turns a member's weekly digest in an app on or off,
// keeping their other switches.
func (s *Storage) SetEmailDigest(ctx context.Context, appID, userID string, on bool) (*NotificationPreference, error) {
	p := &NotificationPreference{AppID: appID, UserID: userID, EmailDigest: on, UpdatedAt: time.Now().UTC()}
	if _, err := s.db.NewInsert().Model(p).On("CONFLICT (app_id, user_id) DO UPDATE").
		Set("email_digest = EXCLUDED.email_digest, updated_at = EXCLUDED.updated_at").Exec(ctx); err != nil {
		return nil, fmt.Errorf("save e-mail digest choice: %w", err)
	}
	return s.NotificationPreferences(ctx, appID, userID)
}

// AppsWithDigests lists the apps where some member takes the digest.
func (s *Storage) AppsWithDigests(ctx context.Context) ([]string, error) {
	var ids []string
	if err := s.db.NewSelect().Model((*NotificationPreference)(nil)).Distinct().Column("app_id").
		Where("email_digest").Order("app_id").Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("apps with digests: %w", err)
	}
	return ids, nil
}

// QueueDigests writes the digest mails of app that are due at now, each
// with its send job in one transaction; a mail's key names the app, the
// member and the week, so running it again (another instance, a retry)
// writes none twice. audience is who may read the app's posts
// (server/access decides, as for the newsletter). It answers how many
// mails it wrote.
func (s *Storage) QueueDigests(ctx context.Context, app *App, audience NewsletterAudience, now time.Time) (int, error) {
	slot := DigestSlot(app.Settings.Newsletter, app.Settings.Basic.Location(), now)
	if now.Sub(slot) > DigestLateness {
		return 0, nil
	}
	from := slot.AddDate(0, 0, -7)
	content, err := s.digestContent(ctx, app, from, slot)
	if err != nil || content == nil {
		return 0, err
	}
	q := s.db.NewSelect().TableExpr("memberships AS ms").Join("JOIN users AS u ON u.id = ms.user_id").
		Join("JOIN notification_preferences AS p ON p.app_id = ms.app_id AND p.user_id = ms.user_id").
		ColumnExpr("ms.user_id, u.email").
		Where("ms.app_id = ? AND p.email_digest AND NOT p.email_muted_all", app.ID).
		Where("u.deleted_at IS NULL AND u.disabled_at IS NULL AND u.email <> ''").
		Where("NOT EXISTS (SELECT 1 FROM mail_bounces AS b WHERE b.email = u.email AND b.undeliverable)")
	var members []newsletterMember
	if err := s.inAudience(q, audience, now).OrderExpr("ms.user_id").Scan(ctx, &members); err != nil {
		return 0, fmt.Errorf("digest of app %s: select members: %w", app.ID, err)
	}
	week := slot.UTC().Format(time.RFC3339)
	queued := 0
	for _, m := range members {
		err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			ok, err := QueueMail(ctx, tx, OutgoingMail{Key: "digest:" + app.ID + ":" + m.UserID + ":" + week, Kind: MailDigest,
				AppID: app.ID, UserID: m.UserID, To: m.Email, Content: *content})
			if ok {
				queued++
			}
			return err
		})
		if err != nil {
			return queued, fmt.Errorf("digest of app %s: %w", app.ID, err)
		}
	}
	return queued, nil
}

// digestContent is the digest of app for the week [from, to): its new
// posts and events, or nil when there are none.
func (s *Storage) digestContent(ctx context.Context, app *App, from, to time.Time) (*MailContent, error) {
	var posts []Message
	if err := s.db.NewSelect().Model(&posts).Column("id", "content").
		Where("app_id = ? AND type = ? AND hidden = '' AND created_at >= ? AND created_at < ?", app.ID, MessagePost, from.UTC(), to.UTC()).
		OrderExpr("created_at ASC, id ASC").Limit(digestPosts).Scan(ctx); err != nil {
		return nil, fmt.Errorf("digest of app %s: posts: %w", app.ID, err)
	}
	var events []Event
	if err := s.db.NewSelect().Model(&events).Column("id", "name", "start_date").
		Where("app_id = ? AND hidden = '' AND created_at >= ? AND created_at < ?", app.ID, from.UTC(), to.UTC()).
		OrderExpr("start_date ASC, id ASC").Limit(digestEvents).Scan(ctx); err != nil {
		return nil, fmt.Errorf("digest of app %s: events: %w", app.ID, err)
	}
	if len(posts) == 0 && len(events) == 0 {
		return nil, nil
	}
	name := app.Settings.Basic.Title(app.Name)
	base := "/apps/" + app.Name
	c := &MailContent{Subject: "This week in " + name, Heading: "This week in " + name,
		Paragraphs: []string{digestSummary(len(posts), len(events)) + " since " + from.In(app.Settings.Basic.Location()).Format("Monday, January 2") + "."},
		Action:     &MailLink{Label: "Open " + name, Path: base},
		Note:       "You get this digest once a week instead of a mail for each post. Change it in your notification settings."}
	for _, p := range posts {
		label := excerpt(p.Content, 80)
		if label == "" {
			label = "A new post"
		}
		c.Links = append(c.Links, MailLink{Label: label, Path: base + "/posts/" + p.ID})
	}
	for _, e := range events {
		c.Links = append(c.Links, MailLink{Label: e.Name + " · " + e.StartDate.In(app.Settings.Basic.Location()).Format("Mon Jan 2, 15:04"),
			Path: base + "/events/" + e.ID})
	}
	return c, nil
}

func digestSummary(posts, events int) string {
	count := func(n int, one string) string {
		if n == 1 {
			return "1 new " + one
		}
		return strconv.Itoa(n) + " new " + one + "s"
	}
	switch {
	case events == 0:
		return count(posts, "post")
	case posts == 0:
		return count(events, "event")
	}
	return count(posts, "post") + " and " + count(events, "event")
}
