package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// notificationScope is the app of a notifications call and a member viewer:
// visitors get 401, signed-in non-members 403 (the bell is for members,
// SPEC.md section 2).
func (s *Server) notificationScope(c echo.Context, idOrName string) (*Scope, error) {
	if _, err := requireUser(c); err != nil {
		return nil, err
	}
	sc, err := s.scopeOf(c, idOrName)
	if err != nil {
		return nil, err
	}
	if !sc.Can.CanNotifications {
		return nil, forbidden("Follow the app to get its notifications")
	}
	return sc, nil
}

// loadNotifications is the one loader of the panel, the page and the API.
func (s *Server) loadNotifications(c echo.Context, sc *Scope) (*store.NotificationPage, error) {
	page, limit, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return nil, err
	}
	p, err := s.store.UnreadNotifications(c.Request().Context(), sc.App.ID, sc.User.ID, page, limit)
	if err != nil {
		return nil, err
	}
	// What a notice quotes is content: the viewer reads it only if they
	// may see the content (access.ContentFor, the one rule); a gated
	// member reads that there is something new and is led to the plans.
	for i, n := range p.Notifications {
		if text := access.NoticeText(sc.Content, n.Kind, n.Content); text != n.Content {
			p.Notifications[i].Content, p.Notifications[i].Link = text, "/apps/"+sc.App.Name
		}
	}
	return p, nil
}

// GET /api/notifications/unread/:appId?page&limit: the member's unread
// notifications, newest first, 20 a page. limit=1 doubles as the client's
// health check, and pagination.total is the bell's badge.
func (s *Server) apiUnreadNotifications(c echo.Context) error {
	sc, err := s.notificationScope(c, c.Param("appId"))
	if err != nil {
		return err
	}
	p, err := s.loadNotifications(c, sc)
	if err != nil {
		return err
	}
	// Personal data: never cached by anything between us and the member.
	c.Response().Header().Set("Cache-Control", "private, no-store")
	return respond(c, http.StatusOK, NotificationsPage{Notifications: p.Notifications, Pagination: p.Pagination,
		UnreadCount: p.Pagination.Total})
}

// NotificationsPage is data of GET /api/notifications/unread/:appId.
type NotificationsPage struct {
	atTop
	Notifications []store.NotificationView `json:"notifications"`
	Pagination    store.Pagination         `json:"pagination"`
	UnreadCount   int                      `json:"unreadCount"`
}
