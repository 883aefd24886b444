package store

import (
	"context"
	"fmt"
	"time"
)

// SitemapLimit caps each list of a sitemap or feed: the sitemap protocol
// allows 50,000 URLs a file, and the newest pages matter most to a crawler.
const SitemapLimit = 5000

// SitemapApp is an app listed in the sitemap index.
type SitemapApp struct {
	Name      string    `bun:"name"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// SitemapApps lists the apps every visitor may open, by name.
func (s *Storage) SitemapApps(ctx context.Context) ([]SitemapApp, error) {
	apps := []SitemapApp{}
	if err := s.db.NewSelect().Model((*App)(nil)).Column("name", "updated_at").Where("status = ? AND NOT unpublished", "PUBLIC").
		Order("name ASC").Limit(SitemapLimit).Scan(ctx, &apps); err != nil {
		return nil, fmt.Errorf("list sitemap apps: %w", err)
	}
	return apps, nil
}

// SitemapPage is one page of an app's content: its id, when it last
// changed, and for feeds its text and time of publication.
type SitemapPage struct {
	ID        string    `bun:"id"`
	Title     string    `bun:"title"`
	Content   string    `bun:"content"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// PublicPosts lists an app's posts (not stories or replies), newest first:
// what its community page shows a visitor, for the sitemap and the feed.
func (s *Storage) PublicPosts(ctx context.Context, appID string, limit int) ([]SitemapPage, error) {
	pages := []SitemapPage{}
	if err := s.db.NewSelect().Model((*Message)(nil)).Column("id", "content", "created_at", "updated_at").
		Where("app_id = ? AND type = ? AND parent_message_id IS NULL AND hidden = ''", appID, "POST").
		// Only what a visitor may read (message_access.go): a locked post
		// is in neither the sitemap nor the Atom feed.
		Where("access_audience = ?", AccessPublic).
		Order("created_at DESC", "id DESC").Limit(int64(limit)).Scan(ctx, &pages); err != nil {
		return nil, fmt.Errorf("list public posts of %s: %w", appID, err)
	}
	return pages, nil
}

// SitemapItems lists an app's live store items, newest change first; tiers
// are not store items (the membership page lists those on sale).
func (s *Storage) SitemapItems(ctx context.Context, appID string) ([]SitemapPage, error) {
	pages := []SitemapPage{}
	if err := s.db.NewSelect().Model((*StoreItem)(nil)).ColumnExpr("id, name AS title, created_at, updated_at").
		Where("app_id = ? AND deleted_at IS NULL AND type <> ?", appID, ItemSubscription).
		Order("updated_at DESC", "id DESC").Limit(SitemapLimit).Scan(ctx, &pages); err != nil {
		return nil, fmt.Errorf("list sitemap items of %s: %w", appID, err)
	}
	return pages, nil
}

// SitemapEvents lists an app's events, newest change first.
func (s *Storage) SitemapEvents(ctx context.Context, appID string) ([]SitemapPage, error) {
	pages := []SitemapPage{}
	if err := s.db.NewSelect().Model((*Event)(nil)).ColumnExpr("id, name AS title, created_at, updated_at").
		Where("app_id = ? AND hidden = ''", appID).
		Order("updated_at DESC", "id DESC").Limit(SitemapLimit).Scan(ctx, &pages); err != nil {
		return nil, fmt.Errorf("list sitemap events of %s: %w", appID, err)
	}
	return pages, nil
}

// AppUpdatedAt is when the app's own row (settings, bio, media) last changed.
func (s *Storage) AppUpdatedAt(ctx context.Context, appID string) (time.Time, error) {
	var at time.Time
	if err := s.db.NewSelect().Model((*App)(nil)).Column("updated_at").Where("id = ?", appID).Scan(ctx, &at); err != nil {
		return time.Time{}, fmt.Errorf("load app %s updated_at: %w", appID, err)
	}
	return at, nil
}
