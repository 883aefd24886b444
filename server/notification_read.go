package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

type readRequest struct {
	MarkAll         bool     `json:"markAll"`
	NotificationIDs []string `json:"notificationIds"`
}

// POST /api/notifications/read/:appId with {"markAll": true} or
// {"notificationIds": [...]}: marks the member's notifications in this app
// read; ids of other members or apps are ignored.
func (s *Server) apiReadNotifications(c echo.Context) error {
	sc, err := s.notificationScope(c, c.Param("appId"))
	if err != nil {
		return err
	}
	var req readRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if !req.MarkAll && len(req.NotificationIDs) == 0 {
		return badRequest("Send markAll or notificationIds")
	}
	if len(req.NotificationIDs) > 100 {
		return badRequest("At most 100 notificationIds")
	}
	ctx := c.Request().Context()
	n, err := s.store.MarkNotificationsRead(ctx, sc.App.ID, sc.User.ID, req.NotificationIDs, req.MarkAll)
	if err != nil {
		return err
	}
	unread, err := s.store.UnreadCount(ctx, sc.App.ID, sc.User.ID)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, NotificationsMarked{Marked: n, UnreadCount: unread}, "Notifications marked as read")
}

// POST /apps/:app/notifications/read: Mark All as Read without JavaScript.
func (s *Server) formReadNotifications(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.redirectToSignIn(c)
	}
	if !sc.Can.CanNotifications {
		return forbidden("Follow the app to get its notifications")
	}
	if _, err := s.store.MarkNotificationsRead(c.Request().Context(), sc.App.ID, sc.User.ID, nil, true); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/apps/"+sc.App.Name+"/notifications")
}

// NotificationsMarked is data of POST /api/notifications/read/:appId.
type NotificationsMarked struct {
	Marked      int `json:"marked"`
	UnreadCount int `json:"unreadCount"`
}
