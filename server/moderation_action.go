package server

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// Moderation actions (POST /api/moderation/apps/{appId}/actions and the
// studio's forms).
const (
	ModDismiss = "DISMISS"
	ModHide    = "HIDE"
	ModUnhide  = "UNHIDE"
	ModApprove = "APPROVE"
	ModDelete  = "DELETE"
	ModWarn    = "WARN"
	ModBan     = "BAN"
	ModSilence = "SILENCE"
	ModLift    = "LIFT"
)

// ModerationAction is one reviewer decision about a target. For BAN and
// SILENCE the target's author (the member, for a member) is banned for Days
// days, or for good when Days is 0. LIFT takes a MEMBER target.
type ModerationAction struct {
	Action     string `json:"action" tstype:"'DISMISS' | 'HIDE' | 'UNHIDE' | 'APPROVE' | 'DELETE' | 'WARN' | 'BAN' | 'SILENCE' | 'LIFT'"`
	TargetType string `json:"targetType" tstype:"'POST' | 'COMMENT' | 'STORY' | 'EVENT' | 'MEMBER'"`
	TargetID   string `json:"targetId"`
	Reason     string `json:"reason"`
	Days       int    `json:"days"`
}

// moderate carries out one action for a reviewer and returns what to say.
func (s *Server) moderate(c echo.Context, sc *Scope, a ModerationAction) (string, error) {
	if err := requireReviewer(sc); err != nil {
		return "", err
	}
	ctx := c.Request().Context()
	a.Action = strings.ToUpper(strings.TrimSpace(a.Action))
	a.TargetType = strings.ToUpper(strings.TrimSpace(a.TargetType))
	a.Reason = strings.TrimSpace(a.Reason)
	if utf8.RuneCountInString(a.Reason) > maxReportChars {
		return "", fieldError("reason", "Keep the reason under 1000 characters")
	}
	if a.Days < 0 || a.Days > 3650 {
		return "", fieldError("days", "Days is 0 (for good) up to 3650")
	}
	actor := sc.User.ID
	if a.Action == ModLift {
		// A ban may outlive its account (it holds the e-mail): it is lifted
		// by the banned account's id, whether or not that still exists.
		if a.TargetType != store.TargetMember {
			return "", fieldError("targetType", "Lift a ban on a member")
		}
		if err := s.store.LiftBan(ctx, sc.App.ID, actor, a.TargetID, a.Reason); err != nil {
			return "", wrapLoad(err, "This member is not banned")
		}
		return "Ban lifted", nil
	}
	t, err := s.store.LoadReportTarget(ctx, sc.App.ID, a.TargetType, a.TargetID)
	if err != nil {
		return "", wrapLoad(err, "Not found")
	}
	switch a.Action {
	case ModDismiss:
		return "Reports dismissed", s.store.DismissReports(ctx, sc.App.ID, actor, t, a.Reason)
	case ModHide:
		return "Hidden", s.store.SetHidden(ctx, sc.App.ID, actor, t, store.HiddenByModerator, store.ActionHide, a.Reason)
	case ModUnhide, ModApprove:
		action := store.ActionUnhide
		if a.Action == ModApprove {
			action = store.ActionApprove
		}
		return "Shown again", s.store.SetHidden(ctx, sc.App.ID, actor, t, "", action, a.Reason)
	case ModDelete:
		if err := s.deleteTarget(c, t); err != nil {
			return "", err
		}
		return "Deleted", s.store.CloseReports(ctx, sc.App.ID, actor, t, store.ActionDelete, a.Reason)
	case ModWarn:
		return "Warning sent", s.store.Warn(ctx, sc.App.ID, actor, t, a.Reason)
	case ModBan, ModSilence:
		role := store.RoleAuthenticated
		if m, err := s.store.MembershipOf(ctx, sc.App.ID, t.UserID); err != nil {
			return "", err
		} else if m != nil {
			role = m.Role
		}
		if t.UserID == actor || !access.CanBan(sc.Role, role) {
			return "", forbidden("You cannot ban or silence this member")
		}
		n := store.NewBan{AppID: sc.App.ID, UserID: t.UserID, ActorID: actor, Kind: store.BanKindBan, Reason: a.Reason, Target: t}
		if a.Action == ModSilence {
			n.Kind = store.BanKindSilence
		}
		if a.Days > 0 {
			until := time.Now().UTC().Add(time.Duration(a.Days) * 24 * time.Hour)
			n.EndsAt = &until
		}
		if _, err := s.store.BanMember(ctx, n); err != nil {
			return "", answer(err, wording{store.ErrForbidden: "You cannot ban or silence this member"})
		}
		if n.Kind == store.BanKindSilence {
			return "@" + t.Username + " is silenced", nil
		}
		return "@" + t.Username + " is banned", nil
	}
	return "", fieldError("action", "Unknown action")
}

// deleteTarget removes reported content the way its own delete does.
func (s *Server) deleteTarget(c echo.Context, t *store.ReportTarget) error {
	ctx := c.Request().Context()
	switch t.Type {
	case store.TargetPost, store.TargetComment, store.TargetStory:
		m, err := s.store.MessageByID(ctx, t.ID)
		if err != nil {
			return wrapLoad(err, "Not found")
		}
		return s.store.DeleteMessage(ctx, m)
	case store.TargetEvent:
		e, err := s.store.EventByID(ctx, t.ID)
		if err != nil {
			return wrapLoad(err, "Not found")
		}
		return s.store.DeleteEvent(ctx, e, viewerOf(c).User.ID)
	}
	return fieldError("action", "Members are banned, not deleted")
}

// POST /api/moderation/apps/:appId/actions
func (s *Server) apiModerationAction(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	var a ModerationAction
	if err := c.Bind(&a); err != nil {
		return badRequest("Invalid request body")
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	msg, err := s.moderate(c, sc, a)
	if err != nil {
		return answer(err, nil)
	}
	return respondDone(c, msg)
}

// POST /apps/:app/studio/moderation: one action as a plain form, back to
// the page with what happened.
func (s *Server) formModerationAction(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	days, _ := strconv.Atoi(c.FormValue("days"))
	a := ModerationAction{Action: c.FormValue("action"), TargetType: c.FormValue("targetType"), TargetID: c.FormValue("targetId"),
		Reason: c.FormValue("reason"), Days: days}
	back := appBasePath(c.Request(), sc.App.Name) + "/studio/moderation"
	msg, err := s.moderate(c, sc, a)
	if err != nil {
		if e := refusal(err, nil); e != nil {
			return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape(e.Message))
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, back+"?done="+url.QueryEscape(msg))
}

// saveModerationRules: the creator and admins set the threshold and the
// hold on new accounts' links.
func (s *Server) saveModerationRules(c echo.Context, sc *Scope, m store.ModerationSettings) error {
	if err := requireReviewer(sc); err != nil {
		return err
	}
	if !access.CanSetModerationRules(sc.Role) {
		return forbidden(msgRulesOnly)
	}
	return s.store.SetModerationSettings(c.Request().Context(), sc.App.ID, sc.User.ID, m)
}

const msgRulesOnly = "Only the creator and admins can change the moderation rules"

// PUT /api/moderation/apps/:appId/settings
func (s *Server) apiModerationSettings(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	var m store.ModerationSettings
	if err := c.Bind(&m); err != nil {
		return badRequest("Invalid request body")
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	if err := s.saveModerationRules(c, sc, m); err != nil {
		return answer(err, nil)
	}
	// The rules now in force: 0 asked for the default, which is answered.
	m.ReportThreshold = m.Threshold()
	return respondMessage(c, http.StatusOK, m, "Moderation rules saved")
}

// POST /apps/:app/studio/moderation/settings
func (s *Server) formModerationSettings(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	back := appBasePath(c.Request(), sc.App.Name) + "/studio/moderation"
	// A blank threshold is the default (0); one that is not a number is
	// refused, not taken as the default.
	n := 0
	if v := strings.TrimSpace(c.FormValue("reportThreshold")); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape(store.MsgReportThreshold))
		}
	}
	m := store.ModerationSettings{ReportThreshold: n, HoldNewAccountLinks: c.FormValue("holdNewAccountLinks") != ""}
	if err := s.saveModerationRules(c, sc, m); err != nil {
		if e := refusal(err, nil); e != nil {
			return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape(e.Message))
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, back+"?done="+url.QueryEscape("Moderation rules saved"))
}
