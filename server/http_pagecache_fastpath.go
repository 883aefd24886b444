package server

import (
	"net/http"
	"sync"
	"time"
)

// A visitor's request for a page the cache holds at the current version is
// answered before the router: echo's context, the route lookup and the
// chain of middleware were two thirds of what such a hit cost (a CPU
// profile of scripts/bench), and none of them changes that answer. The
// cache learns which requests it may answer so from the requests the whole
// chain answered with a visitor's cached page (cachePage): only an exact
// path and query seen there is looked up here, so what the chain would
// refuse, redirect or route elsewhere never is. A page with older counts is
// served within the staleness bound as the chain serves it, and an expired
// one while it is being renewed or no refresh could start (every slot
// taken), as the chain would serve it too: with a thousand apps' pages aged
// at once, those were most requests, each through the whole chain only to
// be answered the same stale page. Everything else (a render due, a new
// version, an expired entry a refresh could renew) goes through the chain
// as before.
//
// What the chain does for such a request is done here too: the request id,
// the security headers, the access line and the metrics. What it is not
// given: the in-flight limit (it protects rendering; a hit renders nothing),
// and echo's panic recovery (net/http recovers per connection; nothing here
// panics on a request's input).

// visitorRoute is what a request's path and query stand for in the cache.
type visitorRoute struct {
	appID, postID string
	route         string // the route's pattern, for the access line and metrics
	query         string // normalizedQuery
}

type visitorRouteKey struct{ domain, path, rawQuery string }

type visitorRoutes struct {
	mu     sync.RWMutex
	routes map[visitorRouteKey]visitorRoute
}

// visitorRoutesLimit bounds what is remembered (crawlers vary queries):
// past it the table starts over and fills again from the chain.
const visitorRoutesLimit = 50_000

func (t *visitorRoutes) remember(r *http.Request, vr visitorRoute) {
	if r.URL.RawPath != "" {
		return // answerVisitorHit leaves escaped paths to the chain
	}
	k := visitorRouteKey{domainOf(r), r.URL.Path, r.URL.RawQuery}
	t.mu.RLock()
	known, ok := t.routes[k]
	t.mu.RUnlock()
	if ok && known == vr {
		return
	}
	t.mu.Lock()
	if t.routes == nil || len(t.routes) >= visitorRoutesLimit {
		t.routes = map[visitorRouteKey]visitorRoute{}
	}
	t.routes[k] = vr
	t.mu.Unlock()
}

func (t *visitorRoutes) lookup(r *http.Request) (visitorRoute, bool) {
	t.mu.RLock()
	vr, ok := t.routes[visitorRouteKey{domainOf(r), r.URL.Path, r.URL.RawQuery}]
	t.mu.RUnlock()
	return vr, ok
}

// domainOf is the custom domain of a request, "" on the main site.
func domainOf(r *http.Request) string {
	if d := customHost(r); d != nil {
		return d.Domain
	}
	return ""
}

// answerVisitorHits is the main site's handler: visitor hits answered
// here, every other request by next (echo).
func (s *Server) answerVisitorHits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.answerVisitorHit(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// answerVisitorHit answers r from the page cache and reports true, or
// reports false having written nothing.
func (s *Server) answerVisitorHit(w http.ResponseWriter, r *http.Request) bool {
	hit, ok := s.findVisitorHit(r)
	if !ok {
		return false
	}
	id := s.requestIDOf(r)
	h := w.Header()
	h["X-Request-Id"] = []string{id}
	s.setSecurityHeaders(h)
	status, size, err := writePageAnswer(w, r, hit.page, false, hit.state)
	if err != nil && r.Context().Err() != nil {
		status = statusClientClosed
	}
	s.answeredHit(r, hit, id, status, size)
	return true
}

// visitorHit is a visitor's cached page a request may be answered with
// before the router, and how (hit, or stale within the bound).
type visitorHit struct {
	page  *cachedPage
	state string
	route visitorRoute
	start time.Time
}

// findVisitorHit finds the page answerVisitorHit (or the front) answers r
// with, if any.
func (s *Server) findVisitorHit(r *http.Request) (visitorHit, bool) {
	// Any cookie sends the request through the chain: a session (a
	// member's page, or a stale cookie the page clears), or a browser that
	// has just written (freshCookie) and must not get a stale page.
	// An escaped path is left to the chain, which decodes it as it routes.
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || len(r.Header["Cookie"]) > 0 || r.URL.RawPath != "" || s.pages.off {
		return visitorHit{}, false
	}
	vr, ok := s.pages.visitorRoutes.lookup(r)
	if !ok {
		return visitorHit{}, false
	}
	start := time.Now()
	version, err := s.pageVersion(r.Context(), vr.appID, vr.postID)
	if err != nil {
		return visitorHit{}, false
	}
	p, expired, renewing := s.pages.getVisitorPage(vr, version.content, s.build, pageKeyPath(r), start)
	if p == nil {
		return visitorHit{}, false
	}
	state := "hit"
	switch {
	case expired:
		state = "stale"
	case p.engagement < version.engagement:
		// Older counts: served within the staleness bound, as the chain
		// does; past it the chain has one request render while the others
		// get this page, as they get it here while that render is under
		// way (or no refresh could start).
		if start.Sub(p.rendered) >= s.pages.staleFor && !renewing {
			return visitorHit{}, false
		}
		state = "stale"
	}
	s.metrics.pageCacheResult(state)
	return visitorHit{page: p, state: state, route: vr, start: start}, true
}

// answeredHit writes the access line and the metrics of a visitor hit.
func (s *Server) answeredHit(r *http.Request, hit visitorHit, id string, status, size int) {
	s.answered(r.Context(), answeredRequest{site: "main", id: id, method: r.Method, route: hit.route.route, path: r.URL.Path,
		status: status, start: hit.start, size: int64(size), client: s.clientIP(r)})
}

// getVisitorPage is get for a visitor's page key, built in a buffer that
// the map lookup does not copy. renewing: this request could not renew the
// page (another one renders it, or every refresh slot is taken), so the
// chain would answer it as it is. An expired page is answered (expired
// set) only then; otherwise the chain renews it.
func (pc *pageCache) getVisitorPage(vr visitorRoute, content, build, path string, now time.Time) (p *cachedPage, expired, renewing bool) {
	buf := keyBuffers.Get().(*[]byte)
	b := appendPageKey((*buf)[:0], vr.appID, content, build, path, vr.query, "visitor")
	pc.mu.Lock()
	p = pc.entries.getBytes(b)
	if p != nil {
		_, filling := pc.fill[string(b)]
		renewing = filling || len(pc.refreshing) == cap(pc.refreshing)
		if expired = p.expired(now); expired && (!renewing || now.After(p.expires.Add(staleGrace))) {
			p = nil
		}
	}
	pc.mu.Unlock()
	*buf = b
	keyBuffers.Put(buf)
	return p, expired, renewing
}

var keyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}
