package server

import (
	"github.com/labstack/echo/v4"

	"marquee/store"
)

// appPage is the middleware of every /apps/:app/... page: it loads the
// landing data (cached) and the viewer's role in the app, or answers 404.
func (s *Server) appPage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		view, err := s.loadLanding(c, c.Param("app"))
		if err != nil {
			return err
		}
		ac, err := s.appContext(c, view.ID, view.Settings)
		if err != nil {
			return err
		}
		c.Set("appView", view)
		c.Set("appCtx", ac)
		return next(c)
	}
}

// appOf returns what appPage loaded.
func appOf(c echo.Context) (*store.AppView, *AppContext) {
	view, _ := c.Get("appView").(*store.AppView)
	ac, _ := c.Get("appCtx").(*AppContext)
	return view, ac
}

// requireUser answers 401 'Authentication required' to visitors.
func requireUser(c echo.Context) (*store.User, error) {
	if u := viewerOf(c).User; u != nil {
		return u, nil
	}
	return nil, unauthorized("Authentication required")
}
