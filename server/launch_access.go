package server

import (
	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// An unpublished app (issue 43 item 1) answers to its staff alone: every
// page and JSON call through its scope (scopeOfView), and here the routes
// that need no viewer otherwise (its icons and manifest). It has no
// sitemap and no feed, and the sitemap index leaves it out
// (store.SitemapApps), for everyone: they are for crawlers and readers.

// appAsset loads the app of an :app route that does not depend on the
// viewer; an unpublished app's is for its staff only, kept by no shared
// cache.
func (s *Server) appAsset(c echo.Context) (*store.AppView, error) {
	view, err := s.loadLanding(c, c.Param("app"))
	if err != nil {
		return nil, err
	}
	if view.Unpublished {
		if _, err := s.scopeOfView(c, view); err != nil {
			return nil, err
		}
		c.Response().Header().Set("Cache-Control", "private, no-cache")
		c.Response().Header().Set("X-Robots-Tag", "noindex")
	}
	return view, nil
}

// requirePublished: what only a published app has (its sitemap, its feed).
func requirePublished(sc *Scope) error {
	if sc.App.Unpublished {
		return notFound("This app is not published yet")
	}
	return nil
}

// seesUnpublished reports whether the user is staff of the app (where no
// scope is at hand: the auth site's branded pages).
func (s *Server) seesUnpublished(c echo.Context, appID, userID string) bool {
	m, err := s.store.MembershipOf(c.Request().Context(), appID, userID)
	return err == nil && m != nil && access.SeesUnpublished(m.Role)
}
