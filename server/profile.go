package server

import (
	"github.com/labstack/echo/v4"

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
}

// GET /apps/:app/profile: who you are in this app, follow or unfollow, sign
// out. The creator also sees the app's status and version.
func (s *Server) pageProfile(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	data := ProfileData{IsCreator: sc.Role == store.RoleCreator}
	if u := viewerOf(c).User; u != nil {
		acct := s.store.AccountUserOf(c.Request().Context(), u)
		data.User = &acct
		if sc.Can.CanNotifications {
			p, err := s.store.NotificationPreferences(c.Request().Context(), sc.App.ID, u.ID)
			if err != nil {
				return err
			}
			prefs := prefsOf(p)
			data.Notifications = &prefs
		}
	}
	props.Data = data
	return s.renderPage(c, "Profile", props)
}
