package server

import (
	"encoding/csv"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// analyticsRange reads ?from=&to= (inclusive days, YYYY-MM-DD) and
// ?bucket=day|week|month; by default the last 30 days by day. A range is
// at most about 3 years.
func analyticsRange(c echo.Context, now time.Time) (store.AnalyticsRange, *Error) {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	r := store.AnalyticsRange{From: today.AddDate(0, 0, -29), To: today.AddDate(0, 0, 1), Bucket: store.BucketDay}
	if v := c.QueryParam("from"); v != "" {
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return r, fieldError("from", "Dates look like 2026-11-26")
		}
		r.From = t
	}
	if v := c.QueryParam("to"); v != "" {
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return r, fieldError("to", "Dates look like 2026-11-26")
		}
		r.To = t.AddDate(0, 0, 1)
	}
	switch b := c.QueryParam("bucket"); b {
	case "", store.BucketDay, store.BucketWeek, store.BucketMonth:
		if b != "" {
			r.Bucket = b
		}
	default:
		return r, fieldError("bucket", "Group by day, week or month")
	}
	if !r.From.Before(r.To) {
		return r, fieldError("from", "The start must be on or before the end")
	}
	if r.To.Sub(r.From) > 3*366*24*time.Hour {
		return r, fieldError("from", "Choose a range of at most 3 years")
	}
	if r.Bucket == store.BucketDay && r.To.Sub(r.From) > 366*24*time.Hour {
		r.Bucket = store.BucketWeek // a year of days is no chart
	}
	return r, nil
}

// GET /apps/:app/studio/analytics
func (s *Server) pageStudioAnalytics(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	r, ferr := analyticsRange(c, time.Now().UTC())
	status, d := http.StatusOK, StudioData{Section: sectionAnalytics}
	if ferr != nil {
		d.Error, d.Fields, d.Form, status = ferr.Message, ferr.Fields, "range", ferr.Status
		r = store.AnalyticsRange{From: time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -29), To: time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1), Bucket: store.BucketDay}
	}
	a, err := s.store.AppAnalytics(c.Request().Context(), sc.App.ID, r)
	if err != nil {
		return err
	}
	d.Analytics = a
	return s.renderStudio(c, sc, d, status)
}

// GET /api/studio/apps/:appId/analytics?from=&to=&bucket=
func (s *Server) apiStudioAnalytics(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	r, ferr := analyticsRange(c, time.Now().UTC())
	if ferr != nil {
		return ferr
	}
	a, err := s.store.AppAnalytics(c.Request().Context(), sc.App.ID, r)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, a)
}

// GET /apps/:app/studio/export/:kind (orders.csv, members.csv, donations.csv)
func (s *Server) studioExport(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	r, ferr := analyticsRange(c, time.Now().UTC())
	if ferr != nil {
		return ferr
	}
	ctx := c.Request().Context()
	var rows [][]string
	switch kind := c.Param("kind"); kind {
	case "orders.csv":
		rows, err = s.store.ExportOrders(ctx, sc.App.ID, r)
	case "members.csv":
		rows, err = s.store.ExportMembers(ctx, sc.App.ID)
	case "donations.csv":
		rows, err = s.store.ExportDonations(ctx, sc.App.ID, r)
	default:
		return notFound("Export not found")
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+sc.App.Name+"-"+c.Param("kind")+`"`)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	for _, row := range rows {
		for i, cell := range row {
			row[i] = csvSafe(cell)
		}
		if err := w.Write(row); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// csvSafe keeps a spreadsheet from reading a member's text as a formula.
func csvSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		if _, err := time.Parse(time.RFC3339, v); err != nil && !isAmount(v) {
			return "'" + v
		}
	}
	return v
}

func isAmount(v string) bool {
	v = strings.TrimPrefix(v, "-")
	whole, frac, ok := strings.Cut(v, ".")
	if !ok || len(frac) != 2 || whole == "" {
		return false
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
