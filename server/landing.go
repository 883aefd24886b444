package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// loadLanding is the one loader behind the landing page and its JSON call.
func (s *Server) loadLanding(c echo.Context, idOrName string) (*store.AppView, error) {
	view, err := s.store.Landing(c.Request().Context(), idOrName)
	if err != nil {
		return nil, wrapLoad(err, "App not found")
	}
	return view, nil
}

// GET /api/app/:appId/landing
func (s *Server) apiLanding(c echo.Context) error {
	view, err := s.loadLanding(c, c.Param("appId"))
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, view)
}

// GET /apps/:app. The page cache (pagecache.go) keeps it whole for visitors
// and once per role for members.
func (s *Server) pageLanding(c echo.Context) error {
	sc := scopeFromPage(c) // loaded already when the page cache keyed a member's page
	var err error
	if sc == nil {
		sc, err = s.pageScope(c, c.Param("app"))
	}
	var appErr *Error
	if errors.As(err, &appErr) && appErr.Status == http.StatusNotFound {
		return err
	}
	if err != nil {
		// The landing page has its own error state with Retry.
		s.logger.Error("landing load failed", "app", c.Param("app"), "err", err)
		props := s.pageProps(c, nil)
		props.Error, props.Status = "Failed to load landing page", http.StatusServiceUnavailable
		props.Data = map[string]string{"appName": c.Param("app")}
		return s.renderPage(c, "Landing", props)
	}
	return s.renderPage(c, "Landing", s.pageProps(c, sc))
}

// GET /apps
func (s *Server) pageAppsIndex(c echo.Context) error {
	return s.renderPage(c, "AppsIndex", s.pageProps(c, nil))
}

// GET /healthz answers 200 only when the database answers.
func (s *Server) healthz(c echo.Context) error {
	if err := store.Ping(c.Request().Context(), s.store.DB); err != nil {
		s.logger.Error("health check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": "unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]any{"status": "ok"})
}
