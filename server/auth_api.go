package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// GET /api/auth/me: the signed-in user (401 when signed out). With
// ?appId= (an id or a name) it adds the viewer's standing in that app, in the
// shape of SPEC.md section 7.
func (s *Server) apiMe(c echo.Context) error {
	u, err := requireUser(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// Who is signed in is private and changes at sign-out: never cache it.
	c.Response().Header().Set("Cache-Control", "no-store")
	user := s.store.AccountUserOf(ctx, u)
	appID := c.QueryParam("appId")
	if appID == "" {
		return c.JSON(http.StatusOK, map[string]any{"success": true, "data": map[string]any{"user": user}})
	}
	app, err := s.store.AppByIDOrName(ctx, appID)
	if err != nil {
		return wrapLoad(err, "App not found")
	}
	ac, err := s.appContext(c, app.ID, app.Settings)
	if err != nil {
		return err
	}
	acct, err := s.store.AppAccountOf(ctx, app.ID, u.ID, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "data": map[string]any{
		"user":            user,
		"devices":         acct.Devices,
		"appMemberships":  acct.AppMemberships,
		"media":           acct.Media,
		"userAppRole":     ac.Role,
		"userMembership":  ac.Membership,
		"userPermissions": ac.Permissions,
		"subscription": map[string]any{
			"items":  acct.SubscriptionItems,
			"status": acct.Subscription,
		},
	}})
}

// POST /api/auth/logout destroys the session server-side (its token is dead
// from now on, even if someone kept a copy) and clears the cookie. Signing
// out twice is not an error.
func (s *Server) apiLogout(c echo.Context) error {
	if token := viewerOf(c).Token; token != "" {
		if err := s.store.DeleteSession(c.Request().Context(), token); err != nil {
			return err
		}
	}
	s.clearSessionCookie(c)
	return c.JSON(http.StatusOK, map[string]any{"success": true})
}

// followTarget resolves the app of a follow call and the viewer's role in it.
func (s *Server) followTarget(c echo.Context) (*store.User, *store.App, *AppContext, error) {
	u, err := requireUser(c)
	if err != nil {
		return nil, nil, nil, err
	}
	app, err := s.store.AppByIDOrName(c.Request().Context(), c.Param("appId"))
	if err != nil {
		return nil, nil, nil, wrapLoad(err, "App not found")
	}
	ac, err := s.appContext(c, app.ID, app.Settings)
	if err != nil {
		return nil, nil, nil, err
	}
	return u, app, ac, nil
}

// POST /api/notifications/follow/:appId makes the viewer a FOLLOWER. Members
// with a higher role keep it; following twice changes nothing.
func (s *Server) apiFollow(c echo.Context) error {
	u, app, ac, err := s.followTarget(c)
	if err != nil {
		return err
	}
	if !store.CanFollow(ac.Role) {
		return forbidden("You cannot follow this app")
	}
	role, err := s.store.Follow(c.Request().Context(), app.ID, u.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "data": map[string]any{
		"role": role, "following": true, "userPermissions": store.PermissionsFor(app.Settings, role)}})
}

// POST /api/notifications/unfollow/:appId removes a FOLLOWER membership (and
// the app's push subscriptions of the user). Higher roles are refused with a
// message saying why (store.CanUnfollow); not following is not an error.
func (s *Server) apiUnfollow(c echo.Context) error {
	u, app, ac, err := s.followTarget(c)
	if err != nil {
		return err
	}
	if !store.CanUnfollow(ac.Role) {
		if ac.Role == store.RoleCreator {
			return forbidden("The creator cannot unfollow their own app")
		}
		return forbidden("As " + ac.Role + " of this app you stay a member; ask the creator to change your role")
	}
	if err := s.store.Unfollow(c.Request().Context(), app.ID, u.ID); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "data": map[string]any{
		"role": store.RoleAuthenticated, "following": false, "userPermissions": store.PermissionsFor(app.Settings, store.RoleAuthenticated)}})
}
