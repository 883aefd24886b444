package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// listCacheTTL bounds a cached list page's life: the versions in its key
// make it exact, the TTL keeps signed media URLs inside it fresh.
const listCacheTTL = 5 * time.Minute

// cachedList loads one page of a list (feed, store grid, events) through the
// cache, keyed by the app's, the global and the engagement versions (a list
// prints counts): every write that changes what the app's pages show bumps
// one of them (InvalidateApp, InvalidateAllApps, NoteEngagement), so a
// cached list is never stale. A hit costs one primary-key lookup and a
// decode instead of the list's seven or so queries. out must be a pointer
// whose value round-trips through JSON; viewer-specific fields are filled
// by the caller afterwards, never cached.
func (s *Storage) cachedList(ctx context.Context, appID, key string, out any, load func(context.Context) error) error {
	v, err := s.dataVersion(ctx, appID)
	if err != nil {
		return load(ctx)
	}
	return s.cachedListAt(ctx, appID, v, key, out, load)
}

// cachedListAt is cachedList under a version the caller read: the content
// version alone for a list whose counts are laid over it per engagement
// version (CommunityFeed).
//
// One load per key at a time in this process: after a write every request
// of the app wants the same page, and fifty loads of it were the cost. The
// caller that loads fills its own out; the others decode what it loaded.
func (s *Storage) cachedListAt(ctx context.Context, appID, v, key string, out any, load func(context.Context) error) error {
	full := "list:" + appID + ":" + v + ":" + key
	if b, ok, err := s.cache.Get(ctx, full); err == nil && ok {
		if json.Unmarshal(b, out) == nil {
			return nil
		}
	}
	loaded := false
	got, err, _ := s.listBuilds.Do(full, func() (any, error) {
		loaded = true
		// Shared by every caller waiting: one caller's cancellation must
		// not fail the others.
		if err := load(context.WithoutCancel(ctx)); err != nil {
			return nil, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode list page: %w", err)
		}
		if err := s.cache.Set(ctx, full, b, listCacheTTL); err != nil {
			s.cacheWarn("list page not cached", err, "app", appID)
		}
		return b, nil
	})
	if err != nil || loaded {
		return err
	}
	if err := json.Unmarshal(got.([]byte), out); err != nil {
		return fmt.Errorf("decode list page: %w", err)
	}
	return nil
}
