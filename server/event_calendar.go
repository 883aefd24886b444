package server

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"
	"github.com/labstack/echo/v4"

	"marquee/store"
)

// feedSize bounds the subscribable feed: calendar apps poll it.
const feedSize = 200

// calendarOf builds an RFC 5545 calendar of events. The library escapes
// TEXT values (commas, semicolons, backslashes, newlines) and folds lines;
// times are written in UTC.
func (s *Server) calendarOf(ctx context.Context, app *store.AppView, events []store.Event, now time.Time) *ics.Calendar {
	base := s.appBaseURL(ctx, app.ID, app.Name)
	cal := ics.NewCalendarFor("Marquee")
	cal.SetMethod(ics.MethodPublish)
	name := app.Settings.Basic.Title(app.Name)
	cal.SetName(name + " events")
	cal.SetXWRCalName(name + " events")
	cal.SetRefreshInterval("PT1H")
	for _, e := range events {
		// A stable UID lets calendar apps update the entry rather than add
		// a copy when the event changes.
		ev := cal.AddEvent(e.ID + "@marquee")
		ev.SetDtStampTime(now)
		ev.SetCreatedTime(e.CreatedAt)
		ev.SetModifiedAt(e.UpdatedAt)
		ev.SetStartAt(e.StartDate)
		ev.SetEndAt(e.EndDate)
		ev.SetSummary(icsText(e.Name))
		// Calendar apps fetch without the viewer's session: an event whose
		// details are for followers or members keeps them on its page.
		if e.AccessAudience != "" && e.AccessAudience != store.AccessPublic {
			ev.SetDescription("Details on the event's page for its members.")
		} else {
			if e.Description != "" {
				ev.SetDescription(icsText(e.Description))
			}
			if e.Location != "" {
				ev.SetLocation(icsText(e.Location))
			}
		}
		ev.SetURL(base + "/events/" + e.ID)
	}
	return cal
}

// icsText keeps only \n line breaks: the library escapes \n, but a bare \r
// would end the content line early.
func icsText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

var notAlphanumeric = regexp.MustCompile(`[^A-Za-z0-9]`)

// calendarFileName replaces non-alphanumerics with underscores (SPEC.md
// section 2), so the name is safe in any file system and header.
func calendarFileName(name string) string {
	return notAlphanumeric.ReplaceAllString(name, "_") + ".ics"
}

func writeCalendar(c echo.Context, cal *ics.Calendar, filename string, download bool) error {
	disposition := "inline"
	if download {
		disposition = "attachment"
	}
	c.Response().Header().Set("Content-Disposition", disposition+`; filename="`+filename+`"`)
	c.Response().Header().Set("Cache-Control", "no-cache")
	// RFC 5545 content lines end in CRLF; the library defaults to LF.
	return c.Blob(http.StatusOK, "text/calendar; charset=utf-8", []byte(cal.Serialize(ics.WithNewLine("\r\n"))))
}

// GET /apps/:app/events/:eventId/calendar.ics: Add to Calendar downloads
// this file. Events are public pages, so the file needs no sign-in either.
func (s *Server) eventCalendar(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireFeature(featureEvents); err != nil {
		return err
	}
	e, err := s.store.EventByID(c.Request().Context(), c.Param("eventId"))
	if err != nil || !sc.contains(e.AppID) || !sc.sees(e.Hidden, e.CreatorID) {
		if err != nil && !isNotFound(err) {
			return err
		}
		return notFound("Event not found")
	}
	return writeCalendar(c, s.calendarOf(c.Request().Context(), sc.App, []store.Event{*e}, time.Now()), calendarFileName(e.Name), true)
}

// GET /apps/:app/events.ics: a feed of upcoming events a calendar app can
// subscribe to.
func (s *Server) eventsFeed(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireFeature(featureEvents); err != nil {
		return err
	}
	now := time.Now()
	events, err := s.store.UpcomingEvents(c.Request().Context(), sc.App.ID, now, feedSize)
	if err != nil {
		return err
	}
	return writeCalendar(c, s.calendarOf(c.Request().Context(), sc.App, events, now), calendarFileName(sc.App.Name+" events"), false)
}
