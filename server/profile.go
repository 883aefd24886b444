package server

import (
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// ProfileData is the Data of the Profile page. User is null for visitors,
// who see sign-in and sign-up links instead.
type ProfileData struct {
	User      *store.AccountUser `json:"user"`
	IsCreator bool               `json:"isCreator"`
	// Notifications is the member's notification choice in this app (null
	// for non-members, who get none).
	Notifications *prefsAnswer `json:"notifications"`
	// Membership is the member's paid membership (status NONE without one),
	// with Cancel / Keep membership.
	Membership *store.SubscriptionStatus `json:"membership"`
	// Donor is the member's paid donations total and the tier it reaches
	// (the badge).
	Donor           *store.DonorStanding `json:"donor"`
	CanSeeDonations bool                 `json:"canSeeDonations"`
	// PictureNotice answers the picture form without JavaScript.
	PictureNotice string `json:"pictureNotice"`
	PictureOK     bool   `json:"pictureOk"`
	// Joined: the member just paid for a membership (the plan checkout
	// lands here) and it is active.
	Joined bool `json:"joined"`
}

// GET /apps/:app/profile: who you are in this app, follow or unfollow, sign
// out. The creator also sees the app's status and version.
func (s *Server) pageProfile(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	data := ProfileData{IsCreator: sc.Role == store.RoleCreator, CanSeeDonations: access.CanSeeDonations(sc.Role)}
	if u := viewerOf(c).User; u != nil {
		ctx := c.Request().Context()
		acct := s.store.AccountUserOf(ctx, u)
		data.User = &acct
		if sc.Can.CanNotifications {
			p, err := s.store.NotificationPreferences(c.Request().Context(), sc.App.ID, u.ID)
			if err != nil {
				return err
			}
			prefs := prefsOf(p, sc.Role)
			data.Notifications = &prefs
		}
		var err error
		if data.Membership, err = s.store.SubscriptionStatusOf(ctx, sc.App.ID, u.ID, time.Now()); err != nil {
			return err
		}
		if data.Donor, err = s.store.DonorStandingOf(ctx, sc.App.ID, u.ID); err != nil {
			return err
		}
	}
	data.Joined = c.QueryParam("joined") == "1" && data.Membership != nil && data.Membership.Status == store.SubActive
	data.PictureNotice = pictureNotices[c.QueryParam("picture")]
	data.PictureOK = c.QueryParam("picture") == "ok"
	props.Data = data
	return s.renderPage(c, "Profile", props)
}
