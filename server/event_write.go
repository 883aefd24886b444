package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

const (
	maxEventName        = 200
	maxEventDescription = 5000
	maxEventLocation    = 500
	maxEventMedia       = 10
	// pastSlack forgives the seconds between the form's check and the
	// request arriving: a start "now" is not in the past.
	pastSlack = 5 * time.Minute
)

// eventRequest is the body of POST /api/events/apps/:appId/events and PUT
// /api/events/:id. Pointers tell "absent" (PUT keeps the value) from empty.
type eventRequest struct {
	Name        *string        `json:"name"`
	Description *string        `json:"description"`
	Location    *string        `json:"location"`
	StartDate   *string        `json:"startDate"`
	EndDate     *string        `json:"endDate"`
	Type        *string        `json:"type"`
	Settings    map[string]any `json:"settings"`
	MediaIDs    *[]string      `json:"mediaIds"`
	AppID       string         `json:"appId"`
	IsFeatured  *bool          `json:"isFeatured"`
	// Access is who may read the details (description, place, media);
	// absent keeps it (PUBLIC for a new event).
	Access *store.MessageAccess `json:"access"`
}

// eventInput applies SPEC.md section 5 to req over the current values in
// (zero for a new event) and returns what to store.
// errNoDates names both date fields: either may be the empty one.
var errNoDates = fieldsError("Please select start and end dates", map[string]string{
	"startDate": "Please select start and end dates", "endDate": "Please select start and end dates"})

func eventInput(req *eventRequest, in store.EventInput, creating bool, now time.Time) (store.EventInput, error) {
	if req.Name != nil {
		in.Name = strings.TrimSpace(*req.Name)
	}
	if in.Name == "" {
		return in, fieldError("name", "Please enter an event name")
	}
	if utf8.RuneCountInString(in.Name) > maxEventName {
		return in, fieldError("name", "Event name is too long (200 characters at most)")
	}
	if !store.OneLine(in.Name) {
		return in, fieldError("name", store.MsgOneLine("Event name"))
	}
	if req.Description != nil {
		in.Description = strings.TrimSpace(*req.Description)
	}
	if utf8.RuneCountInString(in.Description) > maxEventDescription {
		return in, fieldError("description", "Description is too long (5000 characters at most)")
	}
	if req.Location != nil {
		in.Location = strings.TrimSpace(*req.Location)
	}
	if utf8.RuneCountInString(in.Location) > maxEventLocation {
		return in, fieldError("location", "Location is too long (500 characters at most)")
	}
	if !store.OneLine(in.Location) {
		return in, fieldError("location", store.MsgOneLine("Location"))
	}
	if req.Type != nil {
		in.Type = strings.ToUpper(strings.TrimSpace(*req.Type))
	}
	if in.Type == "" {
		in.Type = "MEETUP" // SPEC.md section 9
	}
	if !store.IsEventType(in.Type) {
		return in, fieldError("type", "type must be one of LIVESTREAM, MEETUP, CLASS, CONFERENCE, OTHER")
	}
	startChanged := false
	if creating && (req.StartDate == nil || req.EndDate == nil || *req.StartDate == "" || *req.EndDate == "") {
		return in, errNoDates
	}
	for _, d := range []struct {
		v   *string
		dst *time.Time
	}{{req.StartDate, &in.StartDate}, {req.EndDate, &in.EndDate}} {
		if d.v == nil {
			continue
		}
		if *d.v == "" {
			return in, errNoDates
		}
		t, ok := parseEventTime(*d.v)
		if !ok {
			return in, fieldsError("Dates must be ISO 8601 date-times", map[string]string{
				"startDate": "Dates must be ISO 8601 date-times", "endDate": "Dates must be ISO 8601 date-times"})
		}
		if d.dst == &in.StartDate && !t.Equal(in.StartDate) {
			startChanged = true
		}
		*d.dst = t
	}
	if !in.EndDate.After(in.StartDate) {
		return in, fieldError("endDate", "End date/time must be after start date/time")
	}
	// Editing a past event's description is fine; moving its start into
	// the past, or creating one there, is not.
	if (creating || startChanged) && in.StartDate.Before(now.Add(-pastSlack)) {
		return in, fieldError("startDate", "Start date/time cannot be in the past")
	}
	return in, nil
}

// eventMedia checks mediaIds: uploaded images or videos of this viewer in
// this app. The first event-banner upload becomes the banner; the rest are
// the additional media, in the order given.
// keep lists media already on the event, which an editor other than the
// uploader (an admin) may send back unchanged.
func (s *Server) eventMedia(ctx context.Context, sc *Scope, ids []string, keep map[string]bool) (*string, []string, error) {
	if len(ids) > maxEventMedia {
		return nil, nil, badRequest("At most 10 media files")
	}
	var banner *string
	var rest []string
	for _, id := range ids {
		m, err := s.store.MediaRecord(ctx, id)
		if err != nil && !isNotFound(err) {
			return nil, nil, err
		}
		if err != nil || (m.OwnerID != sc.User.ID && !keep[m.ID]) || m.AppID == nil || !sc.contains(*m.AppID) {
			return nil, nil, badRequest("Media not found")
		}
		if m.Type != store.MediaImage && m.Type != store.MediaVideo {
			return nil, nil, badRequest("Only image and video files are supported")
		}
		if err := s.verifyUpload(ctx, m); err != nil {
			return nil, nil, err
		}
		if banner == nil && m.MediaKey == "event-banner" && m.Type == store.MediaImage {
			banner = &m.ID
			continue
		}
		rest = append(rest, m.ID)
	}
	return banner, rest, nil
}

// POST /api/events/apps/:appId/events creates an event; its creator is its HOST.
func (s *Server) apiCreateEvent(c echo.Context) error {
	sc, err := s.eventsScope(c, c.Param("appId"))
	if err != nil {
		return err
	}
	if !sc.Can.CanCreateEvents {
		return forbidden("You do not have permission to create events")
	}
	var req eventRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	in, err := eventInput(&req, store.EventInput{}, true, time.Now())
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if req.MediaIDs != nil {
		if in.BannerMediaID, in.MediaIDs, err = s.eventMedia(ctx, sc, *req.MediaIDs, nil); err != nil {
			return err
		}
	}
	if req.Settings != nil {
		b, err := json.Marshal(req.Settings)
		if err != nil || len(b) > 10000 {
			return badRequest("settings must be a small JSON object")
		}
		in.Settings = string(b)
	}
	if in.Access, err = s.eventAccess(ctx, sc, req.Access); err != nil {
		return err
	}
	// Featuring is a creator/admin decision; from anyone else it is
	// ignored. Events made by the app's staff are its official ones.
	in.IsFeatured = req.IsFeatured != nil && *req.IsFeatured && sc.Can.CanFeature
	in.IsOfficial = access.MakesOfficialEvents(sc.Role)
	in.Announce = access.AnnouncesToMembers(sc.Role)
	e, err := s.store.CreateEvent(ctx, sc.App.ID, sc.User.ID, in)
	if err != nil {
		return err
	}
	data, err := s.loadEvent(c, sc, e)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusCreated, data, "Event created")
}

// PUT /api/events/:id: the host, creators and admins. Absent fields keep
// their value; mediaIds, when present, replaces the media.
func (s *Server) apiUpdateEvent(c echo.Context) error {
	e, sc, err := s.editableEvent(c, "You cannot edit this event")
	if err != nil {
		return err
	}
	var req eventRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	cur := store.EventInput{Name: e.Name, Description: e.Description, Location: e.Location, Type: e.Type,
		StartDate: e.StartDate, EndDate: e.EndDate, IsFeatured: e.IsFeatured, IsOfficial: e.IsOfficial,
		BannerMediaID: e.BannerMediaID}
	in, err := eventInput(&req, cur, false, time.Now())
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if req.MediaIDs != nil {
		view, err := s.store.EventView(ctx, e, "")
		if err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, m := range view.Media {
			keep[m.ID] = true
		}
		if in.BannerMediaID, in.MediaIDs, err = s.eventMedia(ctx, sc, *req.MediaIDs, keep); err != nil {
			return err
		}
	}
	if req.IsFeatured != nil && sc.Can.CanFeature {
		in.IsFeatured = *req.IsFeatured
	}
	if req.Access != nil {
		if in.Access, err = s.eventAccess(ctx, sc, req.Access); err != nil {
			return err
		}
	}
	in.EditorID = sc.User.ID
	if err := s.store.UpdateEvent(ctx, e, in, req.MediaIDs != nil); err != nil {
		return err
	}
	data, err := s.loadEvent(c, sc, e)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, data, "Event updated")
}

// eventAccess checks an event's access setting (nil is PUBLIC), as a
// post's: its author must be among its readers.
func (s *Server) eventAccess(ctx context.Context, sc *Scope, req *store.MessageAccess) (store.MessageAccess, error) {
	a := store.MessageAccess{Audience: store.AccessPublic}
	if req != nil {
		a = *req
	}
	if err := s.checkAuthorAccess(ctx, sc, &a, req != nil); err != nil {
		return store.MessageAccess{}, err
	}
	return a, nil
}
