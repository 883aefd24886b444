package server

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
)

// POST /apps/:app/follow: the Follow button of 'Follow App to Access Store'
// and of the profile as a plain form, so it works without JavaScript. Back
// to the store, or to the profile when the form says back=profile.
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
	target := appBasePath(c.Request(), sc.App.Name) + formBack(c, "/store")
	if target == "" {
		// The landing on the app's own domain.
		target = "/"
	}
	return c.Redirect(http.StatusSeeOther, target)
}

// formBack is where a form sends the browser back to inside the app: one
// of the fixed places a form may name, else the given default.
func formBack(c echo.Context, def string) string {
	switch b := c.FormValue("back"); b {
	case "profile", "store", "community":
		return "/" + b
	case "landing":
		return ""
	case "add-funds":
		// From the plan checkout of a fan who does not follow yet.
		return "/transactions?return=membership#add-funds"
	}
	return def
}
