package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// EventsData is the events list page's data; GET /api/events/apps/:appId/events
// answers the same page of events through the same loader.
type EventsData struct {
	Events     []store.EventView `json:"events"`
	Pagination store.Pagination  `json:"pagination"`
	Filters    EventsFilters     `json:"filters"`
	Filtered   bool              `json:"filtered"`
	Types      []string          `json:"types"`
}

// EventsFilters echoes the query so the filter form renders what was asked.
type EventsFilters struct {
	Search     string `json:"search"`
	Type       string `json:"type"`
	IsOfficial bool   `json:"isOfficial"`
	IsFeatured bool   `json:"isFeatured"`
}

// eventFilter reads the list query of SPEC.md section 7. Bad values are a
// 400 rather than silently ignored.
func eventFilter(c echo.Context) (store.EventFilter, error) {
	page, limit, err := pageParams(c, store.EventsPageSize)
	if err != nil {
		return store.EventFilter{}, err
	}
	f := store.EventFilter{Page: page, Limit: limit, Search: strings.TrimSpace(c.QueryParam("search"))}
	if t := strings.ToUpper(c.QueryParam("type")); t != "" && t != "ALL" {
		if !store.IsEventType(t) {
			return f, badRequest("type must be one of LIVESTREAM, MEETUP, CLASS, CONFERENCE, OTHER")
		}
		f.Type = t
	}
	for name, dst := range map[string]**bool{"isOfficial": &f.IsOfficial, "isFeatured": &f.IsFeatured} {
		switch c.QueryParam(name) {
		case "":
		case "true", "on", "1":
			v := true
			*dst = &v
		case "false", "0":
			v := false
			*dst = &v
		default:
			return f, badRequest(name + " must be true or false")
		}
	}
	for name, dst := range map[string]**time.Time{"startDate": &f.StartDate, "endDate": &f.EndDate} {
		if v := c.QueryParam(name); v != "" {
			t, ok := parseEventTime(v)
			if !ok {
				return f, badRequest(name + " must be an ISO date")
			}
			*dst = &t
		}
	}
	return f, nil
}

// parseEventTime accepts RFC 3339 and plain dates (read as UTC midnight).
func parseEventTime(v string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// loadEvents is the one loader of the events list.
func (s *Server) loadEvents(c echo.Context, sc *Scope) (*EventsData, error) {
	f, err := eventFilter(c)
	if err != nil {
		return nil, err
	}
	viewerID := ""
	if sc.User != nil {
		viewerID = sc.User.ID
	}
	p, err := s.store.Events(c.Request().Context(), sc.App.ID, f, viewerID, time.Now())
	if err != nil {
		return nil, err
	}
	return &EventsData{Events: store.LockEvents(p.Events, sc.Reader), Pagination: p.Pagination, Filtered: f.Filtered(), Types: store.EventTypes,
		Filters: EventsFilters{Search: f.Search, Type: f.Type, IsOfficial: f.IsOfficial != nil && *f.IsOfficial,
			IsFeatured: f.IsFeatured != nil && *f.IsFeatured}}, nil
}

// eventsScope is the scope of an events API call on an app: signed in
// (SPEC.md section 6), app found, events on.
func (s *Server) eventsScope(c echo.Context, appID string) (*Scope, error) {
	if _, err := requireUser(c); err != nil {
		return nil, err
	}
	sc, err := s.scopeOf(c, appID)
	if err != nil {
		return nil, err
	}
	if err := sc.requireFeature(featureEvents); err != nil {
		return nil, err
	}
	if err := sc.requireUngated(); err != nil {
		return nil, err
	}
	return sc, nil
}

// GET /api/events/apps/:appId/events?page&limit&search&type&isOfficial&isFeatured&startDate&endDate
func (s *Server) apiEvents(c echo.Context) error {
	sc, err := s.eventsScope(c, c.Param("appId"))
	if err != nil {
		return err
	}
	data, err := s.loadEvents(c, sc)
	if err != nil {
		return err
	}
	return respondPage(c, data.Events, data.Pagination)
}

// GET /apps/:app/events renders the list with the filters of the query, so
// the filter form and paging work without JavaScript.
func (s *Server) pageEvents(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireFeature(featureEvents); err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	data, err := s.loadEvents(c, sc)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Status == http.StatusBadRequest {
			return err
		}
		s.logger.Error("events load failed", "app", sc.App.Name, "err", err)
		props.Error, props.Status = "Failed to load events", http.StatusServiceUnavailable
		data = &EventsData{Events: []store.EventView{}, Types: store.EventTypes}
	}
	props.Data = data
	return s.renderPage(c, "Events", props)
}
