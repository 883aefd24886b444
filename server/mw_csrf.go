package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// newCrossOriginProtection builds Go's CSRF check (net/http, Go 1.25+): an
// unsafe method is refused when Sec-Fetch-Site says cross-site, or, for
// browsers without it, when Origin names another host. Both of our sites
// trust each other: the auth site's forms and the main site's islands may
// write to either.
func (s *Server) newCrossOriginProtection() *http.CrossOriginProtection {
	cop := http.NewCrossOriginProtection()
	for _, origin := range []string{s.cfg.PublicURL, s.cfg.AuthURL} {
		if origin == "" {
			continue
		}
		if err := cop.AddTrustedOrigin(origin); err != nil {
			// A malformed URL in configuration only loses the exemption;
			// same-origin requests still pass, so log and carry on.
			s.logger.Warn("trusted origin ignored", "origin", origin, "err", err)
		}
	}
	// One-click unsubscribe (RFC 8058) is posted by mail providers; the
	// token in the path is its only authority.
	cop.AddInsecureBypassPattern("POST /mail/unsubscribe/{token}")
	return cop
}

// refuseCrossSite answers 403 to cross-site POST, PUT, PATCH and DELETE on
// both sites, before any handler reads the session cookie. GET, HEAD and
// OPTIONS pass (the check ignores them), so links and images still work.
func (s *Server) refuseCrossSite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.crossOrigin.Check(c.Request()); err != nil {
			return &Error{Status: http.StatusForbidden, Message: "Cross-site request refused", Err: err}
		}
		return next(c)
	}
}
