package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// GET /api/events/:id/attendees?page&limit=50&role
func (s *Server) apiEventAttendees(c echo.Context) error {
	e, _, err := s.scopeOfEvent(c, c.Param("id"))
	if err != nil {
		return err
	}
	page, limit, err := pageParams(c, store.AttendeesPageSize)
	if err != nil {
		return err
	}
	role := strings.ToUpper(c.QueryParam("role"))
	if role != "" && role != store.AttendeeHost && role != store.AttendeeModerator && role != store.AttendeeAttendee {
		return badRequest("role must be HOST, MODERATOR or ATTENDEE")
	}
	p, err := s.store.Attendees(c.Request().Context(), e.ID, role, page, limit)
	if err != nil {
		return err
	}
	return respondPage(c, p.Attendees, p.Pagination)
}

// attendeeTarget checks that the viewer may manage the event's attendees
// and loads the attendee the path names.
func (s *Server) attendeeTarget(c echo.Context) (*store.Event, *store.Attendee, error) {
	e, sc, err := s.scopeOfEvent(c, c.Param("id"))
	if err != nil {
		return nil, nil, err
	}
	role, err := s.viewerAttendeeRole(c, sc, e)
	if err != nil {
		return nil, nil, err
	}
	if !access.CanManageAttendees(sc.Role, role) {
		return nil, nil, forbidden("You cannot manage this event's attendees")
	}
	a, err := s.store.AttendeeOf(c.Request().Context(), e.ID, c.Param("userId"))
	if err != nil {
		return nil, nil, wrapLoad(err, "Attendee not found")
	}
	return e, a, nil
}

type attendeeRoleRequest struct {
	Role string `json:"role"`
}

// PUT /api/events/:id/attendees/:userId with {role}: ATTENDEE <-> MODERATOR.
func (s *Server) apiSetAttendeeRole(c echo.Context) error {
	e, a, err := s.attendeeTarget(c)
	if err != nil {
		return err
	}
	var req attendeeRoleRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	req.Role = strings.ToUpper(strings.TrimSpace(req.Role))
	if a.Role == store.AttendeeHost {
		return forbidden("The event host cannot be changed")
	}
	if !access.CanSetAttendeeRole(a.Role, req.Role) {
		return badRequest("role must be ATTENDEE or MODERATOR")
	}
	err = s.store.SetAttendeeRole(c.Request().Context(), e, viewerOf(c).User.ID, a.UserID, req.Role)
	if err != nil {
		return wrapLoad(err, "Attendee not found") // removed meanwhile
	}
	v, err := s.store.AttendeeView(c.Request().Context(), e.ID, a.UserID)
	if err != nil {
		return wrapLoad(err, "Attendee not found")
	}
	return respondMessage(c, http.StatusOK, v, "Attendee role updated")
}

// DELETE /api/events/:id/attendees/:userId removes anyone but the host.
func (s *Server) apiRemoveAttendee(c echo.Context) error {
	e, a, err := s.attendeeTarget(c)
	if err != nil {
		return err
	}
	if !access.CanRemoveAttendee(a.Role) {
		return forbidden("The event host cannot be removed")
	}
	if _, err := s.store.RemoveAttendee(c.Request().Context(), e, a.UserID); err != nil {
		return err
	}
	return respondDone(c, "Attendee removed")
}
