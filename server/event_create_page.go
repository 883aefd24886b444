package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// CreateEventData is the create-event form's data: the types to offer and,
// after a refused form post, what was typed and why it was refused.
type CreateEventData struct {
	Types  []string          `json:"types"`
	Values map[string]string `json:"values"`
	Error  string            `json:"error"`
	// Fields are the refused fields and why, shown beside each input.
	Fields map[string]string `json:"fields"`
	// AccessOptions: who may read the details, as the form's "access"
	// value (PUBLIC, FOLLOWERS, MEMBERS or TIER:<id>).
	AccessOptions []AccessOption `json:"accessOptions"`
}

// GET /apps/:app/create-event. The form shows the featured checkbox only
// when the viewer may feature (flags); the API enforces every rule.
func (s *Server) pageCreateEvent(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireFeature(featureEvents); err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	props.Data = s.createEventData(c, sc)
	return s.renderPage(c, "CreateEvent", props)
}

// createEventData is the form before anything is typed: the types and
// the access choices the viewer may make (everyone first).
func (s *Server) createEventData(c echo.Context, sc *Scope) CreateEventData {
	return CreateEventData{Types: store.EventTypes, Values: map[string]string{}, AccessOptions: s.accessOptions(c, sc)}
}

var createEventFields = []string{"name", "description", "type", "location", "startDate", "startTime", "endDate", "endTime"}

// POST /apps/:app/create-event is the form's target without JavaScript
// (with it, the island calls the JSON API and uploads media). Date and time
// fields are read as UTC, as the server renders them. A refused post renders
// the form again with what was typed and the SPEC.md section 5 message.
func (s *Server) formCreateEvent(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireFeature(featureEvents); err != nil {
		return err
	}
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+sc.App.Name)
	}
	if !sc.Can.CanCreateEvents {
		return forbidden("You do not have permission to create events")
	}
	values := map[string]string{}
	for _, k := range createEventFields {
		values[k] = c.FormValue(k)
	}
	values["access"] = c.FormValue("access")
	req := eventRequest{Name: ptr(values["name"]), Description: ptr(values["description"]), Location: ptr(values["location"]),
		Type: ptr(values["type"]), Access: accessFromForm(values["access"])}
	if values["startDate"] != "" && values["startTime"] != "" {
		req.StartDate = ptr(values["startDate"] + "T" + values["startTime"])
	}
	if values["endDate"] != "" && values["endTime"] != "" {
		req.EndDate = ptr(values["endDate"] + "T" + values["endTime"])
	}
	in, err := eventInput(&req, store.EventInput{}, true, time.Now())
	if err == nil {
		in.Access, err = s.eventAccess(c.Request().Context(), sc, req.Access)
	}
	if refused := refusal(err, nil); refused != nil {
		props := s.pageProps(c, sc)
		props.Status = refused.Status
		data := s.createEventData(c, sc)
		data.Values, data.Error, data.Fields = values, refused.Message, refused.Fields
		props.Data = data
		return s.renderPage(c, "CreateEvent", props)
	}
	if err != nil {
		return err
	}
	in.IsFeatured = c.FormValue("isFeatured") != "" && sc.Can.CanFeature
	in.IsOfficial = access.MakesOfficialEvents(sc.Role)
	in.Announce = access.AnnouncesToMembers(sc.Role)
	e, err := s.store.CreateEvent(c.Request().Context(), sc.App.ID, sc.User.ID, in)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/apps/"+sc.App.Name+"/events/"+e.ID)
}

func ptr(s string) *string { return &s }
