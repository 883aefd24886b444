package server

import (
	"github.com/labstack/echo/v4"

	"marquee/store"
)

// NotificationsData is the Notifications page: what the panel shows, for
// browsers without JavaScript (the bell is a plain link here).
type NotificationsData struct {
	Notifications []store.NotificationView `json:"notifications"`
	Pagination    store.Pagination         `json:"pagination"`
	Preferences   *prefsAnswer             `json:"preferences"`
}

// GET /apps/:app/notifications?page: the member's unread notifications with
// Mark All as Read and paging, as plain links and forms.
func (s *Server) pageNotifications(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.redirectToSignIn(c)
	}
	if !sc.Can.CanNotifications {
		return forbidden("Follow the app to get its notifications")
	}
	p, err := s.loadNotifications(c, sc)
	if err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	props.Data = NotificationsData{Notifications: p.Notifications, Pagination: p.Pagination}
	c.Response().Header().Set("Cache-Control", "private, no-store")
	return s.renderPage(c, "Notifications", props)
}
