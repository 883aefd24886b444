package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// Scope is one app as one viewer sees it. Every page and every API call that
// touches an app's content starts from one, so "is this feature on, is this
// object in this app, what may the viewer do" is answered the same way
// everywhere.
type Scope struct {
	App        *store.AppView
	User       *store.User // nil for visitors
	Role       string
	Membership *store.Membership
	Can        access.Flags
	// Gated is the subscription gate's verdict (access.Gated): pages other
	// than home, cart and checkout redirect home, and the footer hides.
	Gated bool
	// Ban is the viewer's ban or silence in force in this app, or nil.
	Ban *store.Ban
	// Reader decides which posts and stories the viewer may read
	// (store.CanRead, the one rule): locked ones reach them as teasers.
	Reader store.Reader
	// Content is what of the app's paid content the viewer may see
	// (access.ContentFor, the one rule): ContentAll unless Gated.
	Content access.Content
	// OwnHidden: the viewer wrote a post of the app that is hidden, so
	// their feed shows it to them and their pages are not shared (set by
	// the page cache's member lookup).
	OwnHidden bool
	// Preview is how staff look at the app now (launch_preview.go):
	// store.PreviewVisitor or store.PreviewMember, "" for themselves. The
	// rest of the scope is that viewer's; such a page is never cached.
	Preview string
}

// scopeOf loads an app by id or name (404 'App not found') and the viewer's
// standing in it. Its App holds no current counts (loadAccess): answers
// that show counts read them (pageScope, the feed's overlay).
func (s *Server) scopeOf(c echo.Context, idOrName string) (*Scope, error) {
	view, err := s.loadAccess(c, idOrName)
	if err != nil {
		return nil, err
	}
	return s.scopeOfView(c, view)
}

func (s *Server) scopeOfView(c echo.Context, view *store.AppView) (*Scope, error) {
	if d := customHost(c.Request()); d != nil && d.AppID != view.ID {
		// A custom domain serves its own app and no other, API included:
		// its origin is trusted for that app only.
		return nil, notFound("App not found")
	}
	v := viewerOf(c)
	if staff, ok := c.Get(previewerKey).(*Viewer); ok {
		// A visitor's preview: the staff member behind it decides access.
		v = staff
	}
	if v.LookupErr != nil {
		// The session could not be checked: answering as a visitor would
		// be a wrong answer on a write, so the dependency error surfaces.
		return nil, v.LookupErr
	}
	sc := &Scope{App: view, User: v.User, Role: store.RolePublic}
	var ban *store.Ban
	if v.User != nil {
		sc.Role = store.RoleAuthenticated
		m, b, err := s.store.StandingOf(c.Request().Context(), view.ID, v.User.ID, v.User.Email, time.Now())
		if err != nil {
			return nil, err
		}
		if m != nil {
			sc.Membership, sc.Role = m, m.Role
		}
		ban = b
	}
	if view.Unpublished && !access.SeesUnpublished(sc.Role) {
		// Not published yet (issue 43 item 1): its staff alone may open
		// it; to anyone else it answers as an unknown app does.
		return nil, notFound(msgAppNotFound)
	}
	sc.Can = access.For(view.Settings, sc.Role)
	uid := ""
	if v.User != nil {
		uid = v.User.ID
	}
	reader, err := s.store.ReaderOf(c.Request().Context(), view.ID, uid, sc.Role, time.Now())
	if err != nil {
		return nil, err
	}
	sc.Reader = reader
	if ban != nil {
		if err := applyBan(c, sc, ban); err != nil {
			return nil, err
		}
	}
	// Ask for the subscription only when the gate could hold this viewer.
	if access.Gated(view.Settings, sc.Role, false) {
		subscribed := false
		if v.User != nil {
			var err error
			subscribed, err = s.store.HasValidSubscription(c.Request().Context(), view.ID, v.User.ID, time.Now())
			if err != nil {
				return nil, err
			}
		}
		sc.Content = access.ContentFor(view.Settings, sc.Role, subscribed)
		sc.Gated = sc.Content != access.ContentAll
	}
	if mode := previewMode(c, sc); mode != "" {
		applyPreview(c, sc, v, mode)
	}
	return sc, nil
}

// setRole updates the scope after a write changed the viewer's membership.
func (sc *Scope) setRole(role string) {
	sc.Role = role
	if role != store.RoleSubscriber {
		sc.Reader = store.Reader{Role: role}
	} else {
		sc.Reader.Role = role
	}
	sc.Can = access.For(sc.App.Settings, role)
	if sc.Ban != nil {
		sc.Can = access.Restrict(sc.Can, sc.Ban.Kind)
	}
}

// Feature names for requireFeature.
const (
	featureCommunity = "community"
	featureStore     = "store"
	featureEvents    = "events"
)

// requireFeature answers 404 with a clear message when the app has the
// feature off: its content is not reachable while the feature is off.
func (sc *Scope) requireFeature(name string) error {
	f := sc.App.Settings.Features
	on := map[string]bool{
		featureCommunity: f.Community.Enabled && sc.App.Community != nil,
		featureStore:     f.Store.Enabled && sc.App.Store != nil,
		featureEvents:    f.Events.Enabled,
	}[name]
	if on {
		return nil
	}
	if name == featureCommunity {
		return notFound("This app doesn't have community features enabled.")
	}
	return notFound("This app doesn't have " + name + " enabled.")
}

// requireUngated is the subscription gate on the JSON API: a gated app's
// content (posts, stories, replies, reactions, events) answers 401 to
// visitors and 403 to members without a valid subscription, exactly as the
// pages redirect them home. It runs after requireFeature, so a feature that
// is off still reads as missing.
func (sc *Scope) requireUngated() error {
	if !sc.Gated {
		return nil
	}
	if sc.User == nil {
		return unauthorized("Authentication required")
	}
	return forbidden(gatedMessage)
}

const gatedMessage = "An active subscription is required to see this content"

// contains reports whether an object of appID belongs to this scope's app;
// callers answer 404 otherwise, so apps never learn of each other's objects.
func (sc *Scope) contains(appID string) bool { return appID == sc.App.ID }

// requireUser answers 401 'Authentication required' to visitors, and the
// dependency error when the session could not be checked.
func requireUser(c echo.Context) (*store.User, error) {
	v := viewerOf(c)
	if v.LookupErr != nil {
		return nil, v.LookupErr
	}
	if v.User != nil {
		return v.User, nil
	}
	return nil, unauthorized("Authentication required")
}

// appPage is the middleware of every /apps/:app/... page: it loads the
// app's scope (cached landing data and the viewer's role), or answers 404.
// A session that could not be checked counts as signed out here (SPEC.md
// section 4): pages stay readable while a dependency is down.
func (s *Server) appPage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if scopeFromPage(c) != nil {
			return next(c) // the page cache loaded it to key the page
		}
		sc, err := s.pageScope(c, c.Param("app"))
		if err != nil {
			return err
		}
		c.Set("scope", sc)
		return next(c)
	}
}

// msgAppLoadFailed is SPEC.md's 'Failed to load app data' (with Retry).
const msgAppLoadFailed = "Failed to load app data"

// msgUserLoadFailed is SPEC.md's 'Failed to load user data': a page whose
// session could not be checked shows as to a visitor, and says so.
const (
	msgUserLoadFailed = "Failed to load user data"
	userLoadFailedKey = "userLoadFailed"
)

// pageScope is scopeOf for pages: a failed session check reads as a visitor.
func (s *Server) pageScope(c echo.Context, idOrName string) (*Scope, error) {
	view, err := s.loadLanding(c, idOrName)
	if err != nil {
		if status, _ := classify(err); status >= 500 && !jsonPath(c.Request().URL.Path) {
			// SPEC.md section 8: the app itself could not be loaded; the
			// page offers Retry.
			return nil, &Error{Status: http.StatusServiceUnavailable, Message: msgAppLoadFailed, Err: err}
		}
		return nil, err
	}
	if v := viewerOf(c); v.LookupErr != nil {
		c.Set("viewer", &Viewer{})
		c.Set(userLoadFailedKey, true)
	}
	return s.scopeOfView(c, view)
}

// scopeFromPage returns what appPage loaded.
func scopeFromPage(c echo.Context) *Scope {
	sc, _ := c.Get("scope").(*Scope)
	return sc
}
