package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

const sessionCookie = "marquee_session"

// Viewer is who is asking, across apps: nil User means a visitor.
type Viewer struct {
	User  *store.User
	Token string
	// LookupErr is set when the session could not be checked (a dependency
	// is down). Pages treat the viewer as signed out (SPEC.md section 4);
	// API calls that need to know who is asking answer 503 instead.
	LookupErr error
}

func viewerOf(c echo.Context) *Viewer {
	if v, ok := c.Get("viewer").(*Viewer); ok {
		return v
	}
	return &Viewer{}
}

// skipsSession lists what never depends on who asks: static files, media and
// the health check pay no session lookup.
func skipsSession(path string) bool {
	return strings.HasPrefix(path, "/static/") || strings.HasPrefix(path, "/media/") ||
		path == "/healthz" || path == "/favicon.ico" || path == "/manifest.webmanifest"
}

// loadViewer resolves the session cookie.
func (s *Server) loadViewer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := &Viewer{}
		if !skipsSession(c.Request().URL.Path) {
			s.lookUpSession(c, v)
		}
		c.Set("viewer", v)
		return next(c)
	}
}

// lookUpSession fills v from the session cookie, if any: the user, or
// LookupErr when the lookup itself failed (an unknown token is no error).
func (s *Server) lookUpSession(c echo.Context, v *Viewer) {
	ck, err := c.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return
	}
	user, err := s.store.SessionUser(c.Request().Context(), ck.Value)
	switch {
	case err == nil:
		v.User, v.Token = user, ck.Value
		// Account settings list sessions by last use (written at most
		// every five minutes per session and process).
		s.store.TouchSession(c.Request().Context(), ck.Value, time.Now().UTC())
	case !errors.Is(err, store.ErrNotFound):
		s.logger.Warn("session lookup failed", "err", err)
		v.LookupErr = err
	}
}

// securityHeaders applies to every response; the CSP matters for HTML pages,
// which inline their CSS and load only same-origin module scripts. Media is
// served by the main site, so the auth site's pages (app branding) name it.
func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// Canonical keys and values made once: Set canonicalised each key
		// and allocated each value on every request. The slices are shared
		// by every response; a handler replaces a value (Set), never
		// writes into one.
		s.setSecurityHeaders(c.Response().Header())
		if c.Echo() == s.auth {
			s.allowDomainForms(c)
		}
		return next(c)
	}
}

// allowDomainForms lets the auth site's forms for an app on its own domain
// end there: a sign-in is redirected through /authenticate/continue to the
// domain's /auth/callback, and Chromium checks a form's redirects against
// form-action (domain_signin.go). Only the domain of the app the page is
// for is added.
func (s *Server) allowDomainForms(c echo.Context) {
	name := c.QueryParam("app")
	if name == "" {
		return
	}
	if d := s.domains.get(c.Request().Context()).byName[name]; d != "" {
		// Its icon is the domain's too (img-src).
		o := s.domainOrigin(d)
		csp := strings.Replace(s.csp, "form-action ", "form-action "+o+" ", 1)
		c.Response().Header().Set("Content-Security-Policy", strings.Replace(csp, "img-src ", "img-src "+o+" ", 1))
	}
}

func (s *Server) setSecurityHeaders(h http.Header) {
	for i, name := range securityHeaderNames {
		h[name] = s.securityHeaderValues[i]
	}
}

// securityHeaderNames name securityHeaderValues, in order.
var securityHeaderNames = [4]string{"X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options", "Content-Security-Policy"}

// contentSecurityPolicy allows scripts from this site only. Images, video
// and uploads may also reach the main site (auth pages show its images) and
// the S3 endpoint, to which the browser PUTs files and from which it loads them.
func contentSecurityPolicy(cfg Config) string {
	media := "'self' " + cfg.PublicURL
	if cfg.S3.Enabled() {
		scheme := "http://"
		if cfg.S3.UseSSL {
			scheme = "https://"
		}
		media += " " + scheme + cfg.S3.Endpoint
	}
	scripts, frames, forms := "'self'", "", "'self' "+cfg.AuthURL+" "+cfg.PublicURL
	if cfg.Stripe.Enabled() {
		// The Payment Element is Stripe.js and Stripe's iframes, loaded
		// only on the checkout's payment step.
		scripts += " https://js.stripe.com"
		frames = "; frame-src https://js.stripe.com https://hooks.stripe.com"
		// The studio's Payouts forms are redirected to Stripe's hosted
		// Connect onboarding and Express dashboard (connect.stripe.com),
		// which form-action governs in Chromium; with another API base (a
		// fake in tests) its own pages stand in for them.
		forms += " https://connect.stripe.com"
		if o := origin(cfg.Stripe.APIBase); o != "" {
			forms += " " + o
		}
	}
	if cfg.PayPal.Enabled() {
		// The pay form without JavaScript is redirected to PayPal's
		// approval page, which form-action governs in Chromium.
		forms += " https://www.paypal.com https://www.sandbox.paypal.com " + origin(cfg.PayPal.APIBase)
	}
	return "default-src 'self'; script-src " + scripts + "; style-src 'self' 'unsafe-inline'; " +
		"img-src " + media + " data: blob: https:; media-src " + media + " blob: https:; connect-src " + media + " https:; " +
		"form-action " + forms + frames + "; frame-ancestors 'none'; base-uri 'self'; object-src 'none'"
}

// headAsGet answers HEAD like GET (crawlers and link checkers send it);
// net/http drops the body of a HEAD response by itself.
func headAsGet(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodHead {
			c.Request().Method = http.MethodGet
		}
		return next(c)
	}
}

// staticCache marks hashed build output immutable; other files revalidate.
func staticCache(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.HasPrefix(c.Request().URL.Path, "/static/build/") {
			c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			c.Response().Header().Set("Cache-Control", "public, max-age=3600")
		}
		return next(c)
	}
}

// sessionCookie builds the session cookie. Domain is set only when
// COOKIE_DOMAIN is: in development both sites are localhost (cookies ignore
// ports); in production the main and auth hosts share that parent domain.
func (s *Server) sessionCookie(value string, maxAge int) *http.Cookie {
	ck := &http.Cookie{
		Name: sessionCookie, Value: value, Path: "/", Domain: s.cfg.CookieDomain, HttpOnly: true,
		Secure: s.cfg.SecureCookies(), SameSite: http.SameSiteLaxMode, MaxAge: maxAge,
	}
	if maxAge > 0 {
		ck.Expires = time.Now().Add(time.Duration(maxAge) * time.Second)
	} else {
		ck.Expires = time.Unix(0, 0)
	}
	return ck
}

// On a custom domain the cookie is the domain's own (host-only): it is
// never shared with the main site's hosts (domain_signin.go).
func (s *Server) setSessionCookie(c echo.Context, token string) {
	c.SetCookie(s.hostSessionCookie(c, token, int(store.SessionTTL/time.Second)))
}

func (s *Server) clearSessionCookie(c echo.Context) {
	c.SetCookie(s.hostSessionCookie(c, "", -1))
}

func (s *Server) hostSessionCookie(c echo.Context, value string, maxAge int) *http.Cookie {
	ck := s.sessionCookie(value, maxAge)
	if customHost(c.Request()) != nil {
		ck.Domain = ""
	}
	return ck
}

// origin is scheme://host of a URL ("" when it has none).
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
