package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// gateOpen lists the app sub-paths the subscription gate lets through: the
// cart and checkout (SPEC.md section 2) and what completing or leaving a
// checkout needs (payment-success, cancel_order). Every deeper path SPEC
// names, the profile included, leads a gated member home, where the gate's
// section offers Sign Out and Unfollow as forms.
var gateOpen = map[string]bool{
	"/cart": true, "/checkout": true, "/payment-success": true, "/cancel_order": true,
	// Supporting the creator is not content: a gated member may donate.
	"/donate": true,
	// Joining is how a gated fan gets in: the membership page and its forms,
	// and the wallet's Add funds (a fan with $0 tops up to join).
	"/membership": true, "/membership/cancel": true, "/membership/portal": true,
	"/transactions": true, "/wallet/topup/return": true,
}

// subscriptionGate runs after appPage on every /apps/:app/... page: a viewer
// the gate holds back (AppContext.Gated, decided by access.Gated) goes to the
// app's landing page, which stays open to everyone.
func (s *Server) subscriptionGate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc := scopeFromPage(c)
		if sc == nil || !sc.Gated {
			return next(c)
		}
		view := sc.App
		base := "/apps/" + view.Name
		sub := strings.TrimPrefix(c.Request().URL.Path, base)
		if gateOpen[sub] || strings.HasPrefix(sub, "/checkout/") {
			return next(c)
		}
		return c.Redirect(http.StatusFound, "/apps/"+url.PathEscape(view.Name))
	}
}
