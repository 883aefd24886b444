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
	"strings"
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
	renderer *render.Engine
	files    media.Storage
	logger   *slog.Logger
	main     *echo.Echo
	auth     *echo.Echo
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
}

type Deps struct {
	Config   Config
	Store    *store.Storage
	Renderer *render.Engine
	Files    media.Storage
	Logger   *slog.Logger
	// Push sends web push; nil builds one on Store (VAPID keys kept in
	// the database).
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
		csp: contentSecurityPolicy(d.Config), pages: newPageCache(d.Store), cachedRoutes: map[string]bool{}}
	wait := d.Config.InFlightWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	s.inFlight = newInFlight(d.Config.MaxInFlight, wait)
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.push = d.Push
	if s.push == nil {
		s.push = &push.Sender{Store: d.Store, Subscriber: d.Config.PushSubscriber, Logger: s.logger}
	}
	s.payments = d.Payments
	if s.payments == nil {
		s.payments = payments.NewRegistry()
		if d.Config.WalletEnabled {
			s.payments.Register(payments.NewWallet(d.Store))
		}
		s.registerCardAndPayPal(d)
	}
	s.limiter = newRateLimiter(d.Store.Redis, s.logger)
	s.limits = d.Config.Limits.withDefaults()
	d.Store.PageBumped = s.pages.versions.bumped
	if d.Store.MediaURL == "" {
		// Stable media URLs (og:image, srcset) point at this site.
		d.Store.MediaURL = strings.TrimRight(d.Config.PublicURL, "/")
	}
	s.pages.off = d.NoPageCache
	s.crossOrigin = s.newCrossOriginProtection()
	s.main = s.newEcho()
	s.auth = s.newEcho()
	s.routes()
	return s
}

func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	return e
}

// Main and Auth expose the handlers for tests (httptest) and benchmarks.
func (s *Server) Main() http.Handler { return s.main }
func (s *Server) Auth() http.Handler { return s.auth }

// Run serves both sites until ctx is cancelled (SIGTERM), then shuts down
// without dropping a connection: /healthz answers 503 at once and keep-alive
// ends, the server keeps serving for Config.DrainDelay while load balancers
// notice and stop sending, and only then closes its listeners (a listener
// closed while clients still connect resets the connections waiting in its
// backlog) and waits up to 10 seconds for requests in flight.
func (s *Server) Run(ctx context.Context) error {
	servers := []*http.Server{
		{Addr: fmt.Sprintf(":%d", s.cfg.Port), Handler: s.main, ReadHeaderTimeout: 10 * time.Second},
		{Addr: fmt.Sprintf(":%d", s.cfg.AuthPort), Handler: s.auth, ReadHeaderTimeout: 10 * time.Second},
	}
	errs := make(chan error, len(servers))
	for _, srv := range servers {
		ln, err := net.Listen("tcp", srv.Addr)
		if err != nil {
			return fmt.Errorf("listen %s: %w", srv.Addr, err)
		}
		go func(srv *http.Server) {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("serve %s: %w", srv.Addr, err)
			}
		}(srv)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.WatchPageVersions(watchCtx)
	s.logger.Info("serving", "main", s.cfg.PublicURL+"/apps", "auth", s.cfg.AuthURL+"/authenticate/signin")
	var runErr error
	select {
	case <-ctx.Done():
		s.draining.Store(true)
		for _, srv := range servers {
			srv.SetKeepAlivesEnabled(false)
		}
		s.logger.Info("shutting down: health check now 503, draining", "delay", s.cfg.DrainDelay)
		time.Sleep(s.cfg.DrainDelay)
	case runErr = <-errs:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			s.logger.Warn("shutdown", "addr", srv.Addr, "err", err)
		}
	}
	s.logger.Info("stopped")
	return runErr
}
