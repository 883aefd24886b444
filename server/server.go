// Package server is the HTTP side of Marquee: the main site (pages, JSON API,
// static files, media) and the auth site, both Echo instances sharing handlers.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/render"
	"marquee/server/media"
	"marquee/server/payments"
	"marquee/server/payments/stripe"
	"marquee/server/push"
	"marquee/store"
)

// Server holds every dependency a handler needs; nothing is global.
type Server struct {
	cfg      Config
	store    *store.Storage
	renderer Renderer
	files    media.Storage
	logger   *slog.Logger
	main     *echo.Echo
	auth     *echo.Echo
	// dummyHash makes a sign-in for an unknown account cost as much as a
	// wrong password, so response times do not reveal which e-mails are
	// registered: it is made at the cost new passwords are.
	dummyHash string
	// limiter counts sign-in attempts and member writes against limits
	// (Redis when present);
	// crossOrigin refuses cross-site writes on both sites (csrf.go).
	limiter  *rateLimiter
	limits   Limits
	inFlight *inFlight
	// draining is set when a shutdown begins: /healthz answers 503.
	draining    atomic.Bool
	crossOrigin *http.CrossOriginProtection
	csp         string
	push        *push.Sender
	// payments holds the enabled payment providers by method name.
	payments *payments.Registry
	// cardRenewals is the Stripe provider when cards are on: it makes the
	// subscriptions that renew memberships (the start_card_renewal job).
	cardRenewals *stripe.Provider
	// pages holds rendered pages shared by a viewer class (pagecache.go);
	// cachedRoutes names the routes that use it.
	pages        *pageCache
	cachedRoutes map[string]bool
	metrics      *metrics
	// built serves public/build compressed once per file (static_build.go).
	built *builtFiles
	// requestIDs names requests that come without an id (logging.go).
	requestIDs *requestIDs
	// now is the clock pages are shown as of (their props' now, and the
	// rewrite of a cached page's relative times); tests set it.
	now func() time.Time
	// accessHandlers format the access line's fixed part once (logging.go).
	accessHandlers accessHandlers
	// securityHeaderValues are the values securityHeaders sends, made once.
	securityHeaderValues [4][]string
	// clientIP is the client's address (TRUSTED_PROXIES, client_address.go).
	clientIP echo.IPExtractor
	// mainHandler is the main site: visitor hits answered before the
	// router, then echo (pagecache_fastpath.go).
	mainHandler http.Handler
	// domains maps verified custom domains to their apps (domain_hosts.go);
	// mainHost and authHost are PUBLIC_URL's and AUTH_URL's hosts.
	domains            *domainTable
	mainHost, authHost string
	// build identifies the deployed bundles (render.Engine.BuildID).
	build string
	// acme obtains custom domains' certificates (TLS_ACME, tls_acme.go).
	acme *acmeTLS
}

// Renderer turns a page and its props into HTML: render.Engine (React on
// goja). Tests that need a render to time out for certain give the server
// one that does.
type Renderer interface {
	Render(ctx context.Context, page string, props any) (render.Result, error)
	Document(d render.DocumentData) []byte
	FallbackDocument(title, message string, links [][2]string) []byte
	Manifest() render.Manifest
}

type Deps struct {
	Config   Config
	Store    *store.Storage
	Renderer Renderer
	Files    media.Storage
	Logger   *slog.Logger
	// Push sends web push: the assembly's one sender, which the jobs
	// share (VAPID keys kept in the database). Nil builds one on Store
	// (tests of the server alone).
	Push *push.Sender
	// Payments, when nil, is the wallet alone (if Config.WalletEnabled);
	// the card and PayPal providers are added by whoever builds the server.
	Payments *payments.Registry
	// NoPageCache renders every page per request: scripts/bench's "cache
	// off" column.
	NoPageCache bool
}

func New(d Deps) *Server {
	s := &Server{cfg: d.Config, store: d.Store, renderer: d.Renderer, files: d.Files, logger: d.Logger,
		csp: contentSecurityPolicy(d.Config), pages: newPageCache(d.Config.PageCacheMB<<20, pageDisk(d)), cachedRoutes: map[string]bool{},
		built: newBuiltFiles(filepath.Join("public", "build")), requestIDs: newRequestIDs(), now: time.Now}
	dummy, err := d.Config.PasswordCost.Hash("not-a-real-password")
	if err != nil {
		panic("hash the dummy password: " + err.Error())
	}
	s.dummyHash = dummy
	s.securityHeaderValues = [4][]string{{"nosniff"}, {"strict-origin-when-cross-origin"}, {"DENY"}, {s.csp}}
	wait := d.Config.InFlightWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	s.inFlight = newInFlight(d.Config.MaxInFlight, wait)
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.logger = WithRequestLogger(s.logger)
	// Cached pages are keyed by the build of the bundles they were
	// rendered with: a deploy never serves a page of the last one.
	if b, ok := d.Renderer.(interface{ BuildID() string }); ok {
		s.build = b.BuildID()
	}
	if pool, ok := d.Renderer.(interface{ PoolStats() (int, int) }); ok {
		_, size := pool.PoolStats()
		s.pages.setRenderPool(size)
	}
	s.metrics = newMetrics(d.Store.DB(), d.Renderer, s.pages)
	s.push = d.Push
	if s.push == nil {
		s.push = &push.Sender{Store: d.Store, Subscriber: d.Config.PushSubscriber, Logger: s.logger}
	}
	if s.push.AppBase == nil {
		s.push.AppBase = s.appBaseURL
	}
	s.payments = d.Payments
	if s.payments == nil {
		s.payments = payments.NewRegistry()
		if d.Config.WalletEnabled {
			s.payments.Register(payments.NewWallet(d.Store))
		}
		s.registerCardAndPayPal(d)
	}
	s.limiter = newRateLimiter(d.Store.Redis(), s.logger)
	s.limiter.name = d.Store.RedisKey
	d.Store.OnDatabaseSwap(s.pages.purge)
	s.limits = d.Config.Limits.withDefaults()
	s.pages.off = d.NoPageCache
	s.domains = &domainTable{store: d.Store}
	s.mainHost, s.authHost = urlHost(d.Config.PublicURL), urlHost(d.Config.AuthURL)
	s.crossOrigin = s.newCrossOriginProtection()
	s.clientIP = s.clientAddress()
	s.main = s.newEcho()
	s.auth = s.newEcho()
	s.routes()
	s.mainHandler = s.routeHosts(s.answerVisitorHits(s.main))
	if d.Config.TLSACME {
		s.acme = s.newACME()
		s.mainHandler = s.acme.answer.HTTPChallengeHandler(s.mainHandler)
	}
	return s
}

func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.JSONSerializer = domainJSON{s: s}
	return e
}

// Main and Auth expose the handlers for tests (httptest) and benchmarks.
func (s *Server) Main() http.Handler { return s.mainHandler }
func (s *Server) Auth() http.Handler { return s.auth }

// Listeners are the two sites' bound sockets, and with TLS_ACME the
// HTTPS listener of custom domains (TLS).
type Listeners struct{ Main, Auth, TLS net.Listener }

func (l Listeners) Close() {
	l.Main.Close()
	l.Auth.Close()
	if l.TLS != nil {
		l.TLS.Close()
	}
}

// Listen binds both sites' ports before anything else starts: a port that is
// taken fails at once, and port 0 gets a free port from the kernel with no
// window for another process to take it (tests start servers in parallel).
// cfg then holds the ports bound, and the URLs that were not configured
// follow them.
func Listen(cfg *Config) (Listeners, error) {
	main, err := net.Listen("tcp", net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.Port)))
	if err != nil {
		return Listeners{}, fmt.Errorf("listen on PORT %d: %w", cfg.Port, err)
	}
	auth, err := net.Listen("tcp", net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.AuthPort)))
	if err != nil {
		main.Close()
		return Listeners{}, fmt.Errorf("listen on AUTH_PORT %d: %w", cfg.AuthPort, err)
	}
	var tlsLn net.Listener
	if cfg.TLSACME {
		if tlsLn, err = net.Listen("tcp", cfg.TLSAddr); err != nil {
			main.Close()
			auth.Close()
			return Listeners{}, fmt.Errorf("listen on TLS_ADDR %s: %w", cfg.TLSAddr, err)
		}
		cfg.TLSAddr = tlsLn.Addr().String()
	}
	cfg.Port = main.Addr().(*net.TCPAddr).Port
	cfg.AuthPort = auth.Addr().(*net.TCPAddr).Port
	if cfg.publicURLFromPort {
		cfg.PublicURL = fmt.Sprintf("http://localhost:%d", cfg.Port)
	}
	if cfg.authURLFromPort {
		cfg.AuthURL = fmt.Sprintf("http://localhost:%d", cfg.AuthPort)
	}
	return Listeners{Main: main, Auth: auth, TLS: tlsLn}, nil
}

// Run serves both sites on lns until ctx is cancelled (SIGTERM), then shuts down
// without dropping a connection: /healthz answers 503 at once, and every
// answer from then on says "Connection: close", so each kept-alive
// connection ends after the answer to its next request rather than under a
// request its client is sending (closing idle connections at once, as
// SetKeepAlivesEnabled(false) does, resets a request sent in that
// millisecond). The server keeps serving for Config.DrainDelay while load
// balancers notice and stop sending, and only then closes its listeners (a
// listener closed while clients still connect resets the connections waiting
// in its backlog) and waits up to 10 seconds for requests in flight.
func (s *Server) Run(ctx context.Context, lns Listeners) error {
	go s.warmUp(ctx)
	go s.store.RefreshPageVersions(ctx)
	servers := []*http.Server{
		{Addr: lns.Main.Addr().String(), Handler: s.closeWhenDraining(s.mainHandler), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: s.cfg.IdleTimeout},
		{Addr: lns.Auth.Addr().String(), Handler: s.closeWhenDraining(s.auth), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: s.cfg.IdleTimeout},
	}
	errs := make(chan error, len(servers)+1)
	for i, ln := range []net.Listener{lns.Main, lns.Auth} {
		serve := Serve
		if i == 0 {
			serve = s.ServeMain
		}
		go func(srv *http.Server) {
			if err := serve(srv, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("serve %s: %w", srv.Addr, err)
			}
		}(servers[i])
	}
	serving := []any{"main", s.cfg.PublicURL + "/apps", "auth", s.cfg.AuthURL + "/authenticate/signin",
		"main_addr", lns.Main.Addr().String(), "auth_addr", lns.Auth.Addr().String()}
	if lns.TLS != nil && s.acme != nil {
		defer s.acme.cache.Stop()
		srv := &http.Server{Addr: lns.TLS.Addr().String(), Handler: s.closeWhenDraining(s.mainHandler), TLSConfig: s.acme.tlsConfig(),
			ReadHeaderTimeout: 10 * time.Second, IdleTimeout: s.cfg.IdleTimeout,
			// A refused name's failed handshake is not worth a log line.
			ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug)}
		servers = append(servers, srv)
		ln := lns.TLS
		go func() {
			if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("serve %s: %w", srv.Addr, err)
			}
		}()
		serving = append(serving, "tls_addr", lns.TLS.Addr().String())
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.WatchPageVersions(watchCtx)
	go s.store.WatchDatabase(watchCtx, 0)
	// Test harnesses read the bound ports from this line (port 0).
	s.logger.Info("serving", serving...)
	var runErr error
	select {
	case <-ctx.Done():
		s.draining.Store(true)
		s.logger.Info("shutting down: health check now 503, draining", "delay", s.cfg.DrainDelay)
		time.Sleep(s.cfg.DrainDelay)
	case runErr = <-errs:
	}
	// Connections still idle after the drain belong to clients that
	// stopped sending; Shutdown closes them and waits for the rest.
	for _, srv := range servers {
		srv.SetKeepAlivesEnabled(false)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			s.logger.Warn("shutdown", "addr", srv.Addr, "err", err)
		}
	}
	s.pages.disk.close()
	s.logger.Info("stopped")
	return runErr
}

// appIDsRemembered bounds the app names a starting server looks up ahead
// (warmUp).
const appIDsRemembered = 10_000

// warmUp does, while the server starts answering, what the first burst of
// requests would otherwise all do at once: open the database's connections
// and learn the apps' ids by name (each a query, and a thousand apps' pages
// read at random ask for a thousand names in their first second). A
// failure only leaves the work to the requests.
func (s *Server) warmUp(ctx context.Context) {
	if err := s.store.WarmConnections(ctx); err != nil {
		s.logger.Warn("warming the database connections", "err", err)
	}
	ids, err := s.store.AppIDsByName(ctx, appIDsRemembered)
	if err != nil {
		s.logger.Warn("learning the apps' ids", "err", err)
		return
	}
	for name, id := range ids {
		s.pages.appIDs.LoadOrStore(name, id)
	}
}

// pageDisk is the page cache's disk tier: only without Redis, where the
// instances' shared copies are the second tier.
func pageDisk(d Deps) *diskPages {
	if d.Store.Redis() != nil {
		return nil
	}
	logger := d.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return newDiskPages(d.Config.PageCacheDir, keptPagesDir(d.Config.DatabaseURL, d.Store.CurrentNamespace()), d.Config.PageCacheDiskMB, logger)
}

// closeWhenDraining answers "Connection: close" once a shutdown began: the
// client's next request opens a new connection (to another instance, once
// its load balancer saw /healthz turn 503), and this one ends after an
// answer instead of under a request.
func (s *Server) closeWhenDraining(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}
