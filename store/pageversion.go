package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/uptrace/bun"
)

// PageVersion is the counter cached pages of one scope are keyed by: an
// app's id, or GlobalPageScope for what every app shows (a member's
// username or picture next to their posts).
type PageVersion struct {
	bun.BaseModel `bun:"table:page_versions"`

	Scope   string `bun:",pk"`
	Version int64  `bun:",notnull,default:0"`
}

const GlobalPageScope = "*"

// EngagementScope is the version of an app's engagement: reaction, reply
// and member counts, and who follows. Data caches (landing data, lists,
// totals) are keyed by it as well, so they are exact; rendered pages are not:
// they are served while one render replaces them (server/pagecache.go), so
// a busy app's likes do not empty its page cache.
func EngagementScope(appID string) string { return "e:" + appID }

// PostScope is the version of one post's own page: a reply shows on it at
// once, while the rest of the app only sees new counts.
func PostScope(messageID string) string { return "m:" + messageID }

// PageVersionChannel is the Redis channel a bump is announced on, so that
// servers holding versions in memory drop theirs at once.
// It is namespaced like every key (Storage.Namespace): Redis channels are
// shared by every database number of a server and every deployment on it.
func (s *Storage) PageVersionChannel() string {
	if s.Namespace == "" {
		return "marquee:page-versions"
	}
	return "marquee:" + s.Namespace + ":page-versions"
}

// InvalidateApp bumps the page version of an app: every cached page of it,
// for visitors and members, is stale from the next request on. Every write
// that changes what any page of the app shows calls it (through
// InvalidateLanding and its siblings, or directly).
func (s *Storage) InvalidateApp(ctx context.Context, appID string) {
	s.bumpPageVersion(ctx, appID)
}

// NoteEngagement bumps the engagement version of an app: a like, a reply or
// a follow changed counts, which every data cache re-reads at once and the
// cached pages within their staleness bound.
func (s *Storage) NoteEngagement(ctx context.Context, appID string) {
	s.bumpPageVersion(ctx, EngagementScope(appID))
}

// InvalidatePost bumps one post's page version and the app's engagement: a
// reply changes the post's page and a count elsewhere.
func (s *Storage) InvalidatePost(ctx context.Context, appID, messageID string) {
	s.bumpPageVersion(ctx, PostScope(messageID))
	s.NoteEngagement(ctx, appID)
}

// dataVersion is the version part of a data cache key of an app: its page
// version, the global one and its engagement.
func (s *Storage) dataVersion(ctx context.Context, appID string) (string, error) {
	v, err := s.PageVersions(ctx, appID, GlobalPageScope, EngagementScope(appID))
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(v[appID], 10) + "." + strconv.FormatInt(v[GlobalPageScope], 10) + "." +
		strconv.FormatInt(v[EngagementScope(appID)], 10), nil
}

// InvalidateAllApps bumps the version every cached page also carries: for
// writes whose effect crosses apps (a member's picture).
func (s *Storage) InvalidateAllApps(ctx context.Context) {
	s.bumpPageVersion(ctx, GlobalPageScope)
}

func (s *Storage) bumpPageVersion(ctx context.Context, scope string) {
	// Bumped in the database first: that is what a server falls back to when
	// it misses the announcement, so a lost publish costs speed, not truth.
	_, err := s.DB.NewInsert().Model(&PageVersion{Scope: scope, Version: 1}).
		On("CONFLICT (scope) DO UPDATE").Set("version = page_version.version + 1").Exec(ctx)
	if err != nil {
		// The write itself succeeded; a page may stay stale for PageTTL.
		s.Logger.Error("page version bump failed", "scope", scope, "err", err)
	}
	if s.PageBumped != nil {
		s.PageBumped(scope)
	}
	if s.Redis != nil {
		if err := s.Redis.Publish(ctx, s.PageVersionChannel(), scope).Err(); err != nil {
			s.cacheWarn("page version announcement failed", err, "scope", scope)
		}
	}
}

// PageVersions returns the versions of an app and of GlobalPageScope, 0 when
// never bumped.
func (s *Storage) PageVersions(ctx context.Context, scopes ...string) (map[string]int64, error) {
	var rows []PageVersion
	if err := s.DB.NewSelect().Model(&rows).Where("scope IN (?)", bun.In(scopes)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load page versions: %w", err)
	}
	out := make(map[string]int64, len(scopes))
	for _, r := range rows {
		out[r.Scope] = r.Version
	}
	return out, nil
}
