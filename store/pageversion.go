package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
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

// PageVersionChannel is the Redis channel a bump is announced on, so that
// servers holding versions in memory drop theirs at once. It is namespaced
// like every key (Storage.Namespace): Redis channels are shared by every
// database number of a server and every deployment using it.
func (s *Storage) PageVersionChannel() string {
	if s.Namespace == "" {
		return "marquee:page-versions"
	}
	return "marquee:" + s.Namespace + ":page-versions"
}

const (
	// VersionTrust is how long a version learned from the database is used
	// without asking again while Redis announces bumps. Without Redis (or
	// while its subscription is down) it is UnannouncedTrust: this
	// process's own writes still show at once (a bump forgets the version
	// it moved), another process's (the CLI's) within that second. Asking
	// the database on every request instead serialised visitors on
	// SQLite's connection (scripts/bench).
	VersionTrust     = 5 * time.Second
	UnannouncedTrust = time.Second
)

// Versions are the page versions every cache key of an app carries: the
// app's and the global one.
type Versions struct{ App, Global int64 }

// Key is "app.global", the version part of a cache key.
func (v Versions) Key() string {
	return strconv.FormatInt(v.App, 10) + "." + strconv.FormatInt(v.Global, 10)
}

// pageVersions is the one owner of page versions in a process: what it
// learned from the database and for how long to trust it, and whether
// Redis is announcing bumps (WatchPageVersions). The page cache, the
// landing data and the list caches all key by what it answers.
type pageVersions struct {
	mu sync.Mutex
	// live: subscribed to the channel, so known versions are dropped as
	// soon as they are bumped. gen counts drops, so a database read that
	// raced a bump is not remembered.
	live  bool
	gen   uint64
	known map[string]knownVersion
}

type knownVersion struct {
	version int64
	at      time.Time
}

func (s *Storage) pv() *pageVersions {
	s.versionsOnce.Do(func() { s.versions = &pageVersions{known: map[string]knownVersion{}} })
	return s.versions
}

// CurrentVersions answers the versions of an app and of GlobalPageScope,
// from memory while they are trusted, from the database otherwise.
func (s *Storage) CurrentVersions(ctx context.Context, appID string) (Versions, error) {
	pv := s.pv()
	now := time.Now()
	pv.mu.Lock()
	app, okApp := pv.known[appID]
	global, okGlobal := pv.known[GlobalPageScope]
	trust := UnannouncedTrust
	if pv.live {
		trust = VersionTrust
	}
	fresh := okApp && okGlobal && now.Sub(app.at) < trust && now.Sub(global.at) < trust
	gen := pv.gen
	pv.mu.Unlock()
	if fresh {
		return Versions{app.version, global.version}, nil
	}
	got, err := s.PageVersions(ctx, appID, GlobalPageScope)
	if err != nil {
		return Versions{}, err
	}
	pv.mu.Lock()
	if pv.gen == gen {
		pv.known[appID] = knownVersion{got[appID], now}
		pv.known[GlobalPageScope] = knownVersion{got[GlobalPageScope], now}
	}
	pv.mu.Unlock()
	return Versions{got[appID], got[GlobalPageScope]}, nil
}

// PageVersionsLive reports whether bumps are being announced to this
// process (WatchPageVersions is subscribed).
func (s *Storage) PageVersionsLive() bool {
	pv := s.pv()
	pv.mu.Lock()
	defer pv.mu.Unlock()
	return pv.live
}

func (pv *pageVersions) forget(scope string, live *bool) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	pv.gen++
	if live != nil {
		pv.live = *live
	}
	if scope == "" || scope == GlobalPageScope {
		clear(pv.known)
		return
	}
	delete(pv.known, scope)
}

// WatchPageVersions listens for version bumps on Redis until ctx ends, so
// cache keys cost no database read per request. Without it every request
// reads the versions from the database, which is always correct.
func (s *Storage) WatchPageVersions(ctx context.Context) {
	if s.Redis == nil {
		return
	}
	pv := s.pv()
	on, off := true, false
	for ctx.Err() == nil {
		ps := s.Redis.Subscribe(ctx, s.PageVersionChannel())
		for {
			msg, err := ps.Receive(ctx)
			if err != nil {
				// Bumps may be missed from now on: ask the database per
				// request until subscribed again.
				pv.forget("", &off)
				break
			}
			switch m := msg.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					pv.forget("", &on)
				}
			case *redis.Message:
				pv.forget(m.Payload, &on)
			}
		}
		ps.Close()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// InvalidateApp bumps the page version of an app: every cached page of it,
// for visitors and members, is stale from the next request on. Every write
// that changes what any page of the app shows calls it (through
// InvalidateLanding and its siblings, or directly).
func (s *Storage) InvalidateApp(ctx context.Context, appID string) {
	s.bumpPageVersion(ctx, appID)
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
	// This process's own writes show on its next request, without waiting
	// for the announcement to come back.
	s.pv().forget(scope, nil)
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
