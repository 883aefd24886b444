package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/andybalholm/brotli"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"

	"marquee/render"
	"marquee/store"
)

// The page cache answers a page from memory, already compressed, when
// everyone in the viewer's class would get the same bytes:
//
//   - visitors (no session cookie): every visitor sees the same page;
//   - on routes that opt in with shareMembers, signed-in viewers of the same
//     app, role, permissions and gate verdict: the page is rendered once with
//     a blank signed-in viewer (pageProps) and the islands fetch what is
//     personal (name, picture, likes) from GET /api/auth/me.
//
// An entry is keyed by app id, the app's page version and the global one
// (store.InvalidateApp / InvalidateAllApps, bumped by every write), the
// build, the path and the normalised query, so a write is visible on the
// very next request. What no write announces, the clock (relative times,
// events starting, stories ending), renews a page when its render says it
// would read differently, between PageTTL and PageTTLMax after it
// (http_pagecache_expiry.go).
//
// Only 200 answers without Set-Cookie are kept. The app's CSRF defence is
// Sec-Fetch-Site/Origin (csrf.go), so forms carry no per-viewer token that a
// shared page could leak.
const (
	PageTTL = time.Minute
	// staleGrace: past its expiry an entry of the current version (what
	// changed is the clock's: "5m ago", an event starting) is still served
	// for this long while one request renders it again (stale while
	// revalidate), instead of every visitor waiting for that render. As
	// long as PageTTLMax: when refreshes are paced (refreshRest), a crawler
	// reading a thousand apps' pages finds them a few minutes old rather
	// than gone, which would make each a first view rendered at full cost.
	staleGrace = PageTTLMax
	// DefaultPageCacheMB bounds the memory all entries hold
	// (PAGE_CACHE_MB): their compressed bytes (http_pagecache_evict.go).
	DefaultPageCacheMB = 64
)

type cachedPage struct {
	// engagement is the engagement version the page was rendered at, and
	// rendered when: a newer engagement is shown by the first request
	// staleFor after rendered (one render, while others get this page).
	engagement int64
	rendered   time.Time
	status     int
	header     http.Header
	etag       string // base tag; encodings append -gz / -br
	// Only the compressed bytes are kept (a quarter to a fifth of the
	// page): nearly every client takes gzip or brotli, and the rare one
	// that takes neither gets the gzip bytes inflated. br may be made
	// only when first asked for (brotli()); brMaking makes it once.
	gz          []byte
	br          atomic.Pointer[encodedPage]
	brMaking    sync.Mutex
	identityLen int
	// sent holds, for identity and gzip, the ETag and Content-Length
	// values, made once so a hit formats nothing (brotli's are in br).
	sent [2]sentHeaders
	// frontHeaders holds, per encoding, the headers the front writes for
	// a hit but the date, cache state and request id (http_front.go),
	// made at the first such hit.
	frontHeaders [3]atomic.Pointer[[]byte]
	expires      time.Time
	size         int
	// clock, when set, renews the page past expires by rewriting its
	// relative times rather than rendering it (http_pagecache_restamp.go).
	clock *pageClock
}

type sentHeaders struct{ etag, length []string }

// encodedPage is a page's bytes in one encoding and their header values.
type encodedPage struct {
	body []byte
	sent sentHeaders
}

// Header values of cached answers, made once and shared by every response
// (a handler replaces a value, never writes into one): a hit sets ten
// headers, and making each value per request was a tenth of its cost.
var (
	varyCookie         = []string{"Accept-Encoding, Cookie"}
	cacheControlMember = []string{"private, no-cache"}
	cacheControlShared = []string{"no-cache"}
	encodingValues     = map[string][]string{"br": {"br"}, "gzip": {"gzip"}}
	pageCacheStates    = map[string][]string{"hit": {"hit"}, "stale": {"stale"}, "refresh": {"refresh"}, "miss": {"miss"}}
)

type pageCache struct {
	mu      sync.Mutex
	entries *pageEntries
	// disk is the second tier of the embedded configuration (no Redis):
	// pages the memory evicts go there and come back from it instead of
	// being rendered again; nil when off (http_pagecache_disk.go).
	disk *diskPages
	// fill collapses concurrent misses of one key into one render.
	fill map[string]*pageFill
	// peerBusy: until when another instance renders a key, as far as this
	// process knows (pagecache_shared.go).
	peerBusy map[string]time.Time
	// latest names, per page and viewer class whatever its version, the
	// key of the entry last filed for it: what is served, stale, while the
	// database cannot say the current version (lastGood).
	latest map[string]string
	appIDs sync.Map // app name -> id; names never change
	// visitorRoutes are the requests answered before the router when the
	// page is current or within the staleness bound (pagecache_fastpath.go).
	visitorRoutes visitorRoutes
	// views is the landing data member pages are rendered from, per app;
	// classes remembers a member's viewer class per app and version. Both
	// bounded by count, least recently used first: they grow with apps and
	// members, and a miss costs a lookup, not a render.
	views   *lru.Cache[string, appViewEntry]
	classes *lru.Cache[string, memberClass]
	off     bool
	// staleFor is how long a page may show older counts (likes, replies,
	// members) than the data: the bound on what engagement costs in renders,
	// one per page per staleFor however many writes arrive.
	staleFor time.Duration
	// refreshing holds a slot per refresh under way (a page served stale
	// while it renders again), at most half the render runtimes: when
	// every page read has aged (a crawler reading a thousand apps a minute
	// apart) refreshes would take every core from the hits and first views
	// they exist to spare. A refresh that finds no slot leaves the stale
	// page in place before loading anything: in a uniform read of 1,000
	// apps' aged pages most refreshes loaded the page's data only to be
	// refused by the render queue (scripts/bench apps). A slot rests after
	// each refresh (refreshRest).
	refreshing chan struct{}
}

// refreshRest is how long a refresh slot rests after a refresh of a page
// the clock renewed, as a multiple of the time the refresh took: such
// refreshes take at most a quarter of their slots' time. In a uniform
// read of 1,000 apps whose pages all showed the minute ("3m ago"),
// refreshes rendering back to back took a core of two from the hits (scripts/bench apps: 0.33x of one app's rate;
// resting twice their time, 0.47x); the pages they would renew are served
// meanwhile, a little older.
const refreshRest = 3

// StaleFor is the default staleFor: a like shows to everyone within about a
// second plus one render.
const StaleFor = time.Second

type pageFill struct {
	done chan struct{}
	page *cachedPage
	// failed is the answer of a render that failed for want of time or
	// runtimes (5xx): it is the waiters' answer too. Each rendering for
	// itself instead multiplied the load that made it fail.
	failed *recorded
	// waiting counts the requests waiting for the render (tests).
	waiting atomic.Int32
}

// Bounds of the per-app memos: landing data decoded for member pages
// (tens of KB each) and members' viewer classes (a hundred bytes each).
const (
	appViewsKept    = 256
	memberClassKept = 20_000
)

// newPageCache makes a page cache holding limit bytes of pages in memory
// and, when disk is not nil, more on disk.
func newPageCache(limit int, disk *diskPages) *pageCache {
	if limit <= 0 {
		limit = DefaultPageCacheMB << 20
	}
	views, _ := lru.New[string, appViewEntry](appViewsKept)
	classes, _ := lru.New[string, memberClass](memberClassKept)
	return &pageCache{
		entries:  newPageEntries(limit),
		disk:     disk,
		fill:     map[string]*pageFill{},
		peerBusy: map[string]time.Time{},
		latest:   map[string]string{},
		staleFor: StaleFor,
		views:    views,
		classes:  classes,
		// Until the server knows its render pool (setRenderPool).
		refreshing: make(chan struct{}, 1),
	}
}

// setRenderPool sizes the refresh slots to half of size runtimes (one at
// least).
func (pc *pageCache) setRenderPool(size int) {
	pc.refreshing = make(chan struct{}, max(1, size/2))
}

// startRefresh takes a refresh slot, or reports false when every slot is
// taken. done gives it back, refreshRest times the refresh's time later
// when rest is set: for pages the clock renewed. A page renewed for newer
// counts gives it back at once (staleFor already bounds those renders to
// one per page per staleFor, and a like shows within it).
func (pc *pageCache) startRefresh(rest bool) (done func(), ok bool) {
	select {
	case pc.refreshing <- struct{}{}:
		start := time.Now()
		return func() {
			if !rest {
				<-pc.refreshing
				return
			}
			time.AfterFunc(refreshRest*time.Since(start), func() { <-pc.refreshing })
		}, true
	default:
		return nil, false
	}
}

// purge forgets every page and everything remembered to find one: the
// database was replaced (store/namespace.go), and an app name, a member's
// class or a version may now mean another thing.
func (pc *pageCache) purge() {
	pc.mu.Lock()
	pc.entries = newPageEntries(pc.entries.limit)
	clear(pc.peerBusy)
	clear(pc.latest)
	pc.mu.Unlock()
	pc.disk.purge()
	pc.appIDs.Clear()
	pc.views.Purge()
	pc.classes.Purge()
	pc.visitorRoutes.mu.Lock()
	pc.visitorRoutes.routes = nil
	pc.visitorRoutes.mu.Unlock()
}

// get answers the entry of key, counting the read. It may have expired
// (stale: see expired); one past staleGrace is dropped and nil answered.
func (pc *pageCache) get(key string, now time.Time) *cachedPage {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	p := pc.entries.get(key)
	if p != nil && now.After(p.expires.Add(staleGrace)) {
		pc.dropLocked(key)
		return nil
	}
	return p
}

// expired: past PageTTL, the page is served only while one request renders
// it again.
func (p *cachedPage) expired(now time.Time) bool { return now.After(p.expires) }

// put files p under key. What the memory evicts to make room goes to the
// disk tier when there is one, unless it is expired or an older version.
func (pc *pageCache) put(key string, p *cachedPage) {
	pc.mu.Lock()
	evicted := pc.entries.put(key, p)
	if stable, ok := unversionedKey(key); ok {
		pc.latest[stable] = key
	}
	var spill []*pageSlot
	now := time.Now()
	for _, s := range evicted {
		stable, ok := unversionedKey(s.key)
		current := ok && pc.latest[stable] == s.key
		if current && s.key != key {
			delete(pc.latest, stable) // the latest map is bounded by the entries
		}
		if current && pc.disk != nil && !s.page.expired(now) {
			spill = append(spill, s)
		}
	}
	pc.mu.Unlock()
	for _, s := range spill {
		pc.disk.store(s.key, s.page)
	}
}

// appendPageKey appends the key of a page entry to b: app id, content
// version, build, path, normalised query and viewer class, NUL-separated.
func appendPageKey(b []byte, appID, content, build, path, query, class string) []byte {
	b = append(b, appID...)
	for _, part := range [...]string{content, build, path, query, class} {
		b = append(b, 0)
		b = append(b, part...)
	}
	return b
}

// pageKeyPath is the path part of a page's key: a custom domain's pages
// link without the /apps/{name} prefix and to their own origin, so they
// are filed apart from the same page on the main site ("//domain/path").
func pageKeyPath(r *http.Request) string {
	if d := customHost(r); d != nil {
		return "//" + d.Domain + r.URL.Path
	}
	return r.URL.Path
}

// unversionedKey drops the content version (the second part) from a page
// key: the same page and viewer class at any version.
func unversionedKey(key string) (string, bool) {
	app, rest, ok := strings.Cut(key, "\x00")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "\x00")
	return app + "\x00" + rest, ok
}

// lastGood answers the entry last filed for the page of key at any
// version, expired or not: what a visitor gets while the database is down,
// rather than a 503.
func (pc *pageCache) lastGood(key string) *cachedPage {
	stable, ok := unversionedKey(key)
	if !ok {
		return nil
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.entries.peek(pc.latest[stable])
}

// size is the bytes the memory tier holds.
func (pc *pageCache) size() int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.entries.bytes
}

func (pc *pageCache) dropLocked(key string) {
	pc.entries.remove(key)
	if stable, ok := unversionedKey(key); ok && pc.latest[stable] == key {
		delete(pc.latest, stable)
	}
}

// WatchPageVersions listens for version bumps on Redis until ctx ends
// (store.Storage.WatchPageVersions owns the versions of every cache).
func (s *Server) WatchPageVersions(ctx context.Context) { s.store.WatchPageVersions(ctx) }

// pageVersion is the version part of a page's cache key.
type pageVersion struct {
	// content is "app.global[.post]": a page rendered for another content
	// version is never served.
	content string
	// engagement counts likes, replies and follows: a page rendered for an
	// older one is served while one render replaces it (staleFor).
	engagement int64
}

// pageVersion returns the versions of an app's page; postID, when the page
// is one post's, adds that post's own version.
func (s *Server) pageVersion(ctx context.Context, appID, postID string) (pageVersion, error) {
	v, err := s.store.CurrentVersions(ctx, appID)
	if err != nil {
		return pageVersion{}, err
	}
	content := v.Key()
	if postID != "" {
		post, err := s.store.PostVersion(ctx, postID)
		if err != nil {
			return pageVersion{}, err
		}
		content += "." + strconv.FormatInt(post, 10)
	}
	return pageVersion{content: content, engagement: v.Engagement}, nil
}

// pageCached lists the route paths whose answers the page cache writes
// (compressed by itself); the general gzip middleware skips them.
func (s *Server) pageCachedRoute(c echo.Context) bool { return s.cachedRoutes[c.Path()] }

// cachePage is the route middleware any page opts into (before appPage, so a
// hit costs no app load). shareMembers: the page renders the same for every
// member of a role (it reads nothing personal but Viewer.User).
func (s *Server) cachePage(shareMembers bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			v := viewerOf(c)
			switch {
			case req.Method != http.MethodGet || v.LookupErr != nil || s.pages.off:
				return s.answerUncached(c, next)
			case hasCookie(req, previewCookie):
				// Staff previewing the app as someone else: their own look,
				// never a cached page, never kept (launch_preview.go).
				return s.answerUncached(c, next)
			case v.User == nil:
				if _, err := req.Cookie(sessionCookie); err == nil {
					// A stale cookie: the page may clear it (Set-Cookie).
					return s.answerUncached(c, next)
				}
			case !shareMembers:
				return s.answerUncached(c, next)
			}
			ctx := req.Context()
			appID, err := s.pageAppID(ctx, c.Param("app"))
			if err != nil {
				return s.answerUncached(c, next) // the handler answers 404 or 503
			}
			version, err := s.pageVersion(ctx, appID, c.Param("postId"))
			if err != nil {
				// The database is down (without Redis its versions are the
				// only ones): a visitor gets the page last cached, however
				// old, instead of a 503. A member's page depends on who they
				// are, which the database says; they get the 503.
				if v.User == nil && store.IsUnavailable(err) {
					key := string(appendPageKey(nil, appID, "", s.build, pageKeyPath(req), normalizedQuery(req.URL), "visitor"))
					if p := s.pages.lastGood(key); p != nil {
						s.logger.Warn("database unavailable; serving the last cached page", "path", req.URL.Path, "err", err)
						return s.serveCached(c, p, false, "stale")
					}
				}
				s.logger.Warn("page version unavailable; rendering uncached", "err", err)
				return s.answerUncached(c, next)
			}
			dataVersion := version.content + "." + strconv.FormatInt(version.engagement, 10)
			class := "visitor"
			if v.User != nil {
				// The member's standing in the app decides the page: the app
				// is read once per version, then a membership lookup, itself
				// remembered for this content version and the member's own
				// (a follow or an unfollow moves only the engagement and
				// that one: a like leaves every member's class remembered)
				// and a few seconds (subscriptions lapse).
				own, err := s.store.MemberVersion(ctx, appID, v.User.ID)
				if err != nil {
					return s.answerUncached(c, next)
				}
				memo := appID + "\x00" + v.User.ID + "\x00" + version.content + "\x00" + strconv.FormatInt(own, 10)
				// Who just wrote through a form or a payment (joined, moved
				// tier, cancelled) is asked again: their standing may have
				// changed with it, and the memo would answer the old one for
				// up to memberClassTTL.
				if m, ok := s.pages.classes.Get(memo); ok && time.Now().Before(m.expires) && !ownWrite(req) {
					class = m.class
				} else {
					sc, err := s.memberScope(c, appID, dataVersion)
					if err != nil {
						return s.answerUncached(c, next)
					}
					class = memberClassOf(sc)
					s.pages.rememberClass(memo, class)
				}
				c.Set(sharedRenderKey, true)
			}
			if class == privateClass {
				return s.answerUncached(c, next)
			}
			keyOf := func(class string) string {
				return string(appendPageKey(nil, appID, version.content, s.build, pageKeyPath(req), normalizedQuery(req.URL), class))
			}
			key := keyOf(class)
			// Whoever just wrote (a like without JavaScript) sees it at
			// once: no stale page for them, they wait for the render. Read
			// only past a current hit, the path most requests take.
			if p := s.pages.lookup(key, time.Now()); p != nil {
				if renderingAhead(ctx) {
					return nil // there: newer counts and the clock are the readers' to renew
				}
				if class == "visitor" {
					// The next such request is answered before the router
					// while the page is current, or while it is renewed.
					s.pages.visitorRoutes.remember(req, visitorRoute{appID: appID, postID: c.Param("postId"),
						route: c.Path(), query: normalizedQuery(req.URL)})
				}
				if p.engagement >= version.engagement && !p.expired(time.Now()) {
					return s.serveCached(c, p, class != "visitor", "hit")
				}
				fresh := ownWrite(req)
				if !p.expired(time.Now()) && time.Since(p.rendered) < s.pages.staleFor && !fresh {
					return s.serveCached(c, p, class != "visitor", "stale")
				}
				if fresh {
					p = nil
				}
				// Older counts: one request renders, the others get this page.
				if v.User != nil && scopeFromPage(c) == nil {
					if _, err := s.memberScope(c, appID, dataVersion); err != nil {
						return s.serveCached(c, p, true, "stale")
					}
				}
				np, err := s.fillPage(c, key, version.engagement, p, fresh, next)
				if err != nil || np == nil {
					return err
				}
				state := "refresh"
				if p != nil && np == p {
					state = "stale"
				}
				return s.serveCached(c, np, class != "visitor", state)
			}
			if v.User != nil && scopeFromPage(c) == nil {
				// A miss renders: the handler needs the scope itself, and the
				// page is filed under what it says now, not the memo.
				sc, err := s.memberScope(c, appID, dataVersion)
				if err != nil {
					return s.answerUncached(c, next)
				}
				if fresh := memberClassOf(sc); fresh == privateClass {
					return s.answerUncached(c, next)
				} else if fresh != class {
					class, key = fresh, keyOf(fresh)
					if p := s.pages.lookup(key, time.Now()); p != nil {
						return s.serveCached(c, p, true, "hit")
					}
				}
			}
			p, err := s.fillPage(c, key, version.engagement, nil, ownWrite(req), next)
			if err != nil || p == nil {
				return err
			}
			return s.serveCached(c, p, class != "visitor", "miss")
		}
	}
}

const sharedRenderKey = "pagecache.shared"

// freshCookie marks a browser that has just written through a form: for a
// few seconds its pages are never the stale ones (seesOwnWrite).
const freshCookie = "marquee_fresh"

// ownWrite: the request comes from a browser that wrote within seconds.
func ownWrite(req *http.Request) bool { _, err := req.Cookie(freshCookie); return err == nil }

// seesOwnWrite is the middleware of the forms: after a write, the page the
// form redirects to shows it, although other viewers may get a page up to
// staleFor old.
func (s *Server) seesOwnWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.SetCookie(&http.Cookie{Name: freshCookie, Value: "1", Path: "/", MaxAge: 10, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return next(c)
	}
}

// fillPage renders a missing or outdated entry once, however many requests
// want it: while it renders, the others wait for it, or, when there is a
// stale page to give, get that at once (stale while revalidate). With
// Redis, once across the deployment (fromPeers). fresh: only a page at the
// current engagement will do (the viewer just wrote). A render that cannot
// be kept (not 200, Set-Cookie) is answered as it is to the request that
// made it, and nil is returned.
func (s *Server) fillPage(c echo.Context, key string, engagement int64, stale *cachedPage, fresh bool, next echo.HandlerFunc) (*cachedPage, error) {
	pc := s.pages
	pc.mu.Lock()
	if stale != nil && time.Now().Before(pc.peerBusy[key]) {
		pc.mu.Unlock()
		return stale, nil
	}
	if f, ok := pc.fill[key]; ok {
		pc.mu.Unlock()
		if stale != nil {
			return stale, nil
		}
		f.waiting.Add(1)
		select {
		case <-f.done:
		case <-c.Request().Context().Done():
			return nil, c.Request().Context().Err()
		}
		if f.page != nil {
			return f.page, nil
		}
		if f.failed != nil {
			c.Response().Header().Set("Vary", "Accept-Encoding, Cookie")
			c.Response().Header().Set("X-Page-Cache", "bypass")
			return nil, s.writeCompressed(c, f.failed)
		}
		return nil, s.answerUncached(c, next)
	}
	f := &pageFill{done: make(chan struct{})}
	pc.fill[key] = f
	pc.mu.Unlock()
	defer func() {
		pc.mu.Lock()
		delete(pc.fill, key)
		pc.mu.Unlock()
		close(f.done)
	}()

	// The render is everyone's who waits for it: the client that started
	// it leaving (wrk ending, a closed tab) must not cancel it for the
	// others, who would each render the page for themselves. The render
	// timeout still bounds it.
	req := c.Request()
	ctx := context.WithoutCancel(req.Context())
	peer, release, done := s.fromPeers(ctx, key, engagement, stale, fresh)
	if done {
		if peer != stale {
			pc.put(key, peer)
			f.page = peer
		}
		return peer, nil
	}
	if release != nil {
		defer release()
	}
	if stale != nil {
		// Others are served the stale page meanwhile: this render waits
		// behind those of pages nobody has (render.Refresh), and only while
		// a refresh slot is free.
		done, ok := pc.startRefresh(stale.expired(time.Now()))
		if !ok {
			return stale, nil
		}
		defer done()
		if stale.engagement >= engagement {
			// Only the clock renews it: its relative times, rewritten, will
			// do unless something else changed with the clock.
			if np := stale.restamped(s.now()); np != nil {
				s.metrics.pageRestamped()
				pc.put(key, np)
				f.page = np
				s.sharePage(ctx, key, np)
				return np, nil
			}
		}
		ctx = render.Refresh(ctx)
	} else if renderingAhead(ctx) {
		ctx = render.Refresh(ctx) // behind every render a viewer waits for
	}
	c.SetRequest(req.WithContext(ctx))
	rendered := time.Now()
	rec := s.capture(c, next)
	c.SetRequest(req)
	if stale != nil && rec.status >= http.StatusInternalServerError {
		// The render failed or found the renderer too busy for a refresh:
		// the page there is beats an error page.
		return stale, nil
	}
	if rec.status != http.StatusOK || rec.header.Get("Set-Cookie") != "" || strings.Contains(rec.header.Get("Cache-Control"), "no-store") {
		// A render ahead refused for want of runtimes (it waits behind
		// every other) is not the answer of a visitor who came meanwhile:
		// they render the page as a first view.
		if rec.status >= http.StatusInternalServerError && rec.header.Get("Set-Cookie") == "" && !renderingAhead(ctx) {
			f.failed = rec
		}
		c.Response().Header().Set("Vary", "Accept-Encoding, Cookie")
		c.Response().Header().Set("X-Page-Cache", "bypass")
		return nil, s.writeCompressed(c, rec)
	}
	p := newCachedPage(rec)
	p.engagement, p.rendered, p.expires = engagement, rendered, pageExpiry(c, rendered)
	p.clock = pageClockOf(c, rendered)
	if renderingAhead(ctx) && pc.disk != nil {
		pc.disk.store(key, p) // nobody has asked for it yet: memory waits until someone does
	} else {
		pc.put(key, p)
	}
	f.page = p
	s.sharePage(ctx, key, p)
	return p, nil
}

func memberClassOf(sc *Scope) string {
	if sc.OwnHidden || sc.Preview != "" || sc.App.Unpublished {
		return privateClass
	}
	perms, _ := json.Marshal(sc.Can)
	// The reader's level (tier) decides which posts are locked: members of
	// one role but different tiers never share a render.
	return "member|" + sc.Role + "|" + strconv.FormatBool(sc.Gated) + "|" + string(perms) + "|" + sc.Reader.Key()
}

// privateClass is the class of a member whose pages are theirs alone (they
// see their own hidden posts): never served from, nor kept in, the cache.
const privateClass = "private"

type memberClass struct {
	class   string
	expires time.Time
}

// memberClassTTL bounds how late a lapsed subscription is noticed.
const memberClassTTL = 10 * time.Second

func (pc *pageCache) rememberClass(memo, class string) {
	pc.classes.Add(memo, memberClass{class: class, expires: time.Now().Add(memberClassTTL)})
}

// memberScope loads the signed-in viewer's scope from the app view of this
// version and leaves it for appPage and the handler.
func (s *Server) memberScope(c echo.Context, appID, version string) (*Scope, error) {
	// usableApp: a suspended app is offline for its members and its
	// creator too, as appPage answers (issue 41 item 4).
	view, err := usableApp(s.pages.appView(c.Request().Context(), s.store, appID, version))
	if err != nil {
		return nil, err
	}
	sc, err := s.scopeOfView(c, view)
	if err != nil {
		return nil, err
	}
	if sc.User != nil {
		if sc.OwnHidden, err = s.store.HasHiddenPosts(c.Request().Context(), appID, sc.User.ID); err != nil {
			return nil, err
		}
	}
	c.Set("scope", sc)
	return sc, nil
}

type appViewEntry struct {
	version string
	view    *store.AppView
	expires time.Time
}

// appView is the app's landing data for one page version, decoded once and
// shared read-only by the member pages rendered from it (the cached landing
// data would be decoded from JSON on every request).
func (pc *pageCache) appView(ctx context.Context, st *store.Storage, appID, version string) (*store.AppView, error) {
	now := time.Now()
	if e, ok := pc.views.Get(appID); ok && e.version == version && now.Before(e.expires) {
		return e.view, nil
	}
	view, err := st.Landing(ctx, appID)
	if err != nil {
		return nil, err
	}
	pc.views.Add(appID, appViewEntry{version: version, view: view, expires: now.Add(PageTTL)})
	return view, nil
}

// pageAppID resolves the :app parameter to the app's id, remembering names.
func (s *Server) pageAppID(ctx context.Context, idOrName string) (string, error) {
	if id, ok := s.pages.appIDs.Load(idOrName); ok {
		return id.(string), nil
	}
	id, err := s.store.AppIDOf(ctx, idOrName)
	if err != nil {
		return "", err
	}
	if !store.LooksLikeID(idOrName) {
		s.pages.appIDs.Store(idOrName, id)
	}
	return id, nil
}

// normalizedQuery sorts the query so that ?a=1&b=2 and ?b=2&a=1 share an
// entry, and drops campaign tags no page reads.
func normalizedQuery(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "utm_") || k == "fbclid" || k == "gclid" {
			delete(q, k)
		}
	}
	for _, vs := range q {
		sort.Strings(vs)
	}
	return q.Encode() // sorted by key
}

// recorded is a response captured from a handler.
type recorded struct {
	status int
	header http.Header
	body   bytes.Buffer
}

type recordWriter struct{ rec *recorded }

func (w recordWriter) Header() http.Header         { return w.rec.header }
func (w recordWriter) Write(b []byte) (int, error) { return w.rec.body.Write(b) }
func (w recordWriter) WriteHeader(status int)      { w.rec.status = status }

// capture runs the handler (and the error handler, for its error pages)
// into memory, then hands the response back untouched.
func (s *Server) capture(c echo.Context, next echo.HandlerFunc) *recorded {
	rec := &recorded{status: http.StatusOK, header: http.Header{}}
	res := c.Response()
	orig := res.Writer
	res.Writer = recordWriter{rec}
	if err := next(c); err != nil {
		c.Error(err)
	}
	res.Writer = orig
	res.Committed, res.Size, res.Status = false, 0, http.StatusOK
	return rec
}

// answerUncached renders per request and compresses the answer.
func (s *Server) answerUncached(c echo.Context, next echo.HandlerFunc) error {
	h := c.Response().Header()
	h.Set("Vary", "Accept-Encoding, Cookie")
	h.Set("X-Page-Cache", "bypass")
	return s.writeCompressed(c, s.capture(c, next))
}

func (s *Server) writeCompressed(c echo.Context, rec *recorded) error {
	h := c.Response().Header()
	for k, vs := range rec.header {
		h[k] = vs
	}
	body := rec.body.Bytes()
	if rec.status != http.StatusNotModified && rec.status != http.StatusNoContent && len(body) > 1024 && acceptsEncoding(c.Request(), "gzip") && h.Get("Content-Encoding") == "" {
		body = gzipBytes(body, gzip.DefaultCompression)
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	sendInOnePiece(c.Request())
	c.Response().WriteHeader(rec.status)
	_, err := c.Response().Write(body)
	return err
}

func newCachedPage(rec *recorded) *cachedPage {
	body := bytes.Clone(rec.body.Bytes())
	header := http.Header{}
	for k, vs := range rec.header {
		header[k] = vs
	}
	header.Del("Content-Length")
	return cachedPageOf(rec.status, header, pageETag(body), len(body), gzipBytes(body, gzip.BestCompression), brotliBytes(body, brotliPageWindow))
}

// pageETag is the base ETag of a page's bytes.
func pageETag(identity []byte) string {
	sum := sha256.Sum256(identity)
	return hex.EncodeToString(sum[:12])
}

// cachedPageOf is the entry of a page (identityLen bytes, kept in its two
// encodings), expiring PageTTL from now. br may be empty: the page's
// brotli bytes are then made from gz at the first request that takes them.
func cachedPageOf(status int, header http.Header, etag string, identityLen int, gz, br []byte) *cachedPage {
	p := &cachedPage{
		status: status, header: header, etag: etag, identityLen: identityLen, gz: gz,
		expires: time.Now().Add(PageTTL),
	}
	p.sent[0] = p.sentFor("", identityLen)
	p.sent[1] = p.sentFor("-gz", len(gz))
	if len(br) > 0 {
		p.br.Store(&encodedPage{body: br, sent: p.sentFor("-br", len(br))})
	}
	// Brotli bytes yet to be made are counted as large as gzip's (they
	// come out a little smaller), so the cache's bound holds once they are.
	brSize := len(br)
	if brSize == 0 {
		brSize = len(gz)
	}
	p.size = len(p.gz) + brSize + 3*len(p.etag) + 512
	return p
}

func (p *cachedPage) sentFor(etagSuffix string, length int) sentHeaders {
	return sentHeaders{etag: []string{`"` + p.etag + etagSuffix + `"`}, length: []string{strconv.Itoa(length)}}
}

// brotli answers the page's brotli bytes, made now from its gzip bytes if
// it was kept without them, or nil when they cannot be made.
func (p *cachedPage) brotli() *encodedPage {
	if e := p.br.Load(); e != nil {
		return e
	}
	p.brMaking.Lock()
	defer p.brMaking.Unlock()
	if e := p.br.Load(); e != nil {
		return e // made while this request waited
	}
	identity := p.identity()
	if identity == nil {
		return nil
	}
	body := brotliBytes(identity, brotliPageWindow)
	e := &encodedPage{body: body, sent: p.sentFor("-br", len(body))}
	p.br.Store(e)
	return e
}

// brotliIfMade answers the brotli bytes when they are made, else nil
// (what is shared or spilled carries them only then).
func (p *cachedPage) brotliIfMade() []byte {
	if e := p.br.Load(); e != nil {
		return e.body
	}
	return nil
}

// identity inflates the page's gzip bytes, for a client that takes no
// encoding.
func (p *cachedPage) identity() []byte {
	r, err := gzip.NewReader(bytes.NewReader(p.gz))
	if err != nil {
		return nil
	}
	out := make([]byte, 0, p.identityLen)
	b := bytes.NewBuffer(out)
	if _, err := b.ReadFrom(r); err != nil {
		return nil
	}
	return b.Bytes()
}

// serveCached answers from an entry: 304 when the client holds it already,
// else the smallest encoding the client accepts.
func (s *Server) serveCached(c echo.Context, p *cachedPage, member bool, state string) error {
	_, _, err := s.writeCachedPage(c.Response(), c.Request(), p, member, state)
	return err
}

// writeCachedPage is serveCached on the bare writer, shared with the
// visitor hits answered before the router (pagecache_fastpath.go). It
// returns the status and the body's size it wrote.
func (s *Server) writeCachedPage(w http.ResponseWriter, r *http.Request, p *cachedPage, member bool, state string) (int, int, error) {
	s.metrics.pageCacheResult(state)
	return writePageAnswer(w, r, p, member, state)
}

// writePageAnswer writes p as the answer to r (the metrics are the
// caller's: findVisitorHit counts before the front writes).
func writePageAnswer(w http.ResponseWriter, r *http.Request, p *cachedPage, member bool, state string) (int, int, error) {
	h := w.Header()
	for k, vs := range p.header {
		h[k] = vs
	}
	// Says whether the cache answered (tests, scripts/bench, operators).
	if v, ok := pageCacheStates[state]; ok {
		h["X-Page-Cache"] = v
	} else {
		h.Set("X-Page-Cache", state)
	}
	// Cookie: a browser (or a shared cache) must not answer a signed-in
	// request with a visitor's page or the other way round.
	h["Vary"] = varyCookie
	if member {
		h["Cache-Control"] = cacheControlMember
	} else {
		h["Cache-Control"] = cacheControlShared
	}
	a := p.answerTo(r)
	h["Etag"] = a.sent.etag
	if a.notModified {
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified, 0, nil
	}
	if a.encoding != "" {
		h["Content-Encoding"] = encodingValues[a.encoding]
	}
	h["Content-Length"] = a.sent.length
	sendInOnePiece(r)
	w.WriteHeader(p.status)
	n, err := w.Write(a.body)
	return p.status, n, err
}

// pageAnswer is what a cached page answers a request with: the encoding
// it takes (br, gzip, or "" for the page inflated), its bytes and header
// values, or 304 when the request already has the page.
type pageAnswer struct {
	index       int // of sent and frontHeaders
	encoding    string
	body        []byte
	sent        sentHeaders
	notModified bool
}

func (p *cachedPage) answerTo(r *http.Request) pageAnswer {
	a := pageAnswer{sent: p.sent[0]}
	accepted := firstValue(r.Header, "Accept-Encoding")
	var br *encodedPage
	if acceptsEncodingIn(accepted, "br") {
		br = p.brotli()
	}
	switch {
	case br != nil:
		a.index, a.body, a.encoding, a.sent = 2, br.body, "br", br.sent
	case acceptsEncodingIn(accepted, "gzip"):
		a.index, a.body, a.encoding, a.sent = 1, p.gz, "gzip", p.sent[1]
	}
	if matchesETag(firstValue(r.Header, "If-None-Match"), p.etag) {
		a.notModified, a.body = true, nil
		return a
	}
	if a.encoding == "" {
		a.body = p.identity()
	}
	return a
}

// matchesETag compares If-None-Match weakly: any encoding of the same bytes
// is the same page.
func matchesETag(header, base string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" {
			return true
		}
		t = strings.Trim(t, `"`)
		t = strings.TrimSuffix(strings.TrimSuffix(t, "-gz"), "-br")
		if t == base {
			return true
		}
	}
	return false
}

// acceptsEncoding reads Accept-Encoding, honouring q=0 as a refusal
// (without allocating: every cached page's hit asks).
func acceptsEncoding(r *http.Request, enc string) bool {
	return acceptsEncodingIn(r.Header.Get("Accept-Encoding"), enc)
}

func acceptsEncodingIn(rest, enc string) bool {
	for rest != "" {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), enc) {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		if q, ok := strings.CutPrefix(params, "q="); ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

var gzipPools sync.Map // level -> *sync.Pool

func gzipBytes(b []byte, level int) []byte {
	pool, _ := gzipPools.LoadOrStore(level, &sync.Pool{})
	var out bytes.Buffer
	out.Grow(len(b) / 4)
	w, _ := pool.(*sync.Pool).Get().(*gzip.Writer)
	if w == nil {
		w, _ = gzip.NewWriterLevel(&out, level)
	} else {
		w.Reset(&out)
	}
	_, _ = w.Write(b)
	_ = w.Close()
	pool.(*sync.Pool).Put(w)
	return out.Bytes()
}

// brotliPageWindow is the window pages are compressed with: 64 KiB.
// Brotli's default (4 MiB) makes the level-9 encoder allocate and clear a
// 34 MB hash table per call, 14-23 ms for a 26-64 KB page, paid at every
// render; with a 64 KiB window it is 2-4 ms and 2 MB, and the pages come
// out no larger (BenchmarkPageCompression).
const brotliPageWindow = 16

// brotliBytes compresses at level 9 (most of level 11's gain at a fraction
// of its time) with a window of 1<<window bytes (0 for brotli's default).
// Writers are kept for the next page: a new one allocates its hash tables
// (1.8 MB), which was two thirds of a community page's 2.4 ms
// (BenchmarkPageCompression).
func brotliBytes(b []byte, window int) []byte {
	pool, _ := brotliPools.LoadOrStore(window, &sync.Pool{})
	var out bytes.Buffer
	out.Grow(len(b) / 4)
	w, _ := pool.(*sync.Pool).Get().(*brotli.Writer)
	if w == nil {
		w = brotli.NewWriterOptions(&out, brotli.WriterOptions{Quality: 9, LGWin: window})
	} else {
		w.Reset(&out)
	}
	_, _ = w.Write(b)
	_ = w.Close()
	pool.(*sync.Pool).Put(w)
	return out.Bytes()
}

var brotliPools sync.Map // window -> *sync.Pool
