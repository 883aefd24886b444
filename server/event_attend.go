package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// POST /api/events/:id/join makes the viewer an ATTENDEE. Joining twice
// answers the same event; the count stays exact (store.JoinEvent).
func (s *Server) apiJoinEvent(c echo.Context) error {
	e, sc, err := s.scopeOfEvent(c, c.Param("id"))
	if err != nil {
		return err
	}
	if err := s.mayJoin(c, sc, e); err != nil {
		return err
	}
	joined, err := s.store.JoinEvent(c.Request().Context(), e, sc.User.ID)
	if err != nil {
		return joinError(err)
	}
	data, err := s.loadEvent(c, sc, e)
	if err != nil {
		return err
	}
	msg := "Joined event"
	if !joined {
		msg = "Already attending"
	}
	return respondMessage(c, http.StatusOK, data, msg)
}

// DELETE /api/events/:id/leave. The host cannot leave their event.
func (s *Server) apiLeaveEvent(c echo.Context) error {
	e, sc, err := s.scopeOfEvent(c, c.Param("id"))
	if err != nil {
		return err
	}
	role, err := s.viewerAttendeeRole(c, sc, e)
	if err != nil {
		return err
	}
	if role == store.AttendeeHost {
		return forbidden("The event host cannot leave the event")
	}
	msg := "Not attending"
	if access.CanLeaveEvent(role) {
		left, err := s.store.LeaveEvent(c.Request().Context(), e, sc.User.ID)
		if err != nil {
			return err
		}
		if left {
			msg = "Left event"
		}
	}
	data, err := s.loadEvent(c, sc, e)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, data, msg)
}

// POST /apps/:app/events/:eventId/attend is the Join/Leave form's target
// when JavaScript is off: it does what the island's call does and returns
// to the event page.
func (s *Server) formAttendEvent(c echo.Context) error {
	sc := scopeFromPage(c)
	back := "/apps/" + sc.App.Name + "/events/" + c.Param("eventId")
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+sc.App.Name)
	}
	e, err := s.store.EventByID(c.Request().Context(), c.Param("eventId"))
	if err != nil || !sc.contains(e.AppID) || sc.requireFeature(featureEvents) != nil || !sc.sees(e.Hidden, e.CreatorID) {
		return notFound("Event not found")
	}
	switch c.FormValue("action") {
	case "join":
		if err := s.mayJoin(c, sc, e); err != nil {
			return err
		}
		if _, err := s.store.JoinEvent(c.Request().Context(), e, sc.User.ID); err != nil {
			return joinError(err)
		}
	case "leave":
		role, err := s.viewerAttendeeRole(c, sc, e)
		if err != nil {
			return err
		}
		if role == store.AttendeeHost {
			return forbidden("The event host cannot leave the event")
		}
		// Leaving asks first (the island asks in place): a ticket holder's
		// attendance is what they paid for.
		if c.FormValue("confirm") != "yes" {
			return c.Redirect(http.StatusSeeOther, back+"?confirm=leave")
		}
		if _, err := s.store.LeaveEvent(c.Request().Context(), e, sc.User.ID); err != nil {
			return err
		}
	default:
		return badRequest("action must be join or leave")
	}
	return c.Redirect(http.StatusSeeOther, back)
}

// joinError answers a refused join (errors.go): an event that sells
// tickets is joined by buying one (403, the viewer lacks what the event asks
// for; the event page links the ticket).
func joinError(err error) error {
	return answer(err, nil)
}

// mayJoin: joining needs the app's permission and the event's details to
// be the viewer's to read (its access): a members' event is for members.
func (s *Server) mayJoin(c echo.Context, sc *Scope, e *store.Event) error {
	if !sc.Can.CanJoinEvents {
		return forbidden("Follow this app to join its events")
	}
	ok, err := s.store.MayReadAccess(c.Request().Context(), store.MessageAccess{Audience: e.AccessAudience, MinTierID: e.AccessMinTierID}, sc.Reader)
	if err != nil {
		return err
	}
	if !ok {
		return forbidden("This event is for members: join a tier to attend")
	}
	return nil
}
