package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"golang.org/x/sync/singleflight"
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
func EngagementScope(appID string) string { return engagementPrefix + appID }

const engagementPrefix = "e:"

// PostScope is the version of one post's own page: a reply shows on it at
// once, while the rest of the app only sees new counts.
func PostScope(messageID string) string { return "m:" + messageID }

// MemberScope is the version of one member's standing in an app: every
// write that changes it (a follow, a role, a membership joined, moved,
// lapsed or given, a ban lifted) bumps it with its commit (memberChanged).
// The page cache keys what it remembers of a member's class by it and by
// the content version, so a like, which moves the engagement, leaves every
// member's class remembered.
func MemberScope(appID, userID string) string { return "u:" + appID + ":" + userID }

// PageVersionChannel is the Redis channel a bump is announced on, so that
// servers holding versions in memory drop theirs at once. It is namespaced
// like every key (Storage.Namespace): Redis channels are shared by every
// database number of a server and every deployment using it.
func (s *Storage) PageVersionChannel() string { return s.RedisKey("page-versions") }

// SessionChannel is the Redis channel ended sessions are announced on
// (comma-separated session ids): every process drops its memo of them at
// once (session_memo.go), so a logout, a sign-out everywhere, a disabled or
// deleted account ends the session on every instance together.
func (s *Storage) SessionChannel() string { return s.RedisKey("sessions-ended") }

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
// app's and the global one (its content), and its engagement.
type Versions struct{ App, Global, Engagement int64 }

// Key is "app.global", the content part of a cache key: what rendered
// pages are keyed by.
func (v Versions) Key() string {
	var buf [41]byte
	b := strconv.AppendInt(buf[:0], v.App, 10)
	b = append(b, '.')
	return string(strconv.AppendInt(b, v.Global, 10))
}

// DataKey is "app.global.engagement": what data caches are keyed by, so
// that counts in them are exact.
func (v Versions) DataKey() string {
	return v.Key() + "." + strconv.FormatInt(v.Engagement, 10)
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
	// reads collapses concurrent database reads of the same scopes: when a
	// version is dropped (a bump without its number, Redis reconnecting)
	// every request of the app wants it at once.
	reads singleflight.Group
	// round counts RefreshPageVersions' rounds; touched lists the scopes
	// read from memory or the database in this round (each once), for the
	// next round to refresh (page_version_refresh.go).
	round   uint32
	touched []string
}

type knownVersion struct {
	version int64
	at      time.Time
	used    uint32 // the refresh round it was last read in (pv.round)
}

func (s *Storage) pv() *pageVersions {
	s.versionsOnce.Do(func() { s.versions = &pageVersions{known: map[string]knownVersion{}} })
	return s.versions
}

// CurrentVersions answers the versions of an app, from memory while they
// are trusted, from the database otherwise.
func (s *Storage) CurrentVersions(ctx context.Context, appID string) (Versions, error) {
	if v, ok := s.pv().trustedAppVersions(appID, time.Now()); ok {
		return v, nil
	}
	got, err := s.knownVersions(ctx, appID, GlobalPageScope, EngagementScope(appID))
	if err != nil {
		return Versions{}, err
	}
	return Versions{App: got[0], Global: got[1], Engagement: got[2]}, nil
}

// PostVersion answers the version of one post's own page (PostScope).
func (s *Storage) PostVersion(ctx context.Context, messageID string) (int64, error) {
	got, err := s.knownVersions(ctx, PostScope(messageID))
	if err != nil {
		return 0, err
	}
	return got[0], nil
}

// MemberVersion answers the version of a member's standing in an app
// (MemberScope).
func (s *Storage) MemberVersion(ctx context.Context, appID, userID string) (int64, error) {
	got, err := s.knownVersions(ctx, MemberScope(appID, userID))
	if err != nil {
		return 0, err
	}
	return got[0], nil
}

// NoteMembership bumps the app's engagement (the landing counts members)
// and the member's own version, for a change of their standing made
// outside writeTx (inside it, memberChanged does this with the commit).
func (s *Storage) NoteMembership(ctx context.Context, appID, userID string) {
	s.bumpPageVersions(ctx, MemberScope(appID, userID), EngagementScope(appID))
}

// dataVersion is the version part of a data cache key of an app.
func (s *Storage) dataVersion(ctx context.Context, appID string) (string, error) {
	v, err := s.CurrentVersions(ctx, appID)
	if err != nil {
		return "", err
	}
	return v.DataKey(), nil
}

// trustedAppVersions is CurrentVersions' answer from memory when all three
// versions are trusted and already touched in this refresh round, without
// allocating: it is asked on every cached page's hit (a perf profile of
// `marquee serve` answering the demo's landing put 4% of the process in
// it, most of it building scope strings and slices). Otherwise
// knownVersions answers (and touches).
func (pv *pageVersions) trustedAppVersions(appID string, now time.Time) (Versions, bool) {
	var buf [64]byte
	engagement := append(append(buf[:0], engagementPrefix...), appID...)
	pv.mu.Lock()
	defer pv.mu.Unlock()
	trust := pv.trustLocked()
	app, ok1 := pv.known[appID]
	global, ok2 := pv.known[GlobalPageScope]
	eng, ok3 := pv.known[string(engagement)] // a lookup by converted bytes does not allocate
	for _, k := range [...]knownVersion{app, global, eng} {
		if now.Sub(k.at) >= trust || k.used != pv.round {
			return Versions{}, false
		}
	}
	if !ok1 || !ok2 || !ok3 {
		return Versions{}, false
	}
	return Versions{App: app.version, Global: global.version, Engagement: eng.version}, true
}

// trustLocked is how long a version learned from the database is used
// (pv.mu held): longer while Redis announces bumps.
func (pv *pageVersions) trustLocked() time.Duration {
	if pv.live {
		return VersionTrust
	}
	return UnannouncedTrust
}

// knownVersions answers the versions of scopes from memory while they are
// trusted, else from the database (one query for all of them).
func (s *Storage) knownVersions(ctx context.Context, scopes ...string) ([]int64, error) {
	pv := s.pv()
	now := time.Now()
	out := make([]int64, len(scopes))
	pv.mu.Lock()
	trust := pv.trustLocked()
	fresh := true
	for i, scope := range scopes {
		k, ok := pv.known[scope]
		if !ok || now.Sub(k.at) >= trust {
			fresh = false
			break
		}
		out[i] = k.version
		pv.touch(scope, k)
	}
	gen := pv.gen
	pv.mu.Unlock()
	if fresh {
		return out, nil
	}
	read, err, _ := pv.reads.Do(strings.Join(scopes, "\x00"), func() (any, error) {
		// Shared by every caller waiting: one caller's cancellation must
		// not fail the others.
		return s.PageVersions(context.WithoutCancel(ctx), scopes...)
	})
	if err != nil {
		return nil, err
	}
	got := read.(map[string]int64)
	pv.mu.Lock()
	if pv.gen == gen {
		if len(pv.known) > 100_000 {
			clear(pv.known) // post scopes are many; the database keeps them
		}
		for _, scope := range scopes {
			pv.known[scope] = knownVersion{version: got[scope], at: now, used: pv.round - 1}
			pv.touch(scope, pv.known[scope])
		}
	}
	pv.mu.Unlock()
	for i, scope := range scopes {
		out[i] = got[scope]
	}
	return out, nil
}

// PageVersionsLive reports whether bumps are being announced to this
// process (WatchPageVersions is subscribed).
func (s *Storage) PageVersionsLive() bool {
	pv := s.pv()
	pv.mu.Lock()
	defer pv.mu.Unlock()
	return pv.live
}

// learn records the version a bump moved scope to (this process's own, or
// one announced with its number), so that no request has to read it back
// from the database. Versions only grow, so an announcement older than
// what is known is old news and changes nothing: with two instances
// bumping an app's engagement, each often hears the other's bump after
// making a newer one itself, and reading the scope again for each made
// every request of the app wait for the database. (A database started
// over is noticed when the trust runs out.)
func (pv *pageVersions) learn(scope string, version int64, at time.Time) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if k, ok := pv.known[scope]; ok && k.version >= version {
		return
	}
	pv.gen++ // a read that raced this bump may hold the older version
	if len(pv.known) > 100_000 {
		clear(pv.known)
	}
	pv.known[scope] = knownVersion{version: version, at: at, used: pv.known[scope].used}
}

// versionMessage is what a bump announces: the scope and the version it
// moved to, so that listeners need not read it from the database.
func versionMessage(scope string, version int64) string {
	return scope + " " + strconv.FormatInt(version, 10)
}

// parseVersionMessage reads versionMessage; ok is false for a bare scope
// (a bump whose version is unknown), which listeners forget instead.
func parseVersionMessage(payload string) (scope string, version int64, ok bool) {
	scope, n, found := strings.Cut(payload, " ")
	if !found {
		return payload, 0, false
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return scope, 0, false
	}
	return scope, v, true
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
	if s.rdb == nil {
		return
	}
	pv := s.pv()
	on, off := true, false
	for ctx.Err() == nil {
		// A database swap (namespace.go) moves the channels: subscribe
		// again, to the new ones, at once.
		swapped := s.swapNotice()
		subCtx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-swapped:
				cancel()
			case <-subCtx.Done():
			}
		}()
		sessionChannel := s.SessionChannel()
		ps := s.rdb.Subscribe(subCtx, s.PageVersionChannel(), sessionChannel)
		for {
			msg, err := ps.Receive(subCtx)
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
				if m.Channel == sessionChannel {
					// Another process ended these sessions: a memo of them
					// here must not answer for its remaining second.
					for _, id := range strings.Split(m.Payload, ",") {
						s.sessions.revoke(id)
					}
					s.endedHeard.Add(1)
					continue
				}
				scope, version, ok := parseVersionMessage(m.Payload)
				if ok && scope != GlobalPageScope {
					pv.learn(scope, version, time.Now())
					continue
				}
				// The global scope drops everything: what was read before
				// it may be keyed by a version read with the old one.
				pv.forget(scope, &on)
			}
		}
		ps.Close()
		cancel()
		select {
		case <-ctx.Done():
		case <-swapped:
		case <-time.After(time.Second):
		}
	}
}

// InvalidateApp bumps the page version of an app: every cached page of it,
// for visitors and members, is stale from the next request on. Every write
// that changes what any page of the app shows calls it (through
// InvalidateLanding and its siblings, or directly).
func (s *Storage) InvalidateApp(ctx context.Context, appID string) {
	s.bumpPageVersions(ctx, appID)
}

// NoteEngagement bumps the engagement version of an app: a like, a reply or
// a follow changed counts, which every data cache re-reads at once and the
// cached pages within their staleness bound.
func (s *Storage) NoteEngagement(ctx context.Context, appID string) {
	s.bumpPageVersions(ctx, EngagementScope(appID))
}

// InvalidatePost bumps one post's page version and the app's engagement: a
// reply changes the post's page and a count elsewhere.
func (s *Storage) InvalidatePost(ctx context.Context, appID, messageID string) {
	s.bumpPageVersions(ctx, PostScope(messageID), EngagementScope(appID))
}

// InvalidateUser renews the pages of every app that shows the user, their
// name and picture beside their posts, replies and event attendance (one
// statement for all of them): a profile change leaves every other app's
// pages cached. When those apps cannot be told, every app's pages go.
func (s *Storage) InvalidateUser(ctx context.Context, userID string) {
	var apps []string
	err := s.db.NewRaw(`SELECT app_id FROM messages WHERE sender_id = ? UNION SELECT app_id FROM attendees WHERE user_id = ?`,
		userID, userID).Scan(ctx, &apps)
	if err != nil {
		s.logger.Error("apps showing a user unknown; renewing every app's pages", "user", userID, "err", err)
		s.InvalidateAllApps(ctx)
		return
	}
	if len(apps) > 0 {
		s.bumpPageVersions(ctx, apps...)
	}
}

// InvalidateAllApps bumps the version every cached page also carries: for
// writes whose effect crosses every app (an operator resizing all images).
func (s *Storage) InvalidateAllApps(ctx context.Context) {
	s.bumpPageVersions(ctx, GlobalPageScope)
}

// pageChanges collects the page scopes a write in writeTx changes; they are
// bumped in the write's own transaction, so the write and the versions that
// make its cached pages stale are one commit: no page outlives a write
// because the process stopped, or the bump failed, between the two.
type pageChanges struct{ scopes []string }

type pageChangesKey struct{}

// changePages notes that the write being made in ctx's transaction changes
// the pages of scopes; it reports false when ctx is not inside writeTx (the
// caller then bumps after its statement, as bumpPageVersions does).
func changePages(ctx context.Context, scopes ...string) bool {
	pc, _ := ctx.Value(pageChangesKey{}).(*pageChanges)
	if pc == nil {
		return false
	}
	for _, scope := range scopes {
		if !slices.Contains(pc.scopes, scope) {
			pc.scopes = append(pc.scopes, scope)
		}
	}
	return true
}

// memberChanged notes that a member's standing in an app changed in ctx's
// transaction (joined, left, moved tier, started or ended a trial, was given
// a tier, lapsed): the page cache keys the class it remembers for them by
// MemberScope, so their next page shows the change; the app's counts move.
func memberChanged(ctx context.Context, appID, userID string) {
	changePages(ctx, MemberScope(appID, userID), EngagementScope(appID))
}

// writeTx is the store's one way to run a transaction: the page scopes the
// write changes (changePages, and every bumpPageVersions made inside it)
// are bumped in that transaction before it commits, and announced once it
// has. A bump that fails fails the write: nothing is committed that a
// cached page would hide. TestStoreWritesInvalidateTheirPages holds every
// store write to it.
func (s *Storage) writeTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	var pages *pageChanges
	var bumped []PageVersion
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		pages, bumped = &pageChanges{}, nil
		if err := fn(context.WithValue(ctx, pageChangesKey{}, pages), tx); err != nil {
			return err
		}
		if len(pages.scopes) == 0 {
			return nil
		}
		var err error
		if bumped, err = bumpIn(ctx, tx, pages.scopes); err != nil {
			return fmt.Errorf("bump page versions: %w", err)
		}
		return s.enqueueRenders(ctx, tx, pages.scopes)
	})
	if err != nil {
		return err
	}
	if len(pages.scopes) > 0 {
		s.announceBumps(ctx, pages.scopes, bumped, nil)
	}
	return nil
}

// bumpIn moves scopes on by one in one statement on db (a transaction or
// the database) and answers the new versions.
func bumpIn(ctx context.Context, db bun.IDB, scopes []string) ([]PageVersion, error) {
	// Rows are locked in the order given: sorted, two writers bumping
	// overlapping scopes never wait on each other in a cycle.
	rows := make([]PageVersion, len(scopes))
	for i, scope := range slices.Sorted(slices.Values(scopes)) {
		rows[i] = PageVersion{Scope: scope, Version: 1}
	}
	var bumped []PageVersion
	_, err := db.NewInsert().Model(&rows).
		On("CONFLICT (scope) DO UPDATE").Set("version = page_version.version + 1").
		Returning("scope, version").Exec(ctx, &bumped)
	return bumped, err
}

// bumpPageVersions moves scopes on by one in one statement (a reply moves
// its post's and its app's engagement: one commit, not two) and announces
// each new version, in one round trip to Redis.
func (s *Storage) bumpPageVersions(ctx context.Context, scopes ...string) {
	if changePages(ctx, scopes...) {
		return // inside writeTx: bumped with its commit
	}
	// Bumped in the database first: that is what a server falls back to when
	// it misses the announcement, so a lost publish costs speed, not truth.
	bumped, err := bumpIn(ctx, s.db, scopes)
	s.announceBumps(ctx, scopes, bumped, err)
	if err == nil {
		if err := s.enqueueRenders(ctx, s.db, scopes); err != nil {
			s.logger.Warn("pages not rendered ahead; the first visitor renders them", "scopes", scopes, "err", err)
		}
	}
}

// announceBumps tells this process and (with Redis) every other one the
// versions a bump made; err is the bump's failure, which makes every
// process read the scopes again instead.
func (s *Storage) announceBumps(ctx context.Context, scopes []string, bumped []PageVersion, err error) {
	version := make(map[string]int64, len(bumped))
	for _, b := range bumped {
		version[b.Scope] = b.Version
	}
	// This process's own writes show on its next request, without waiting
	// for the announcement to come back. The announcement carries the new
	// version: at 60 likes a second, every process reading it back from the
	// database after each one was most of what members waited for.
	payloads := make([]string, len(scopes))
	for i, scope := range scopes {
		v, ok := version[scope]
		payloads[i] = scope
		switch {
		case err != nil || !ok:
			// The write itself succeeded; a page may stay stale for PageTTL.
			s.logger.Error("page version bump failed", "scope", scope, "err", err)
			s.pv().forget(scope, nil)
		case scope == GlobalPageScope:
			s.pv().forget(scope, nil)
		default:
			s.pv().learn(scope, v, time.Now())
			payloads[i] = versionMessage(scope, v)
		}
	}
	if s.rdb != nil {
		_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, payload := range payloads {
				pipe.Publish(ctx, s.PageVersionChannel(), payload)
			}
			return nil
		})
		if err != nil {
			s.cacheWarn("page version announcement failed", err, "scopes", scopes)
		}
	}
}

// PageVersions returns the versions of an app and of GlobalPageScope, 0 when
// never bumped.
func (s *Storage) PageVersions(ctx context.Context, scopes ...string) (map[string]int64, error) {
	var rows []PageVersion
	if err := s.db.NewSelect().Model(&rows).Where("scope IN (?)", bun.List(scopes)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load page versions: %w", err)
	}
	out := make(map[string]int64, len(scopes))
	for _, r := range rows {
		out[r.Scope] = r.Version
	}
	return out, nil
}
