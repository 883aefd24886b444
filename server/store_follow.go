package server

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
)

// POST /apps/:app/follow: the Follow button of 'Follow App to Access Store'
// as a plain form, so it works without JavaScript. Back to the store.
func (s *Server) formFollow(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	if !access.CanFollowApp(sc.Role) {
		return forbidden("You cannot follow this app")
	}
	if _, err := s.store.Follow(c.Request().Context(), sc.App.ID, sc.User.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/apps/"+url.PathEscape(sc.App.Name)+"/store")
}
