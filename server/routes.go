package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// routes lists every route of both sites in one place.
func (s *Server) routes() {
	for _, e := range []*echo.Echo{s.main, s.auth} {
		e.Pre(middleware.RemoveTrailingSlashWithConfig(middleware.TrailingSlashConfig{RedirectCode: http.StatusMovedPermanently}))
		e.Use(middleware.Recover())
		// Slow mobile links: compress pages, JSON and bundles; media is
		// already compressed.
		e.Use(middleware.GzipWithConfig(middleware.GzipConfig{
			Skipper: func(c echo.Context) bool { return strings.HasPrefix(c.Request().URL.Path, "/media") },
		}))
		e.Use(s.securityHeaders)
		e.Use(s.loadViewer)
		e.GET("/healthz", s.healthz)
	}

	m := s.main
	m.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/apps") })
	static := m.Group("/static", staticCache)
	static.Static("/", "public")
	m.GET("/manifest.webmanifest", s.webManifest)
	m.GET("/media/*", s.mediaGet)

	// Pages.
	m.GET("/apps", s.pageAppsIndex)
	m.GET("/apps/:app", s.pageLanding)
	app := m.Group("/apps/:app", s.appPage)
	_ = app // app pages are added to this group by their features below

	// JSON API (SPEC.md section 7).
	api := m.Group("/api")
	api.GET("/app/:appId/landing", s.apiLanding)

	m.RouteNotFound("/*", func(c echo.Context) error { return notFound("Page not found") })
	s.auth.RouteNotFound("/*", func(c echo.Context) error { return notFound("Page not found") })
}
