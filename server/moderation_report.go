package server

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

const (
	msgReportReceived = "Report received. Our moderators will review it."
	msgReportReason   = "Choose a reason: spam, harassment, illegal or other"
	msgReportText     = "Say what is wrong (reason other)"
	msgReportSelf     = "You cannot report yourself"
	maxReportChars    = 1000
)

// ReportRequest is POST /api/reports's body and the report form's fields.
type ReportRequest struct {
	AppID      string `json:"appId" form:"appId"`
	TargetType string `json:"targetType" form:"targetType" tstype:"'POST' | 'COMMENT' | 'STORY' | 'EVENT' | 'MEMBER'"`
	TargetID   string `json:"targetId" form:"targetId"`
	Reason     string `json:"reason" form:"reason" tstype:"'SPAM' | 'HARASSMENT' | 'ILLEGAL' | 'OTHER'"`
	Text       string `json:"text" form:"text"`
}

// ReportResult answers a report: received either way; Created is false
// when the member had already reported the target.
type ReportResult struct {
	TargetType string `json:"targetType"`
	TargetID   string `json:"targetId"`
	Created    bool   `json:"created"`
}

// fileReport is the one path of a report, from the API and the form: the
// viewer may report, the target is in the app and not their own, the
// reason is known.
func (s *Server) fileReport(c echo.Context, sc *Scope, req ReportRequest) (*ReportResult, error) {
	if sc.User == nil {
		return nil, unauthorized("Authentication required")
	}
	if !access.CanReport(sc.Role) {
		return nil, forbidden("You cannot report in this app")
	}
	req.TargetType = strings.ToUpper(strings.TrimSpace(req.TargetType))
	req.Reason = strings.ToUpper(strings.TrimSpace(req.Reason))
	req.Text = strings.TrimSpace(req.Text)
	if !slices.Contains(store.ReportReasons, req.Reason) {
		return nil, fieldError("reason", msgReportReason)
	}
	if req.Reason == store.ReasonOther && req.Text == "" {
		return nil, fieldError("text", msgReportText)
	}
	if utf8.RuneCountInString(req.Text) > maxReportChars {
		return nil, fieldError("text", "Keep it under 1000 characters")
	}
	if !slices.Contains(store.ReportTargets, req.TargetType) {
		return nil, fieldError("targetType", "targetType must be POST, COMMENT, STORY, EVENT or MEMBER")
	}
	ctx := c.Request().Context()
	t, err := s.store.LoadReportTarget(ctx, sc.App.ID, req.TargetType, req.TargetID)
	if err != nil {
		return nil, wrapLoad(err, "Not found")
	}
	if !sc.sees(t.Hidden, t.UserID) {
		return nil, notFound("Not found")
	}
	if t.UserID == sc.User.ID {
		return nil, badRequest(msgReportSelf)
	}
	out, err := s.store.FileReport(ctx, store.NewReport{AppID: sc.App.ID, ReporterID: sc.User.ID, Reason: req.Reason,
		Text: req.Text, Target: t, Threshold: sc.App.Settings.Moderation.Threshold(),
		Allow: func(context.Context) error { return s.limitWrite(c, "report", sc.User.ID) }})
	if err != nil {
		return nil, err
	}
	return &ReportResult{TargetType: t.Type, TargetID: t.ID, Created: out.Created}, nil
}

// POST /api/reports: 201 for a new report, 200 when the member had reported
// the target before (nothing changes); "Report received" either way.
func (s *Server) apiReport(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	var req ReportRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.AppID == "" {
		return fieldError("appId", "appId is required")
	}
	sc, err := s.scopeOf(c, req.AppID)
	if err != nil {
		return err
	}
	res, err := s.fileReport(c, sc, req)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !res.Created {
		status = http.StatusOK
	}
	return respondMessage(c, status, res, msgReportReceived)
}

// ReportPageData is the report form: what is reported, the reasons, and
// the outcome of the last post.
type ReportPageData struct {
	Target  *store.ReportTarget `json:"target"`
	Reasons []string            `json:"reasons"`
	Done    bool                `json:"done"`
	Error   string              `json:"error"`
}

// GET /apps/:app/report?type=POST&id=...: the report form, for every
// browser (the Report links of posts, comments, stories, events and
// members lead here); ?done=1 says the report was received.
func (s *Server) pageReport(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusFound, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	done := c.QueryParam("done") == "1"
	t, err := s.store.LoadReportTarget(c.Request().Context(), sc.App.ID, strings.ToUpper(c.QueryParam("type")), c.QueryParam("id"))
	if err == nil && !sc.sees(t.Hidden, t.UserID) {
		if !done {
			err = store.ErrNotFound
		} else {
			// The report just received may be the one that hid it: the
			// reporter is thanked without the hidden content.
			t.Summary, t.Link = "Hidden while moderators review it", ""
		}
	}
	if err != nil {
		return wrapLoad(err, "Nothing to report here")
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	props := s.pageProps(c, sc)
	props.Data = ReportPageData{Target: t, Reasons: store.ReportReasons, Done: done, Error: c.QueryParam("error")}
	return s.renderPage(c, "Report", props)
}

// POST /apps/:app/report: the report form without JavaScript; back to the
// form, which says the report was received (or what was wrong).
func (s *Server) formReport(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	req := ReportRequest{TargetType: c.FormValue("targetType"), TargetID: c.FormValue("targetId"),
		Reason: c.FormValue("reason"), Text: c.FormValue("text")}
	back := appBasePath(c.Request(), sc.App.Name) + "/report?type=" + url.QueryEscape(req.TargetType) + "&id=" + url.QueryEscape(req.TargetID)
	if _, err := s.fileReport(c, sc, req); err != nil {
		if e := refusal(err, nil); e != nil && e.Status != http.StatusNotFound {
			return c.Redirect(http.StatusSeeOther, back+"&error="+url.QueryEscape(e.Message))
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, back+"&done=1")
}
