package server

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// ModerationData is the studio's moderation page and GET
// /api/moderation/apps/{appId}: the review queue grouped by target, the
// bans and silences in force, the audit log, and the app's rules.
type ModerationData struct {
	Queue         []store.QueueItem          `json:"queue"`
	Bans          []store.BanView            `json:"bans"`
	Log           []store.ModerationLogEntry `json:"log"`
	LogPagination store.Pagination           `json:"logPagination"`
	Settings      store.ModerationSettings   `json:"settings"`
	// Threshold is the report threshold in force (the default when unset).
	Threshold   int  `json:"threshold"`
	CanSetRules bool `json:"canSetRules"`
	// Done and Error are the outcome of the last form post (page only).
	Done  string `json:"done"`
	Error string `json:"error"`
}

const auditPageSize = 50

// requireReviewer answers 401 to visitors and 403 to anyone below
// MODERATOR (access.CanReview).
func requireReviewer(sc *Scope) error {
	if sc.User == nil {
		return unauthorized("Authentication required")
	}
	if !access.CanReview(sc.Role) {
		return forbidden(msgReviewOnly)
	}
	return nil
}

const msgReviewOnly = "Only the app's moderators can review reports"

// loadModeration is the one loader of the moderation page and its JSON.
func (s *Server) loadModeration(c echo.Context, sc *Scope) (*ModerationData, error) {
	ctx := c.Request().Context()
	page, _, err := pageParams(c, auditPageSize)
	if err != nil {
		return nil, err
	}
	queue, err := s.store.ModerationQueue(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	bans, err := s.store.Bans(ctx, sc.App.ID, time.Now())
	if err != nil {
		return nil, err
	}
	log, p, err := s.store.ModerationLog(ctx, sc.App.ID, page, auditPageSize)
	if err != nil {
		return nil, err
	}
	m := sc.App.Settings.Moderation
	return &ModerationData{Queue: queue, Bans: bans, Log: log, LogPagination: p, Settings: m, Threshold: m.Threshold(),
		CanSetRules: access.CanSetModerationRules(sc.Role)}, nil
}

// GET /api/moderation/apps/:appId
func (s *Server) apiModeration(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	if err := requireReviewer(sc); err != nil {
		return err
	}
	data, err := s.loadModeration(c, sc)
	if err != nil {
		return err
	}
	return respondPage(c, data, data.LogPagination)
}

// GET /apps/:app/studio/moderation: the review queue, bans and audit log
// as a page of plain forms (every action works without JavaScript).
func (s *Server) pageModeration(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusFound, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	if err := requireReviewer(sc); err != nil {
		return err
	}
	data, err := s.loadModeration(c, sc)
	if err != nil {
		return err
	}
	data.Done, data.Error = c.QueryParam("done"), c.QueryParam("error")
	c.Response().Header().Set("Cache-Control", "no-store")
	props := s.pageProps(c, sc)
	props.Data = data
	return s.renderPage(c, "Moderation", props)
}
