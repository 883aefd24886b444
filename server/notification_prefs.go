package server

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

type prefsAnswer struct {
	MutedAll   bool     `json:"mutedAll"`
	MutedKinds []string `json:"mutedKinds"`
	Kinds      []string `json:"kinds"`
	// The e-mail switches, apart from the in-app ones (receipts and
	// account mail are always sent).
	EmailMutedAll   bool     `json:"emailMutedAll"`
	EmailMutedKinds []string `json:"emailMutedKinds"`
	// EmailKinds are the kinds whose e-mail can be switched off: the
	// notification kinds and the app's newsletter.
	EmailKinds []string `json:"emailKinds"`
	// EmailDigest: one mail a week with the app's new posts and events
	// instead of a mail for each post.
	EmailDigest bool `json:"emailDigest"`
}

// prefsOf is what the settings show a member of role: the kinds only the
// creator and admins receive (new orders, donations, new members) are
// offered to them alone.
func prefsOf(p *store.NotificationPreference, role string) prefsAnswer {
	kinds, emailKinds := store.NotificationKinds, store.EmailKinds
	if !access.CanOpenStudio(role) {
		kinds = slices.DeleteFunc(slices.Clone(kinds), store.StaffNotificationKind)
		emailKinds = slices.DeleteFunc(slices.Clone(emailKinds), store.StaffNotificationKind)
	}
	return prefsAnswer{MutedAll: p.MutedAll, MutedKinds: p.Muted(), Kinds: kinds,
		EmailMutedAll: p.EmailMutedAll, EmailMutedKinds: p.EmailMuted(), EmailKinds: emailKinds, EmailDigest: p.EmailDigest}
}

// GET /api/notifications/preferences/:appId: what the member mutes in this app.
func (s *Server) apiNotificationPrefs(c echo.Context) error {
	sc, err := s.notificationScope(c, c.Param("appId"))
	if err != nil {
		return err
	}
	p, err := s.store.NotificationPreferences(c.Request().Context(), sc.App.ID, sc.User.ID)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, prefsOf(p, sc.Role))
}

type prefsRequest struct {
	MutedAll   bool     `json:"mutedAll"`
	MutedKinds []string `json:"mutedKinds"`
	// Left out (nil), the e-mail switches stay as they are.
	EmailMutedAll   *bool     `json:"emailMutedAll"`
	EmailMutedKinds *[]string `json:"emailMutedKinds"`
	EmailDigest     *bool     `json:"emailDigest"`
}

// PUT /api/notifications/preferences/:appId replaces the member's choice.
func (s *Server) apiSetNotificationPrefs(c echo.Context) error {
	sc, err := s.notificationScope(c, c.Param("appId"))
	if err != nil {
		return err
	}
	var req prefsRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	return s.savePrefs(c, sc, req, func(p *store.NotificationPreference) error {
		return respondMessage(c, http.StatusOK, prefsOf(p, sc.Role), "Notification settings saved")
	})
}

// POST /apps/:app/notifications/settings: the same without JavaScript
// (checkboxes: mutedAll, mutedKinds).
func (s *Server) formNotificationPrefs(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.redirectToSignIn(c)
	}
	if !sc.Can.CanNotifications {
		return forbidden("Follow the app to get its notifications")
	}
	form, err := c.FormParams()
	if err != nil {
		return badRequest("Invalid form")
	}
	req := prefsRequest{MutedAll: form.Get("mutedAll") != "", MutedKinds: form["mutedKinds"]}
	if form.Get("emailForm") != "" {
		all, kinds := form.Get("emailMutedAll") != "", form["emailMutedKinds"]
		digest := form.Get("emailDigest") != ""
		req.EmailMutedAll, req.EmailMutedKinds, req.EmailDigest = &all, &kinds, &digest
	}
	return s.savePrefs(c, sc, req, func(*store.NotificationPreference) error {
		return c.Redirect(http.StatusSeeOther, "/apps/"+sc.App.Name+"/profile#notification-settings")
	})
}

func (s *Server) savePrefs(c echo.Context, sc *Scope, req prefsRequest, answer func(*store.NotificationPreference) error) error {
	for _, k := range req.MutedKinds {
		if !slices.Contains(store.NotificationKinds, k) {
			return badRequest("Unknown notification kind: " + k)
		}
	}
	p, err := s.store.SetNotificationPreferences(c.Request().Context(), sc.App.ID, sc.User.ID, req.MutedAll, req.MutedKinds)
	if err != nil {
		return err
	}
	if req.EmailMutedAll != nil || req.EmailMutedKinds != nil {
		all, kinds := p.EmailMutedAll, p.EmailMuted()
		if req.EmailMutedAll != nil {
			all = *req.EmailMutedAll
		}
		if req.EmailMutedKinds != nil {
			kinds = *req.EmailMutedKinds
			for _, k := range kinds {
				if !slices.Contains(store.EmailKinds, k) {
					return badRequest("Unknown notification kind: " + k)
				}
			}
		}
		if p, err = s.store.SetEmailPreferences(c.Request().Context(), sc.App.ID, sc.User.ID, all, kinds); err != nil {
			return err
		}
	}
	if req.EmailDigest != nil && *req.EmailDigest != p.EmailDigest {
		if p, err = s.store.SetEmailDigest(c.Request().Context(), sc.App.ID, sc.User.ID, *req.EmailDigest); err != nil {
			return err
		}
	}
	return answer(p)
}
