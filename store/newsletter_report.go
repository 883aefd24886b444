package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// NewsletterPostReport is one post on the studio's newsletter screen: a
// draft or scheduled post (which can be mailed to oneself as a test), or a
// published one that was mailed, with how its sending went.
type NewsletterPostReport struct {
	MessageID string `json:"messageId"`
	// Excerpt is the post's first line, shortened.
	Excerpt string `json:"excerpt"`
	// State is DRAFT, SCHEDULED or PUBLISHED.
	State      string     `json:"state"`
	PublishAt  *time.Time `json:"publishAt"`
	CreatedAt  time.Time  `json:"createdAt"`
	Newsletter bool       `json:"newsletter"`
	// Recipients is how many members it was (or is being) mailed to; the
	// rest split them by state. Skipped addresses had become undeliverable.
	Recipients int `json:"recipients"`
	Sent       int `json:"sent"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
	Pending    int `json:"pending"`
	// Unsubscribes is how many recipients left the newsletter from this
	// post's mail.
	Unsubscribes int `json:"unsubscribes"`
}

// Post states on the newsletter screen.
const (
	PostDraft     = "DRAFT"
	PostScheduled = "SCHEDULED"
	PostPublished = "PUBLISHED"
)

// NewsletterReportLimit is how many posts the newsletter screen lists.
const NewsletterReportLimit = 30

// NewsletterReport lists an app's posts that are drafts, scheduled, or were
// mailed, newest first, with their sending counts.
func (s *Storage) NewsletterReport(ctx context.Context, appID string, limit int) ([]NewsletterPostReport, error) {
	var posts []Message
	if err := s.db.NewSelect().Model(&posts).Column("id", "content", "hidden", "publish_at", "newsletter", "created_at").
		Where("app_id = ? AND type = ?", appID, MessagePost).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("hidden IN (?)", bun.List(unpublished)).WhereOr("hidden = '' AND newsletter")
		}).
		OrderExpr("created_at DESC, id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("newsletter report of app %s: list posts: %w", appID, err)
	}
	out := make([]NewsletterPostReport, len(posts))
	index := map[string]int{}
	ids := make([]string, len(posts))
	for i, p := range posts {
		out[i] = NewsletterPostReport{MessageID: p.ID, Excerpt: excerpt(p.Content, 80), State: postState(p.Hidden),
			PublishAt: p.PublishAt, CreatedAt: p.CreatedAt, Newsletter: p.Newsletter}
		index[p.ID], ids[i] = i, p.ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	var counts []struct {
		MessageID    string `bun:"message_id"`
		State        string `bun:"state"`
		N            int    `bun:"n"`
		Unsubscribes int    `bun:"unsubscribes"`
	}
	if err := s.db.NewSelect().Model((*NewsletterRecipient)(nil)).
		ColumnExpr("message_id, state, COUNT(*) AS n, COUNT(unsubscribed_at) AS unsubscribes").
		Where("message_id IN (?)", bun.List(ids)).Group("message_id", "state").Scan(ctx, &counts); err != nil {
		return nil, fmt.Errorf("newsletter report of app %s: count recipients: %w", appID, err)
	}
	for _, c := range counts {
		r := &out[index[c.MessageID]]
		r.Recipients += c.N
		r.Unsubscribes += c.Unsubscribes
		switch c.State {
		case RecipientSent:
			r.Sent += c.N
		case RecipientFailed:
			r.Failed += c.N
		case RecipientSkipped:
			r.Skipped += c.N
		default: // pending or being sent
			r.Pending += c.N
		}
	}
	return out, nil
}

func postState(hidden string) string {
	switch hidden {
	case HiddenDraft:
		return PostDraft
	case HiddenScheduled:
		return PostScheduled
	}
	return PostPublished
}

// excerpt is the first line of text, cut at max runes with an ellipsis.
func excerpt(text string, max int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	r := []rune(strings.TrimSpace(line))
	if len(r) <= max {
		return string(r)
	}
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

// UndeliverableMember is a member of an app whose address has failed
// permanently too often: every send skips it until it is fixed.
type UndeliverableMember struct {
	Username  string    `json:"username"`
	Email     string    `json:"email"`
	Bounces   int       `json:"bounces"`
	LastError string    `json:"lastError"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// UndeliverableMembers lists the app's members whose address is
// undeliverable, most recent failure first.
func (s *Storage) UndeliverableMembers(ctx context.Context, appID string, limit int) ([]UndeliverableMember, error) {
	out := []UndeliverableMember{}
	if err := s.db.NewSelect().TableExpr("mail_bounces AS b").
		Join("JOIN users AS u ON u.email = b.email").
		Join("JOIN memberships AS ms ON ms.user_id = u.id AND ms.app_id = ?", appID).
		ColumnExpr("u.username, b.email, b.bounces, b.last_error, b.updated_at").
		Where("b.undeliverable AND u.deleted_at IS NULL").
		OrderExpr("b.updated_at DESC, b.email").Limit(int64(limit)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("undeliverable members of app %s: %w", appID, err)
	}
	return out, nil
}

// JobNewsletterTest mails a post, marked as a test, to one address.
const JobNewsletterTest = "newsletter_test"

// NewsletterTestJob is a test mail of a post to its sender or an admin.
type NewsletterTestJob struct {
	MessageID string `json:"messageId"`
	To        string `json:"to"`
}

// QueueNewsletterTest queues a test mail of one of the app's posts (a draft,
// a scheduled or a published post) to the address to.
func (s *Storage) QueueNewsletterTest(ctx context.Context, appID, messageID, to string) error {
	n, err := s.db.NewSelect().Model((*Message)(nil)).Where("id = ? AND app_id = ? AND type = ?", messageID, appID, MessagePost).Count(ctx)
	if err != nil {
		return fmt.Errorf("newsletter test of %s: %w", messageID, err)
	}
	if n == 0 {
		return &ErrInvalid{Msg: "Post not found", Field: "messageId"}
	}
	if to == "" {
		return &ErrInvalid{Msg: "Your account has no e-mail address to send the test to"}
	}
	return enqueue(ctx, s.db, JobNewsletterTest, NewsletterTestJob{MessageID: messageID, To: to})
}
