package server

import (
	"math"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// Preview as a visitor or as a member (issue 43 item 1): the creator and
// admins switch their own view of the app, from the launch checklist or
// the bar every previewed page shows, with a plain form (no JavaScript
// needed). The choice is a cookie naming the mode and the app; while it is
// set, the app's pages (GET) are answered as that viewer would get them: a
// visitor (signed out, locked posts locked, no staff controls) or a member
// of every tier, whose JSON reads (the islands') are previewed too. Writes, and the studio,
// stay the staff member's own. A previewed answer is never cached: the
// page cache lets any request with the cookie through (cachePage), and
// the page says no-store.

const (
	// previewCookie holds "<mode>.<app id>".
	previewCookie = "marquee_preview"
	// previewerKey holds, during a visitor's preview, the staff member
	// whose session it is (the request's viewer is then nobody).
	previewerKey = "previewer"
)

func hasCookie(r *http.Request, name string) bool {
	_, err := r.Cookie(name)
	return err == nil
}

// previewOf reads the preview cookie: the mode and the app it is for.
func previewOf(r *http.Request) (mode, appID string) {
	ck, err := r.Cookie(previewCookie)
	if err != nil {
		return "", ""
	}
	mode, appID, _ = strings.Cut(ck.Value, ".")
	if mode != store.PreviewVisitor && mode != store.PreviewMember {
		return "", ""
	}
	return mode, appID
}

// previewMode is the preview that applies to this request of sc's app: a
// read by staff who may preview, outside the studio.
func previewMode(c echo.Context, sc *Scope) string {
	r := c.Request()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return ""
	}
	mode, appID := previewOf(r)
	if mode == "" || appID != sc.App.ID || !access.CanPublish(sc.Role) {
		return ""
	}
	p := r.URL.Path
	if strings.HasPrefix(p, "/api/studio/") || strings.Contains(p+"/", "/studio/") {
		return ""
	}
	if mode == store.PreviewVisitor && jsonPath(p) {
		// A visitor's pages call no JSON of the app (they ship no islands
		// that do), and a visitor's calls that need a session are refused
		// before any scope: the JSON answers stay the staff member's own.
		return ""
	}
	return mode
}

// applyPreview turns the staff member's scope into the previewed viewer's.
func applyPreview(c echo.Context, sc *Scope, staff *Viewer, mode string) {
	settings := sc.App.Settings
	sc.Preview, sc.Ban, sc.OwnHidden = mode, nil, false
	sc.Content, sc.Gated = access.ContentAll, false
	switch mode {
	case store.PreviewVisitor:
		// Signed out: the page is rendered for nobody.
		c.Set(previewerKey, staff)
		c.Set("viewer", &Viewer{})
		sc.User, sc.Membership, sc.Role = nil, nil, store.RolePublic
		sc.Reader = store.Reader{Role: store.RolePublic}
		if access.Gated(settings, store.RolePublic, false) {
			sc.Content = access.ContentFor(settings, store.RolePublic, false)
			sc.Gated = sc.Content != access.ContentAll
		}
	default:
		// A member holding every tier: what members pay for, unlocked.
		sc.Role = store.RoleSubscriber
		if sc.Membership != nil {
			m := *sc.Membership
			m.Role = store.RoleSubscriber
			sc.Membership = &m
		}
		sc.Reader = store.Reader{Role: store.RoleSubscriber, Member: true, Rank: math.MaxInt32}
	}
	sc.Can = access.For(settings, sc.Role)
}

// POST /apps/:app/studio/preview (mode: visitor, member or off; back: the
// app's page to return to): switches the staff member's view.
func (s *Server) formStudioPreview(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	if !access.CanPublish(sc.Role) {
		return forbidden(msgStudioOnly)
	}
	base := appBasePath(c.Request(), sc.App.Name)
	back := c.FormValue("back")
	if back != base && !strings.HasPrefix(back, base+"/") || strings.HasPrefix(back, base+"/studio") || strings.ContainsAny(back, "\\\r\n") {
		back = ""
	}
	mode := c.FormValue("mode")
	ck := &http.Cookie{Name: previewCookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.cfg.SecureCookies()}
	switch mode {
	case store.PreviewVisitor, store.PreviewMember:
		if err := s.store.NotePreview(c.Request().Context(), sc.App.ID, mode); err != nil {
			return err
		}
		ck.Value = mode + "." + sc.App.ID
		c.SetCookie(ck)
		if back == "" {
			back = base
		}
		return c.Redirect(http.StatusSeeOther, back)
	case "off":
		ck.MaxAge = -1
		c.SetCookie(ck)
		if back == "" {
			back = base + "/studio/launch"
		}
		return c.Redirect(http.StatusSeeOther, back)
	}
	return badRequest("Preview as a visitor or as a member, or turn the preview off")
}
