package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/render"
	"marquee/server/access"
	"marquee/server/payments"
	"marquee/store"
)

// PageProps is what every page component receives. Page-specific data sits
// in Data, in the same shape the JSON API answers.
type PageProps struct {
	App       *store.AppView `json:"app"`
	Viewer    ViewerProps    `json:"viewer"`
	Path      string         `json:"path"`
	PublicURL string         `json:"publicUrl"`
	AuthURL   string         `json:"authUrl"`
	Now       time.Time      `json:"now"`
	Data      any            `json:"data"`
	Error     string         `json:"error,omitempty"`
	Status    int            `json:"status,omitempty"`
	// StripeKey is Stripe's publishable key when cards are configured
	// (the donation modal's Payment Element); the same for every viewer.
	StripeKey string `json:"stripeKey,omitempty"`
}

type ViewerProps struct {
	User        *ViewerUser  `json:"user"`
	Role        string       `json:"role" tstype:"Role"`
	Permissions access.Flags `json:"permissions"`
	// Gated: the subscription gate holds this viewer back (footer hidden).
	Gated bool `json:"gated"`
	// LoadError is SPEC.md's 'Failed to load user data': the session could
	// not be checked, so the page shows as to a visitor and says why.
	LoadError string `json:"loadError,omitempty"`
	// Preview: staff look at the page as a visitor or a member would
	// (launch_preview.go); the page shows the bar that ends it.
	Preview string `json:"preview,omitempty" tstype:"'visitor' | 'member'"`
}

type ViewerUser struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	PictureURL string `json:"pictureUrl"`
}

// defaultRenderTimeout is RENDER_TIMEOUT's default, also for a Config
// made in code without one.
const defaultRenderTimeout = 3 * time.Second

// pageProps fills the props every page shares.
func (s *Server) pageProps(c echo.Context, sc *Scope) PageProps {
	p := PageProps{
		Path: c.Request().URL.Path, PublicURL: s.cfg.PublicURL, AuthURL: s.cfg.AuthURL,
		Now: s.now().UTC(), Viewer: ViewerProps{Role: store.RolePublic},
	}
	if customHost(c.Request()) != nil {
		// On an app's own domain, signing in starts on the domain
		// (domain_signin.go): its auth links are the domain's own paths.
		p.AuthURL = ""
	}
	if s.payments.Enabled(payments.Stripe) && (sc == nil || s.cardOffered(c.Request().Context(), sc.App.ID)) {
		p.StripeKey = s.cfg.Stripe.PublishableKey
	}
	if failed, _ := c.Get(userLoadFailedKey).(bool); failed {
		p.Viewer.LoadError = msgUserLoadFailed
	}
	if sc != nil {
		p.App = s.pageAppOf(c, sc.App, false)
		p.Viewer.Role, p.Viewer.Permissions, p.Viewer.Gated, p.Viewer.Preview = sc.Role, sc.Can, sc.Gated, sc.Preview
	}
	if shared, _ := c.Get(sharedRenderKey).(bool); shared && viewerOf(c).User != nil {
		// One render for every member of the role (pagecache.go): signed
		// in, but nobody in particular; islands ask /api/auth/me who.
		p.Viewer.User = &ViewerUser{}
	} else if u := viewerOf(c).User; u != nil {
		p.Viewer.User = &ViewerUser{ID: u.ID, Username: u.Username, PictureURL: s.profilePictureURL(c.Request().Context(), u)}
	}
	return p
}

// pageApp is the app as page components receive it. Pages read the app's
// header, settings and, on the landing only, the three previews; the full
// lists of posts, items and events the landing API carries (SPEC.md section
// 3) are never shown, yet goja parsed all of them on every render (about half
// of the props of every app page). previews keeps the landing's previews.
// The view is shared (cached), so a copy is trimmed, never the original.
func pageApp(app *store.AppView, previews bool) *store.AppView {
	if app == nil {
		return nil
	}
	v := *app
	v.Events = []store.EventView{}
	if v.Community != nil {
		com := *v.Community
		com.Posts = []store.MessageView{}
		v.Community = &com
	}
	if v.Store != nil {
		st := *v.Store
		st.Items = []store.ItemView{}
		v.Store = &st
	}
	if !previews {
		v.RecentPosts, v.UpcomingEvents, v.FeaturedStoreItems = []store.MessageView{}, []store.EventView{}, []store.ItemView{}
	}
	return &v
}

// pageAppOf is pageApp with where the app lives (BaseURL) and whether the
// page is on the app's own domain (OnDomain): its links, canonical URL and
// feeds follow.
func (s *Server) pageAppOf(c echo.Context, app *store.AppView, previews bool) *store.AppView {
	v := pageApp(app, previews)
	if v == nil {
		return nil
	}
	v.BaseURL = s.appBaseURL(c.Request().Context(), app.ID, app.Name)
	if d := customHost(c.Request()); d != nil && d.AppID == app.ID {
		v.OnDomain = true
	}
	return v
}

func (s *Server) profilePictureURL(ctx context.Context, u *store.User) string {
	if u.ProfileMediaID == nil {
		return ""
	}
	m, err := s.store.MediaByID(ctx, *u.ProfileMediaID)
	if err != nil {
		return ""
	}
	return m.SignedURL
}

// renderPage runs a page component and writes the document.
func (s *Server) renderPage(c echo.Context, page string, props PageProps) error {
	status, body := s.renderDocument(c, page, props)
	if sc := scopeFromPage(c); sc != nil && (sc.Preview != "" || sc.App.Unpublished) {
		// An unpublished app's pages are its staff's, and a preview is
		// one staff member's look: no cache keeps them, no search engine
		// indexes them (issue 43 item 1).
		c.Response().Header().Set("Cache-Control", "private, no-store")
		c.Response().Header().Set("X-Robots-Tag", "noindex")
	}
	if c.Response().Header().Get("Cache-Control") == "" {
		c.Response().Header().Set("Cache-Control", "no-cache")
	}
	return c.HTMLBlob(status, body)
}

// renderDocument renders a page to a full HTML document. A failed render is
// logged and answered with a plain page that still links somewhere useful.
func (s *Server) renderDocument(c echo.Context, page string, props PageProps) (int, []byte) {
	timeout := s.cfg.RenderTimeout
	if timeout <= 0 {
		timeout = defaultRenderTimeout
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
	defer cancel()
	// Waiting renders take turns by app: a burst of one app's cold pages
	// does not hold back another app's.
	if props.App != nil {
		ctx = render.ForApp(ctx, props.App.ID)
	} else if sc := scopeFromPage(c); sc != nil && sc.App != nil {
		ctx = render.ForApp(ctx, sc.App.ID)
	}
	renderStart := time.Now()
	res, err := s.renderer.Render(ctx, page, props)
	s.metrics.render(time.Since(renderStart))
	if err != nil {
		if errors.Is(err, render.ErrBusy) {
			// Overload, said by the render queue at once (a refresh's
			// stale page is served instead: fillPage).
			s.logger.Debug("renderer busy", "page", page, "path", c.Request().URL.Path)
		} else {
			s.logger.Error("render failed", "page", page, "path", c.Request().URL.Path, "err", err)
		}
		// The fallback shows none of the page's content: no cache may keep
		// it (the page cache stores 200s only; no-store also keeps it from
		// browsers and proxies). A render that ran out of time is overload,
		// so it says when to try again.
		h := c.Response().Header()
		h.Set("Cache-Control", "no-store")
		if errors.Is(err, render.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, render.ErrBusy) {
			h.Set("Retry-After", "5")
			return http.StatusServiceUnavailable, s.fallbackDocument(c, props)
		}
		return http.StatusInternalServerError, s.fallbackDocument(c, props)
	}
	noteRender(c, res, props.Now)
	status := res.Status
	if props.Status != 0 {
		status = props.Status
	}
	app := props.App
	if sc := scopeFromPage(c); app == nil && sc != nil {
		// An error page inside an app (an unknown post) still wears the
		// app's theme and icons.
		app = sc.App
	}
	d := s.documentData(res, app, c.Echo() == s.main)
	if customHost(c.Request()) != nil {
		if d.ManifestURL != "" {
			d.ManifestURL = "/manifest.webmanifest" // the app's, at its domain's root
		}
		// Islands read it: their links carry no /apps/{name} here
		// (islands/lib/links.ts).
		d.BodyClass = strings.TrimSpace(d.BodyClass + " on-domain")
		if app != nil {
			prefix := "/apps/" + app.Name + "/"
			for _, u := range []*string{&d.IconURL, &d.AppleIconURL} {
				if strings.HasPrefix(*u, prefix) {
					*u = (*u)[len(prefix)-1:]
				}
			}
		}
	}
	return status, s.mediaOnDomain(c.Request(), s.renderer.Document(d))
}

func (s *Server) fallbackDocument(c echo.Context, props PageProps) []byte {
	title, links := "Marquee", [][2]string{{"Try again", c.Request().URL.String()}}
	if props.App != nil {
		title = props.App.Settings.Basic.DisplayName
		links = append(links, [2]string{"Home", "/apps/" + props.App.Name})
	}
	return s.renderer.FallbackDocument(title, "This page could not be shown right now.", links)
}

// renderErrorPage answers non-API errors with the ErrorPage component.
func (s *Server) renderErrorPage(c echo.Context, status int, message string) {
	props := s.pageProps(c, nil)
	props.Error, props.Status = message, status
	if err := s.renderPage(c, "ErrorPage", props); err != nil {
		s.logger.Error("error page failed", "err", err)
	}
}

const themeColor = "#111827"

// documentData is the HTML shell of a page. An app's pages, on the main
// site and on the auth site (its branded sign-in), wear the app's theme;
// on the main site they link their app's manifest (the auth site links the
// site's, which it serves).
func (s *Server) documentData(res render.Result, app *store.AppView, mainSite bool) render.DocumentData {
	d := render.DocumentData{Lang: "en", Result: res, ThemeColor: themeColor}
	if app != nil {
		if mainSite {
			d.ManifestURL = "/apps/" + url.PathEscape(app.Name) + "/manifest.webmanifest"
		}
		// The app's language, as its creator set it in the studio.
		if l := app.Settings.Basic.Lang; l != "" {
			d.Lang = l
		}
		d.Theme, d.ThemeColor = themeHead(app.Settings.Theme), themeColorOf(app.Settings.Theme)
		// The app's icons are the main site's (absolute from the auth site).
		base := ""
		if !mainSite {
			base = s.cfg.PublicURL
		}
		icons := iconsOf(app, base)
		d.IconURL, d.IconType, d.AppleIconURL = icons.Favicon, icons.FaviconType, icons.Apple
	}
	return d
}
