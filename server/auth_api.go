package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
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
		return respond(c, http.StatusOK, Me{User: user})
	}
	sc, err := s.scopeOf(c, appID)
	if err != nil {
		return err
	}
	acct, err := s.store.AppAccountOf(ctx, sc.App.ID, u.ID, time.Now())
	if err != nil {
		return err
	}
	var membership *MembershipView
	if m := sc.Membership; m != nil {
		membership = &MembershipView{App: AppRef{ID: m.AppID}, AppID: m.AppID, CreatedAt: m.CreatedAt, ID: m.ID, Role: m.Role}
	}
	return respond(c, http.StatusOK, MeInApp{
		AppMemberships:  acct.AppMemberships,
		Devices:         acct.Devices,
		Media:           acct.Media,
		Subscription:    MeSubscription{Items: acct.SubscriptionItems, Status: acct.Subscription},
		User:            user,
		UserAppRole:     sc.Role,
		UserMembership:  membership,
		UserPermissions: sc.Can,
	})
}

// Me is data of GET /api/auth/me.
type Me struct {
	atTop
	User store.AccountUser `json:"user"`
}

// MeInApp is data of GET /api/auth/me?appId=: the user and their standing
// in the app.
type MeInApp struct {
	atTop
	AppMemberships  []store.AppMembership `json:"appMemberships"`
	Devices         []store.Device        `json:"devices"`
	Media           []store.MediaView     `json:"media"`
	Subscription    MeSubscription        `json:"subscription"`
	User            store.AccountUser     `json:"user"`
	UserAppRole     string                `json:"userAppRole" tstype:"Role"`
	UserMembership  *MembershipView       `json:"userMembership"`
	UserPermissions access.Flags          `json:"userPermissions"`
}

// MeSubscription is the viewer's subscription in the app: what it grants
// and its standing.
type MeSubscription struct {
	Items  []store.ItemView         `json:"items"`
	Status store.SubscriptionStatus `json:"status"`
}

// MembershipView is SPEC.md's Membership: the app (id) and the role.
type MembershipView struct {
	App       AppRef    `json:"app"`
	AppID     string    `json:"appId"`
	CreatedAt time.Time `json:"createdAt"`
	ID        string    `json:"id"`
	Role      string    `json:"role" tstype:"Role"`
}

// AppRef names an app by its id.
type AppRef struct {
	ID string `json:"id"`
}

// POST /api/auth/logout destroys the session server-side (its token is dead
// from now on, even if someone kept a copy) and clears the cookie. Signing
// out twice is not an error. The token comes from the cookie itself, not
// from the session lookup: when that lookup failed (a dependency down) the
// session still has to be deleted, or the answer is 503, never a false 200.
func (s *Server) apiLogout(c echo.Context) error {
	if err := s.signOut(c); err != nil {
		return err
	}
	return respondDone(c, "Signed out")
}

// signOut ends the request's session, if any, and clears its cookie.
func (s *Server) signOut(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		if err := s.store.DeleteSession(c.Request().Context(), ck.Value); err != nil {
			return err
		}
	}
	s.clearSessionCookie(c)
	return nil
}

// followScope resolves the app of a follow call and the viewer's role in it.
func (s *Server) followScope(c echo.Context) (*store.User, *Scope, error) {
	u, err := requireUser(c)
	if err != nil {
		return nil, nil, err
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return nil, nil, err
	}
	return u, sc, nil
}

// followAnswer tells the browser the viewer's new standing.
func followAnswer(c echo.Context, sc *Scope, following bool) error {
	return respond(c, http.StatusOK, FollowState{Following: following, Role: sc.Role, UserPermissions: sc.Can})
}

// FollowState is data of the follow and unfollow calls: the viewer's new
// standing in the app.
type FollowState struct {
	Following       bool         `json:"following"`
	Role            string       `json:"role" tstype:"Role"`
	UserPermissions access.Flags `json:"userPermissions"`
}

// POST /api/notifications/follow/:appId makes the viewer a FOLLOWER. Members
// with a higher role keep it; following twice changes nothing.
func (s *Server) apiFollow(c echo.Context) error {
	u, sc, err := s.followScope(c)
	if err != nil {
		return err
	}
	if !access.CanFollowApp(sc.Role) {
		return forbidden("You cannot follow this app")
	}
	role, err := s.store.Follow(c.Request().Context(), sc.App.ID, u.ID)
	if err != nil {
		return err
	}
	sc.setRole(role)
	return followAnswer(c, sc, true)
}

// POST /api/notifications/unfollow/:appId removes a FOLLOWER membership (and
// the app's push subscriptions of the user). Higher roles are refused with a
// message saying why (access.CanUnfollow); not following is not an error.
func (s *Server) apiUnfollow(c echo.Context) error {
	u, sc, err := s.followScope(c)
	if err != nil {
		return err
	}
	if err := s.unfollow(c, sc, u.ID); err != nil {
		return err
	}
	return followAnswer(c, sc, false)
}

// unfollow is the one rule of unfollowing for the API and the profile's
// form: not following is not an error, higher roles stay members.
func (s *Server) unfollow(c echo.Context, sc *Scope, userID string) error {
	switch {
	case sc.Role == store.RoleAuthenticated:
		return nil
	case sc.Role == store.RoleCreator:
		return forbidden("The creator cannot unfollow their own app")
	case !access.CanUnfollow(sc.Role):
		return forbidden("As " + sc.Role + " of this app you stay a member; ask the creator to change your role")
	}
	if err := s.store.Unfollow(c.Request().Context(), sc.App.ID, userID); err != nil {
		return err
	}
	sc.setRole(store.RoleAuthenticated)
	return nil
}
