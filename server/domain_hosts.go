package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// Custom domains (issue 42 item 3). One table maps the verified domains to
// their apps (domainTable), one handler maps a request's host to an app
// before routing (routeHosts), and one function gives an app's base URL
// (appBaseURL): its verified domain's origin, or PUBLIC_URL/apps/{name}.

// domainTableTTL is how long an instance trusts its table of verified
// domains: a domain verified or removed on another instance (or by the CLI)
// is served or dropped here within it. Writes here refresh at once.
const domainTableTTL = 5 * time.Second

type domainSnapshot struct {
	at     time.Time
	seq    int64 // the read that made it: a later read's table wins
	byHost map[string]store.DomainRoute
	byApp  map[string]string // app id -> domain
	byName map[string]string // app name -> domain
}

type domainTable struct {
	store *store.Storage
	cur   atomic.Pointer[domainSnapshot]
	// reading is set while a read of the table runs; done is closed when
	// it ends.
	mu      sync.Mutex
	reading chan struct{}
	seq     atomic.Int64
}

var emptyDomains = &domainSnapshot{byHost: map[string]store.DomainRoute{}, byApp: map[string]string{}, byName: map[string]string{}}

// coldWait bounds how long a request waits for the first read of the
// table (a database that does not answer must not hold every request).
const coldWait = 500 * time.Millisecond

// get answers the table. One older than domainTableTTL is answered as it
// is while a read of the new one runs in the background, so no request
// waits on the database for it; before the first read, a request waits up
// to coldWait, then goes on as if no domain were verified.
func (t *domainTable) get(ctx context.Context) *domainSnapshot {
	snap := t.cur.Load()
	if snap != nil && time.Since(snap.at) < domainTableTTL {
		return snap
	}
	done := t.refresh()
	if snap != nil {
		return snap
	}
	select {
	case <-done:
	case <-time.After(coldWait):
	case <-ctx.Done():
	}
	if snap = t.cur.Load(); snap != nil {
		return snap
	}
	return emptyDomains
}

// refresh starts a read of the table unless one runs, and answers a
// channel closed when the read ends.
func (t *domainTable) refresh() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reading != nil {
		return t.reading
	}
	done := make(chan struct{})
	t.reading = done
	go func() {
		t.read(context.Background())
		t.mu.Lock()
		t.reading = nil
		t.mu.Unlock()
		close(done)
	}()
	return done
}

// read reads the table now. A failed read keeps the table it had (or
// none) and is tried again a second later.
func (t *domainTable) read(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	seq := t.seq.Add(1)
	routes, err := t.store.VerifiedDomains(ctx)
	if err != nil {
		t.store.Logger().Warn("custom domains: table not read", "err", err)
		keep := *emptyDomains
		if snap := t.cur.Load(); snap != nil {
			keep = *snap
		}
		keep.at, keep.seq = time.Now().Add(time.Second-domainTableTTL), seq
		t.store1(&keep)
		return
	}
	next := &domainSnapshot{at: time.Now(), seq: seq, byHost: make(map[string]store.DomainRoute, len(routes)),
		byApp: make(map[string]string, len(routes)), byName: make(map[string]string, len(routes))}
	for _, r := range routes {
		next.byHost[r.Domain], next.byApp[r.AppID], next.byName[r.AppName] = r, r.Domain, r.Domain
	}
	t.store1(next)
}

// store1 files a table unless a read begun later already filed its own.
func (t *domainTable) store1(next *domainSnapshot) {
	for {
		cur := t.cur.Load()
		if cur != nil && cur.seq > next.seq {
			return
		}
		if t.cur.CompareAndSwap(cur, next) {
			return
		}
	}
}

// changed reads the table again at once, after a write on this instance:
// a domain added, verified or removed here is served or dropped by the
// next request.
func (t *domainTable) changed(ctx context.Context) {
	t.read(context.WithoutCancel(ctx))
}

// DomainsChanged reads the table of verified domains again (a job of this
// process verified one).
func (s *Server) DomainsChanged() { s.domains.changed(context.Background()) }

// VerifiedDomain answers the app a verified domain serves: the question an
// ACME on-demand policy (and GET /internal/domains/allowed) asks before a
// certificate is issued for a name.
func (s *Server) VerifiedDomain(ctx context.Context, domain string) (store.DomainRoute, bool) {
	d, err := store.NormalizeDomain(domain)
	if err != nil {
		return store.DomainRoute{}, false
	}
	r, ok := s.domains.get(ctx).byHost[d]
	return r, ok
}

type customHostKey struct{}

// customHost is the verified domain a request came to, or nil on the main
// site.
func customHost(r *http.Request) *store.DomainRoute {
	d, _ := r.Context().Value(customHostKey{}).(*store.DomainRoute)
	return d
}

// hostOf is a request's host name: lower case, without port or final dot.
func hostOf(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

func urlHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return hostOf(p.Host)
}

// siteHost reports whether host is one of the operator's own: the main
// and auth sites' hosts, localhost and any IP address (health checks and
// proxies that name an instance by address). Every other host is a custom
// domain or answers 404.
func (s *Server) siteHost(host string) bool { return siteHostOf(host, s.mainHost, s.authHost) }

func siteHostOf(host, mainHost, authHost string) bool {
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil {
		return true
	}
	return host == mainHost || host == authHost
}

// domainOrigin is a custom domain's origin: with TLS_ACME, https on the
// standard port (where ACME checks TLS-ALPN-01 too: TLS_ADDR is 443, or a
// port 443 is forwarded to); else PUBLIC_URL's scheme (and port, in
// development, where one listener serves every host).
func (s *Server) domainOrigin(domain string) string {
	if s.cfg.TLSACME {
		return "https://" + domain
	}
	scheme, port := "https", ""
	if p, err := url.Parse(s.cfg.PublicURL); err == nil {
		scheme, port = p.Scheme, p.Port()
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(domain, port)
	}
	return scheme + "://" + domain
}

// requestOrigin is the origin a request came to as the host routing
// resolved it: a verified custom domain's (domainOrigin), or the main
// site's (PUBLIC_URL's scheme and host) for every host of the operator's.
// It is what origin(appBaseURL) answers for an app on that origin.
func (s *Server) requestOrigin(r *http.Request) string {
	if d := customHost(r); d != nil {
		return s.domainOrigin(d.Domain)
	}
	return origin(s.cfg.PublicURL)
}

// appBaseURL is where an app lives, absolute, without a final slash: its
// verified domain's origin, or PUBLIC_URL/apps/{name}. Every URL the server
// makes for an app (canonical links, sitemap, feeds, calendars, mails,
// push, payment returns) starts with it.
func (s *Server) appBaseURL(ctx context.Context, appID, appName string) string {
	if d := s.domains.get(ctx).byApp[appID]; d != "" {
		return s.domainOrigin(d)
	}
	return s.cfg.PublicURL + "/apps/" + url.PathEscape(appName)
}

// AppBaseURL is appBaseURL for the job queue's push sender.
func (s *Server) AppBaseURL(ctx context.Context, appID, appName string) string {
	return s.appBaseURL(ctx, appID, appName)
}

// appBaseByName is appBaseURL by the app's name (mails know apps by name).
func (s *Server) appBaseByName(name string) string {
	if d := s.domains.get(context.Background()).byName[name]; d != "" {
		return s.domainOrigin(d)
	}
	return s.cfg.PublicURL + "/apps/" + url.PathEscape(name)
}

// appLink is appBaseURL with path (which starts with a slash, or is "":
// the app's home, "/" on its domain).
func (s *Server) appLink(ctx context.Context, appID, appName, path string) string {
	if d := s.domains.get(ctx).byApp[appID]; d != "" {
		if path == "" {
			path = "/"
		}
		return s.domainOrigin(d) + path
	}
	return s.cfg.PublicURL + "/apps/" + url.PathEscape(appName) + path
}

// appBasePath is what a page's links to the app start with: "" on the
// app's own domain (its pages live at the root), /apps/{name} elsewhere.
func appBasePath(r *http.Request, appName string) string {
	if customHost(r) != nil {
		return ""
	}
	return "/apps/" + url.PathEscape(appName)
}

// sharedPaths are the paths every host serves as the main site does: the
// JSON API, bundles and media; the rest of a custom domain's paths are its
// app's (/sw.js too: the app's own service worker, of scope "/" there).
var sharedPaths = []string{"/api/", "/static/", "/media/", "/media-upload/", "/mail/"}

func sharedPath(p string) bool {
	switch p {
	case "/healthz", "/readyz", "/favicon.ico", "/robots.txt":
		return true
	}
	for _, prefix := range sharedPaths {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// routeHosts maps the request's host to an app before anything else sees
// the request. On the main site, a page of an app that has a verified
// domain answers 301 to the same page there, but for the app's service
// worker there (a browser never follows a redirect to update a worker, and
// the main site's keeps delivering the pushes of members subscribed there
// only: push.Sender). On a verified domain, /x is
// the app's /apps/{name}/x (its own links never carry the prefix, and one
// that does, from a script, is sent to the clean path); the request
// remembers the domain (customHost) for links, cookies and cache keys.
// Any other host answers 404: never another app, never the main site.
func (s *Server) routeHosts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOf(r.Host)
		get := r.Method == http.MethodGet || r.Method == http.MethodHead
		if s.siteHost(host) {
			if get && strings.HasPrefix(r.URL.Path, "/apps/") {
				rest := strings.TrimPrefix(r.URL.Path, "/apps/")
				name, tail, _ := strings.Cut(rest, "/")
				if d := s.domains.get(r.Context()).byName[name]; d != "" && name != "" && tail != "sw.js" {
					target := s.domainOrigin(d) + "/" + sameSiteTail(tail)
					if r.URL.RawQuery != "" {
						target += "?" + r.URL.RawQuery
					}
					http.Redirect(w, r, target, http.StatusMovedPermanently)
					return
				}
			}
			next.ServeHTTP(w, r)
			return
		}
		route, ok := s.domains.get(r.Context()).byHost[host]
		if !ok {
			s.unknownHost(w)
			return
		}
		prefix := "/apps/" + route.AppName
		p := r.URL.Path
		r2 := r.WithContext(context.WithValue(r.Context(), customHostKey{}, &route))
		u := *r.URL
		r2.URL = &u
		switch {
		case sharedPath(p):
		case p == prefix || strings.HasPrefix(p, prefix+"/"):
			if get {
				target := "/" + sameSiteTail(strings.TrimPrefix(strings.TrimPrefix(p, prefix), "/"))
				if r.URL.RawQuery != "" {
					target += "?" + r.URL.RawQuery
				}
				http.Redirect(w, r, target, http.StatusMovedPermanently)
				return
			}
		case p == "/apps" || strings.HasPrefix(p, "/apps/") || p == "/internal" || strings.HasPrefix(p, "/internal/") || p == "/metrics":
			s.unknownHost(w)
			return
		default:
			if p == "/" {
				p = ""
			}
			u.Path = prefix + p
			if u.RawPath != "" {
				u.RawPath = "/apps/" + url.PathEscape(route.AppName) + u.RawPath
			}
			r2.RequestURI = u.RequestURI()
		}
		next.ServeHTTP(&domainWriter{ResponseWriter: w, prefix: prefix, mainPrefix: s.cfg.PublicURL + prefix, origin: s.domainOrigin(route.Domain)}, r2)
	})
}

// sameSiteTail keeps a redirect's path on the host it is made for.
func sameSiteTail(tail string) string { return strings.TrimLeft(tail, "/\\") }

func (s *Server) unknownHost(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	w.Write(s.renderer.FallbackDocument("Not found", "No site is served at this address.", nil))
}

// domainWriter drops the /apps/{name} prefix from the redirects a custom
// domain's pages answer (a form posted, then sent back to its page): the
// handlers write the app's paths, and on its domain those live at the root.
type domainWriter struct {
	http.ResponseWriter
	prefix, mainPrefix, origin string
	wrote                      bool
}

func (d *domainWriter) WriteHeader(code int) {
	if !d.wrote {
		d.wrote = true
		if loc := d.Header().Get("Location"); loc != "" {
			if rest, ok := strings.CutPrefix(loc, d.mainPrefix); ok && (rest == "" || strings.ContainsAny(rest[:1], "/?#")) {
				d.Header().Set("Location", d.origin+"/"+strings.TrimPrefix(rest, "/"))
			} else if rest, ok := strings.CutPrefix(loc, d.prefix); ok && (rest == "" || strings.ContainsAny(rest[:1], "/?#")) {
				d.Header().Set("Location", "/"+strings.TrimPrefix(rest, "/"))
			}
		}
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *domainWriter) Write(b []byte) (int, error) {
	if !d.wrote {
		d.WriteHeader(http.StatusOK)
	}
	return d.ResponseWriter.Write(b)
}

func (d *domainWriter) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (d *domainWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// mediaOnDomain moves the main site's media URLs (PUBLIC_URL/media/...: the
// stable URLs of public and members' files, and locally stored files'
// signed ones) in a response body made for a custom domain to the domain's
// own /media/ (served there as on the main site: sharedPaths). A page on
// the domain then loads its images from its own origin, where a member's
// files are opened with the domain's session cookie (the main site's is
// never sent there), and the viewer's browser never asks the operator's
// host for them. The views the store caches keep the main site's URLs, so
// the move happens on the way out: the page document (renderDocument) and
// every JSON answer (domainJSON). Elsewhere, b is answered as it is.
func (s *Server) mediaOnDomain(r *http.Request, b []byte) []byte {
	d := customHost(r)
	if d == nil {
		return b
	}
	from := s.cfg.PublicURL + "/media/"
	if !bytes.Contains(b, []byte(from)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(from), []byte(s.domainOrigin(d.Domain)+"/media/"))
}

// domainJSON is echo's JSON serializer with media URLs on the custom
// domain a request came to (mediaOnDomain).
type domainJSON struct {
	echo.DefaultJSONSerializer
	s *Server
}

func (j domainJSON) Serialize(c echo.Context, i any, indent string) error {
	if customHost(c.Request()) == nil {
		return j.DefaultJSONSerializer.Serialize(c, i, indent)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(i); err != nil {
		return err
	}
	_, err := c.Response().Write(j.s.mediaOnDomain(c.Request(), buf.Bytes()))
	return err
}
