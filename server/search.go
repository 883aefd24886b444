package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// searchScope is what the viewer may find: posts when the community is on,
// items when they may open the store, events when events are on.
func searchScope(sc *Scope) store.SearchScope {
	f := sc.App.Settings.Features
	return store.SearchScope{
		Posts:  f.Community.Enabled && sc.App.Community != nil,
		Items:  sc.Can.CanAccessStore && sc.App.Store != nil,
		Events: f.Events.Enabled,
		Reader: sc.Reader,
	}
}

// loadSearch is the one loader of the search page and the overlay.
func (s *Server) loadSearch(c echo.Context, sc *Scope) (*store.SearchResults, error) {
	q := c.QueryParam("q")
	if len([]rune(q)) > 200 {
		return nil, badRequest("Search text is too long")
	}
	return s.store.Search(c.Request().Context(), sc.App.ID, sc.App.Name, q, searchScope(sc))
}

// GET /api/search/apps/:appId?q: the header overlay's results, grouped.
// Signed-in viewers only, as the Search button (SPEC.md section 2).
func (s *Server) apiSearch(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	if sc.Gated {
		return forbidden("A subscription is required")
	}
	res, err := s.loadSearch(c, sc)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, res)
}

// GET /apps/:app/search?q: the same results as a page (the overlay's form
// submits here without JavaScript).
func (s *Server) pageSearch(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.redirectToSignIn(c)
	}
	res, err := s.loadSearch(c, sc)
	if err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	props.Data = res
	return s.renderPage(c, "Search", props)
}
