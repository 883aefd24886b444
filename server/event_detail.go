package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// EventDetail is an event as one viewer sees it: the event (with its first
// attendees) and what the viewer may do with it. The page and
// GET /api/events/:id share loadEvent, so the detail island refetches
// exactly what it was rendered with.
type EventDetail struct {
	*store.EventView
	Attendees          []store.AttendeeView `json:"attendees"`
	AttendeePagination store.Pagination     `json:"attendeePagination"`
	Permissions        EventPermissions     `json:"permissions"`
	// Ticket is the store item that admits to the event, nil when joining
	// is free. With one, the page offers Get Ticket instead of Join.
	Ticket *EventTicketInfo `json:"ticket"`
}

// EventTicketInfo is what the event page needs of its ticket item.
type EventTicketInfo struct {
	ItemID   string `json:"itemId"`
	Name     string `json:"name"`
	Price    int64  `json:"price"`
	Currency string `json:"currency"`
	// Held: the viewer holds a paid ticket. Their attendance belongs to it,
	// so after leaving they join again without paying.
	Held bool `json:"held"`
}

// EventPermissions are access's answers for this viewer and event.
type EventPermissions struct {
	CanEdit            bool `json:"canEdit"`
	CanJoin            bool `json:"canJoin"`
	CanLeave           bool `json:"canLeave"`
	CanManageAttendees bool `json:"canManageAttendees"`
	CanFeature         bool `json:"canFeature"`
}

// scopeOfEvent loads an event and its app's scope for an API call: signed
// in, events on, or an error.
func (s *Server) scopeOfEvent(c echo.Context, id string) (*store.Event, *Scope, error) {
	if _, err := requireUser(c); err != nil {
		return nil, nil, err
	}
	e, err := s.store.EventByID(c.Request().Context(), id)
	if err != nil {
		return nil, nil, wrapLoad(err, "Event not found")
	}
	sc, err := s.eventsScope(c, e.AppID)
	if err != nil {
		return nil, nil, err
	}
	if !sc.sees(e.Hidden, e.CreatorID) {
		return nil, nil, notFound("Event not found")
	}
	keepPrivate(c, e.Hidden)
	return e, sc, nil
}

// viewerAttendeeRole is the viewer's role in the event, "" if not attending.
func (s *Server) viewerAttendeeRole(c echo.Context, sc *Scope, e *store.Event) (string, error) {
	if sc.User == nil {
		return "", nil
	}
	a, err := s.store.AttendeeOf(c.Request().Context(), e.ID, sc.User.ID)
	if isNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return a.Role, nil
}

func eventPermissions(sc *Scope, attendeeRole string) EventPermissions {
	signedIn := sc.User != nil
	return EventPermissions{
		CanEdit:            signedIn && access.CanEditEvent(sc.Role, attendeeRole == store.AttendeeHost),
		CanJoin:            signedIn && sc.Can.CanJoinEvents && attendeeRole == "",
		CanLeave:           signedIn && access.CanLeaveEvent(attendeeRole),
		CanManageAttendees: signedIn && access.CanManageAttendees(sc.Role, attendeeRole),
		CanFeature:         sc.Can.CanFeature,
	}
}

// loadEvent is the one loader of an event's detail.
func (s *Server) loadEvent(c echo.Context, sc *Scope, e *store.Event) (*EventDetail, error) {
	ctx := c.Request().Context()
	viewerID := ""
	if sc.User != nil {
		viewerID = sc.User.ID
	}
	view, err := s.store.EventView(ctx, e, viewerID)
	if err != nil {
		return nil, err
	}
	locked := store.LockEvent(*view, sc.Reader)
	view = &locked
	role := ""
	if view.UserRole != nil {
		role = *view.UserRole
	}
	data := &EventDetail{EventView: view, Attendees: []store.AttendeeView{}, Permissions: eventPermissions(sc, role)}
	if view.Locked {
		data.Permissions.CanJoin = false
	}
	ticket, err := s.store.EventTicket(ctx, e.ID)
	switch {
	case err == nil:
		data.Ticket = &EventTicketInfo{ItemID: ticket.ID, Name: ticket.Name, Price: ticket.Price, Currency: ticket.Currency}
		if sc.User != nil {
			if data.Ticket.Held, err = s.store.HoldsTicket(ctx, e.ID, sc.User.ID); err != nil {
				return nil, err
			}
		}
		// Joining is buying the ticket (store.JoinEvent refuses free joins),
		// except for a holder who left: the ticket still admits.
		if !data.Ticket.Held {
			data.Permissions.CanJoin = false
		}
	case !isNotFound(err):
		return nil, err
	}
	// Who attends is for signed-in viewers only, as the attendees call is.
	if sc.User != nil {
		p, err := s.store.Attendees(ctx, e.ID, "", 1, store.AttendeesPageSize)
		if err != nil {
			return nil, err
		}
		data.Attendees, data.AttendeePagination = p.Attendees, p.Pagination
	}
	return data, nil
}

// GET /api/events/:id
func (s *Server) apiEvent(c echo.Context) error {
	e, sc, err := s.scopeOfEvent(c, c.Param("id"))
	if err != nil {
		return err
	}
	data, err := s.loadEvent(c, sc, e)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, data)
}

// editableEvent loads the event of :id for a write that only its host,
// creators and admins may make; refused says what was refused.
func (s *Server) editableEvent(c echo.Context, refused string) (*store.Event, *Scope, error) {
	e, sc, err := s.scopeOfEvent(c, c.Param("id"))
	if err != nil {
		return nil, nil, err
	}
	role, err := s.viewerAttendeeRole(c, sc, e)
	if err != nil {
		return nil, nil, err
	}
	if !access.CanEditEvent(sc.Role, role == store.AttendeeHost) {
		return nil, nil, forbidden(refused)
	}
	return e, sc, nil
}

// DELETE /api/events/:id: the host, creators and admins.
func (s *Server) apiDeleteEvent(c echo.Context) error {
	e, sc, err := s.editableEvent(c, "You cannot delete this event")
	if err != nil {
		return err
	}
	if err := s.store.DeleteEvent(c.Request().Context(), e, sc.User.ID); err != nil {
		return err
	}
	return respondDone(c, "Event deleted")
}

// GET /apps/:app/events/:eventId. An event of another app is not found.
func (s *Server) pageEvent(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireFeature(featureEvents); err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	e, err := s.store.EventByID(c.Request().Context(), c.Param("eventId"))
	if err == nil && (!sc.contains(e.AppID) || !sc.sees(e.Hidden, e.CreatorID)) {
		err = store.ErrNotFound
	}
	if err == nil {
		keepPrivate(c, e.Hidden)
	}
	var data *EventDetail
	if err == nil {
		data, err = s.loadEvent(c, sc, e)
	}
	if err != nil {
		props.Error, props.Status = "Event not found", http.StatusNotFound
		if !isNotFound(err) {
			s.logger.Error("event load failed", "event", c.Param("eventId"), "err", err)
			props.Error, props.Status = "Failed to load event", http.StatusServiceUnavailable
		}
		props.Data = nil
		return s.renderPage(c, "Event", props)
	}
	// ?confirm=leave is where the Leave form lands without JavaScript: the
	// page asks before the attendance (maybe a ticket's) is given up.
	props.Data = eventPageData{EventDetail: data, ConfirmLeave: c.QueryParam("confirm") == "leave" && data.Permissions.CanLeave}
	return s.renderPage(c, "Event", props)
}

// eventPageData is the event page's data: the detail the API answers and
// whether the page asks to confirm leaving.
type eventPageData struct {
	*EventDetail
	ConfirmLeave bool `json:"confirmLeave"`
}
