package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// A post saved for later is hidden for one of these reasons until it is
// published: hidden content is left out of every list and shown only to its
// author and the app's moderators (as moderation's Hidden* are), so a draft
// reaches nobody else by any path (pages, API, feed, search, sitemap,
// notifications, shared page caches).
const (
	HiddenDraft     = "DRAFT"     // saved, not published
	HiddenScheduled = "SCHEDULED" // published by a job at PublishAt
)

// Unpublished reports whether hidden is a draft's or a scheduled post's.
func Unpublished(hidden string) bool { return hidden == HiddenDraft || hidden == HiddenScheduled }

var unpublished = []string{HiddenDraft, HiddenScheduled}

// PublishMessage publishes a draft or a scheduled post now: it is shown,
// dated now (so it tops the feed), announced as a new post was (announce:
// access.AnnouncesToMembers of its author) and, when it asks for it,
// mailed to the app's members, all in one transaction. It answers false
// when the post was published already (a second job, a second click): the
// conditional update lets exactly one caller publish it.
func (s *Storage) PublishMessage(ctx context.Context, m *Message, announce bool, now time.Time) (bool, error) {
	now = now.UTC()
	published := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Message)(nil)).Set("hidden = ''").Set("publish_at = NULL").
			Set("created_at = ?", now).Set("updated_at = ?", now).
			Where("id = ? AND hidden IN (?)", m.ID, bun.List(unpublished)).Exec(ctx)
		if err != nil {
			return fmt.Errorf("publish message %s: %w", m.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		published = true
		m.Hidden, m.PublishAt, m.CreatedAt, m.UpdatedAt = "", nil, now, now
		return publishedNotices(ctx, tx, m, announce)
	})
	if err != nil || !published {
		return false, err
	}
	s.forgetFeedTotal(ctx, m.CommunityID, m.Type)
	s.InvalidateLanding(ctx, m.AppID)
	return true, nil
}

// publishedNotices is what a post's publication causes, whether at once
// or later: the new-post notice and, when asked for, the newsletter.
func publishedNotices(ctx context.Context, tx bun.Tx, m *Message, announce bool) error {
	if err := messageNotices(ctx, tx, m, announce); err != nil {
		return err
	}
	if m.Newsletter && m.Type == MessagePost {
		return queueNewsletter(ctx, tx, m)
	}
	return nil
}

// DueScheduled lists the scheduled posts whose time has come, oldest first.
func (s *Storage) DueScheduled(ctx context.Context, now time.Time, limit int) ([]Message, error) {
	var due []Message
	if err := s.db.NewSelect().Model(&due).Where("hidden = ? AND publish_at <= ?", HiddenScheduled, now.UTC()).
		OrderExpr("publish_at ASC, id ASC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list due scheduled posts: %w", err)
	}
	return due, nil
}
