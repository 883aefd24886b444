package store

import (
	"context"
	"fmt"
	netmail "net/mail"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// NewsletterRecipient is one member a post is mailed to: written once per
// post and member (newsletter_recipients_once), so however often the jobs
// run each member gets the post once. State moves PENDING -> SENDING (just
// before the SMTP transaction) -> SENT, FAILED or SKIPPED; a temporary
// failure goes back to PENDING until NextAttemptAt.
type NewsletterRecipient struct {
	bun.BaseModel `bun:"table:newsletter_recipients"`

	ID               string     `bun:",pk" json:"-"`
	AppID            string     `bun:",notnull" json:"-"`
	MessageID        string     `bun:",notnull,unique:newsletter_recipients_once" json:"-"`
	UserID           string     `bun:",notnull,unique:newsletter_recipients_once" json:"-"`
	Email            string     `bun:",notnull" json:"email"`
	State            string     `bun:",notnull,default:'PENDING'" json:"state"`
	Attempts         int        `bun:",notnull,default:0" json:"attempts"`
	LastError        string     `bun:",notnull,default:''" json:"lastError"`
	UnsubscribeToken string     `bun:",notnull,unique" json:"-"`
	NextAttemptAt    *time.Time `json:"-"`
	ClaimedAt        *time.Time `json:"-"`
	SentAt           *time.Time `json:"sentAt"`
	UnsubscribedAt   *time.Time `json:"-"`
	CreatedAt        time.Time  `bun:",notnull,default:current_timestamp" json:"-"`
}

// MailBounce counts an address's permanent delivery failures (SMTP 5xx);
// after BounceLimit of them it is undeliverable and skipped by every send.
type MailBounce struct {
	bun.BaseModel `bun:"table:mail_bounces"`

	Email         string    `bun:",pk" json:"email"`
	Bounces       int       `bun:",notnull,default:0" json:"bounces"`
	Undeliverable bool      `bun:",notnull,default:false" json:"undeliverable"`
	LastError     string    `bun:",notnull,default:''" json:"lastError"`
	UpdatedAt     time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

// NewsletterPace is the one row every instance reserves send slots from, so
// NEWSLETTER_RATE holds for the deployment, not per process.
type NewsletterPace struct {
	bun.BaseModel `bun:"table:newsletter_pace"`

	ID     int64 `bun:",pk"`
	NextNs int64 `bun:",notnull,default:0"`
}

// Recipient states.
const (
	RecipientPending = "PENDING"
	RecipientSending = "SENDING"
	RecipientSent    = "SENT"
	RecipientFailed  = "FAILED"
	RecipientSkipped = "SKIPPED" // the address was undeliverable by then
)

// KindNewsletter is the e-mail switch of an app's newsletter (the members'
// e-mail settings and the newsletter's one-click unsubscribe).
const KindNewsletter = "NEWSLETTER"

// EmailKinds are the kinds of e-mail a member can switch off in an app.
var EmailKinds = append(append([]string{}, NotificationKinds...), KindNewsletter)

const (
	// BounceLimit permanent failures make an address undeliverable.
	BounceLimit = 3
	// MaxSendAttempts bounds the tries of one recipient (temporary failures
	// are retried with back-off until then).
	MaxSendAttempts = 5
)

// The newsletter's jobs: start selects the recipients, send mails them.
const (
	JobNewsletterStart = "newsletter_start"
	JobNewsletterSend  = "newsletter_send"
)

// NewsletterJob names the post a newsletter job works on.
type NewsletterJob struct {
	MessageID string `json:"messageId"`
}

// queueNewsletter starts mailing a published post to the app's members, in
// the transaction that publishes it.
func queueNewsletter(ctx context.Context, tx bun.Tx, m *Message) error {
	return enqueue(ctx, tx, JobNewsletterStart, NewsletterJob{MessageID: m.ID})
}

// NewsletterAudience says who may read a mailed post. It is decided by
// server/access (the one rule of who reads what) and applied here in SQL.
type NewsletterAudience struct {
	// SubscribersOnly: only members with a valid subscription, and the
	// app's staff, may read it (the app-wide subscription gate).
	SubscribersOnly bool
	// MinTierID: only members holding that tier or a higher one (the
	// post's access, message_access.go), and the staff.
	MinTierID *string
}

// inAudience keeps the members (ms) of q that audience lets read.
func (s *Storage) inAudience(q *bun.SelectQuery, audience NewsletterAudience, now time.Time) *bun.SelectQuery {
	if !audience.SubscribersOnly && audience.MinTierID == nil {
		return q
	}
	sub := validSubscription(s.db.NewSelect().TableExpr("subscriptions").ColumnExpr("1").
		Where("subscriptions.app_id = ms.app_id AND subscriptions.user_id = ms.user_id"), now, s.GracePeriod())
	if audience.MinTierID != nil {
		// A tier's post: that tier or a higher one (message_access.go).
		sub = sub.Where(`subscriptions.plan_id IN (SELECT tp.id FROM subscription_plans AS tp WHERE tp.app_id = ms.app_id
			AND tp.tier_rank >= COALESCE((SELECT mt.tier_rank FROM subscription_plans AS mt WHERE mt.id = ?), ?))`, *audience.MinTierID, missingTierRank)
	}
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("ms.role IN (?)", bun.List([]string{RoleModerator, RoleAdmin, RoleCreator})).WhereOr("EXISTS (?)", sub)
	})
}

type newsletterMember struct {
	UserID string `bun:"user_id"`
	Email  string `bun:"email"`
}

// SelectNewsletterRecipients writes a recipient row for every member of the
// post's app in audience who has an address, has not switched the app's
// newsletter (or all its e-mail) off and whose address is not
// undeliverable; the post's author gets none. Rows already written stay as
// they are, so a second run adds nothing. It answers the post's recipients.
func (s *Storage) SelectNewsletterRecipients(ctx context.Context, m *Message, audience NewsletterAudience) (int, error) {
	now := time.Now().UTC()
	q := s.db.NewSelect().TableExpr("memberships AS ms").Join("JOIN users AS u ON u.id = ms.user_id").
		ColumnExpr("ms.user_id, u.email").
		Where("ms.app_id = ? AND ms.user_id <> ?", m.AppID, m.SenderID).
		Where("u.deleted_at IS NULL AND u.disabled_at IS NULL AND u.email <> ''").
		// A member who takes the weekly digest gets the post in it instead.
		Where(`NOT EXISTS (SELECT 1 FROM notification_preferences AS p WHERE p.app_id = ms.app_id AND p.user_id = ms.user_id
			AND (p.email_muted_all OR p.email_muted_kinds LIKE ? OR p.email_digest))`, "%,"+KindNewsletter+",%").
		Where("NOT EXISTS (SELECT 1 FROM mail_bounces AS b WHERE b.email = u.email AND b.undeliverable)").
		Where(reachesWhileUnpublished("ms"))
	q = s.inAudience(q, audience, now)
	var members []newsletterMember
	if err := q.OrderExpr("ms.user_id").Scan(ctx, &members); err != nil {
		return 0, fmt.Errorf("newsletter %s: select recipients: %w", m.ID, err)
	}
	for start := 0; start < len(members); start += 500 {
		end := min(start+500, len(members))
		rows := make([]NewsletterRecipient, 0, end-start)
		for _, mb := range members[start:end] {
			rows = append(rows, NewsletterRecipient{ID: NewID(), AppID: m.AppID, MessageID: m.ID, UserID: mb.UserID, Email: mb.Email,
				State: RecipientPending, UnsubscribeToken: NewSessionToken(), CreatedAt: now})
		}
		if _, err := s.db.NewInsert().Model(&rows).On("CONFLICT (message_id, user_id) DO NOTHING").Exec(ctx); err != nil {
			return 0, fmt.Errorf("newsletter %s: write recipients: %w", m.ID, err)
		}
	}
	n, err := s.db.NewSelect().Model((*NewsletterRecipient)(nil)).Where("message_id = ?", m.ID).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("newsletter %s: count recipients: %w", m.ID, err)
	}
	return int(n), nil
}

// NewsletterBatch lists up to limit recipients of a post ready to be sent
// at now (pending, their back-off over), with whether each address has
// become undeliverable since it was selected.
func (s *Storage) NewsletterBatch(ctx context.Context, messageID string, now time.Time, limit int) ([]NewsletterRecipient, map[string]bool, error) {
	var rows []NewsletterRecipient
	if err := s.db.NewSelect().Model(&rows).Where("message_id = ? AND state = ?", messageID, RecipientPending).
		Where("(next_attempt_at IS NULL OR next_attempt_at <= ?)", now.UTC()).OrderExpr("id").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("newsletter %s: next batch: %w", messageID, err)
	}
	dead := map[string]bool{}
	if len(rows) > 0 {
		emails := make([]string, len(rows))
		for i, r := range rows {
			emails[i] = r.Email
		}
		var undeliverable []string
		if err := s.db.NewSelect().Model((*MailBounce)(nil)).Column("email").Where("email IN (?) AND undeliverable", bun.List(emails)).
			Scan(ctx, &undeliverable); err != nil {
			return nil, nil, fmt.Errorf("newsletter %s: undeliverable addresses: %w", messageID, err)
		}
		for _, e := range undeliverable {
			dead[e] = true
		}
	}
	return rows, dead, nil
}

// ClaimRecipient marks a pending recipient as being sent, just before its
// SMTP transaction; false when another worker took it first. A recipient
// left SENDING by a crash is never sent again (InterruptStale): nothing is
// sent twice.
func (s *Storage) ClaimRecipient(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := s.db.NewUpdate().Model((*NewsletterRecipient)(nil)).Set("state = ?", RecipientSending).
		Set("claimed_at = ?", now.UTC()).Set("attempts = attempts + 1").
		Where("id = ? AND state = ?", id, RecipientPending).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("claim newsletter recipient: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SetRecipientState records how a claimed recipient's send ended: SENT,
// SKIPPED, FAILED, or PENDING again at retryAt (a temporary failure).
func (s *Storage) SetRecipientState(ctx context.Context, id, state, lastError string, retryAt *time.Time, now time.Time) error {
	q := s.db.NewUpdate().Model((*NewsletterRecipient)(nil)).Set("state = ?", state).Set("last_error = ?", lastError).
		Set("next_attempt_at = ?", retryAt).Where("id = ?", id)
	if state == RecipientSent {
		q = q.Set("sent_at = ?", now.UTC())
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("newsletter recipient %s: %w", state, err)
	}
	return nil
}

// SkipRecipient marks a pending recipient whose address became
// undeliverable as skipped.
func (s *Storage) SkipRecipient(ctx context.Context, id string) error {
	if _, err := s.db.NewUpdate().Model((*NewsletterRecipient)(nil)).Set("state = ?", RecipientSkipped).
		Set("last_error = ?", "undeliverable address").Where("id = ? AND state = ?", id, RecipientPending).Exec(ctx); err != nil {
		return fmt.Errorf("skip newsletter recipient: %w", err)
	}
	return nil
}

// RecordBounce counts a permanent failure of an address; the BounceLimit-th
// makes it undeliverable. It answers whether the address is now.
func (s *Storage) RecordBounce(ctx context.Context, email, lastError string, now time.Time) (bool, error) {
	var undeliverable bool
	err := s.db.NewRaw(`INSERT INTO mail_bounces (email, bounces, undeliverable, last_error, updated_at) VALUES (?, 1, ?, ?, ?)
		ON CONFLICT (email) DO UPDATE SET bounces = mail_bounces.bounces + 1, undeliverable = (mail_bounces.bounces + 1 >= ?),
		last_error = EXCLUDED.last_error, updated_at = EXCLUDED.updated_at RETURNING undeliverable`,
		email, BounceLimit <= 1, lastError, now.UTC(), BounceLimit).Scan(ctx, &undeliverable)
	if err != nil {
		return false, fmt.Errorf("record bounce: %w", err)
	}
	return undeliverable, nil
}

// InterruptStale fails the recipients of a post left SENDING since before
// (their worker died mid-send): whether the SMTP server took the mail is
// unknown, so it is not sent again, and the creator sees them as failed.
func (s *Storage) InterruptStale(ctx context.Context, messageID string, before time.Time) (int, error) {
	res, err := s.db.NewUpdate().Model((*NewsletterRecipient)(nil)).Set("state = ?", RecipientFailed).
		Set("last_error = ?", "interrupted mid-send (not sent again, so that no one gets it twice)").
		Where("message_id = ? AND state = ? AND claimed_at < ?", messageID, RecipientSending, before.UTC()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("newsletter %s: interrupted sends: %w", messageID, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// NewsletterWaiting answers when a post's next pending recipient may be
// tried (nil when none is pending).
func (s *Storage) NewsletterWaiting(ctx context.Context, messageID string) (*time.Time, error) {
	var rows []NewsletterRecipient
	if err := s.db.NewSelect().Model(&rows).Column("next_attempt_at").Where("message_id = ? AND state = ?", messageID, RecipientPending).
		OrderExpr("next_attempt_at ASC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("newsletter %s: waiting: %w", messageID, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	if rows[0].NextAttemptAt == nil {
		now := time.Now().UTC()
		return &now, nil
	}
	return rows[0].NextAttemptAt, nil
}

// ReserveSendSlot takes the deployment's next send slot of length interval
// and answers when it starts: the caller sends then, so every instance
// together sends at most one mail per interval.
func (s *Storage) ReserveSendSlot(ctx context.Context, interval time.Duration, now time.Time) (time.Time, error) {
	var end int64
	n := now.UnixNano()
	if err := s.db.NewRaw(`UPDATE newsletter_pace SET next_ns = (CASE WHEN next_ns > ? THEN next_ns ELSE ? END) + ? WHERE id = 1 RETURNING next_ns`,
		n, n, int64(interval)).Scan(ctx, &end); err != nil {
		return time.Time{}, fmt.Errorf("reserve a newsletter send slot: %w", err)
	}
	return time.Unix(0, end-int64(interval)), nil
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
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID)
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
	return nil
}
