package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// loadLanding is the one loader behind the landing page and its JSON call.
func (s *Server) loadLanding(c echo.Context, idOrName string) (*store.AppView, error) {
	return usableApp(s.store.Landing(c.Request().Context(), idOrName))
}

// loadAccess is loadLanding without the engagement counts (posts'
// reactions and replies, members), which deciding access never reads.
func (s *Server) loadAccess(c echo.Context, idOrName string) (*store.AppView, error) {
	return usableApp(s.store.LandingContent(c.Request().Context(), idOrName))
}

func usableApp(view *store.AppView, err error) (*store.AppView, error) {
	if err != nil {
		return nil, wrapLoad(err, msgAppNotFound)
	}
	if view.Status == store.AppSuspended {
		// The operator took it offline (`bin/marquee app suspend`): no page
		// or call of it answers, for anyone, until it is lifted.
		return nil, notFound(msgAppSuspended)
	}
	return view, nil
}

// GET /api/app/:appId/landing
func (s *Server) apiLanding(c echo.Context) error {
	sc, err := s.pageScope(c, c.Param("appId"))
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, landingFor(sc))
}

// landingFor is the landing data as this viewer may see it (the one rule,
// access.ContentFor): a gated viewer of a landingPageOnly app gets a copy
// without the content previews, one of a required app short teasers (text
// cut, no media: a gated file's signed link would be the file itself).
// The cached value is shared, so it is never changed in place.
func landingFor(sc *Scope) *store.AppView {
	v := *sc.App
	// Locked posts are teasers for this viewer (store.LockViews).
	v.RecentPosts = store.LockViews(v.RecentPosts, sc.Reader)
	v.UpcomingEvents, v.Events = store.LockEvents(v.UpcomingEvents, sc.Reader), store.LockEvents(v.Events, sc.Reader)
	if v.Community != nil {
		com := *v.Community
		com.Posts = store.LockViews(com.Posts, sc.Reader)
		v.Community = &com
	}
	if sc.Content == access.ContentAll {
		return &v
	}
	if sc.Content == access.ContentNone {
		v.RecentPosts, v.UpcomingEvents, v.Events, v.FeaturedStoreItems = []store.MessageView{}, []store.EventView{}, []store.EventView{}, []store.ItemView{}
	} else {
		v.RecentPosts, v.UpcomingEvents, v.Events = gateTeasers(sc.App.RecentPosts, sc.Reader), teaserEvents(v.UpcomingEvents), teaserEvents(v.Events)
		v.FeaturedStoreItems = teaserItems(v.FeaturedStoreItems)
	}
	if v.Community != nil {
		com := *v.Community
		com.Posts = []store.MessageView{}
		if sc.Content == access.ContentTeaser {
			com.Posts = gateTeasers(sc.App.Community.Posts, sc.Reader)
		}
		v.Community = &com
	}
	if v.Store != nil {
		st := *v.Store
		st.Items = []store.ItemView{}
		if sc.Content == access.ContentTeaser {
			st.Items = teaserItems(sc.App.Store.Items)
		}
		v.Store = &st
	}
	return &v
}

// teaserPosts copies posts as teasers: the first words, no attachments, no
// comments.
func teaserPosts(in []store.MessageView) []store.MessageView {
	out := make([]store.MessageView, len(in))
	for i, p := range in {
		p.Content = access.Teaser(p.Content)
		p.Attachments = []store.AttachmentView{}
		if p.Replies != nil {
			p.Replies = []store.MessageView{}
		}
		out[i] = p
	}
	return out
}

func teaserEvents(in []store.EventView) []store.EventView {
	out := make([]store.EventView, len(in))
	for i, e := range in {
		e.Description = access.Teaser(e.Description)
		e.Media = []store.MediaView{}
		e.Banner = nil
		out[i] = e
	}
	return out
}

func teaserItems(in []store.ItemView) []store.ItemView {
	out := make([]store.ItemView, len(in))
	for i, it := range in {
		it.Description = access.Teaser(it.Description)
		it.Media = []store.MediaView{}
		out[i] = it
	}
	return out
}

// LandingData is the Data of the landing page: for a viewer the gate holds
// back, the plans that open it (SPEC.md section 8: 'No subscription plans
// available at the moment.' when there are none).
type LandingData struct {
	Gated       bool             `json:"gated"`
	Plans       []store.ItemView `json:"plans"`
	Description string           `json:"description"`
	Previews    bool             `json:"previews"`
	// PlansError: the plans could not be loaded; the rest of the page is
	// still shown (SPEC.md section 8: 'Error loading subscription options').
	PlansError string `json:"plansError,omitempty"`
}

func (s *Server) landingProps(c echo.Context, sc *Scope) (PageProps, error) {
	props := s.pageProps(c, sc)
	props.App = s.pageAppOf(c, landingFor(sc), true)
	data := LandingData{Gated: sc.Gated, Plans: []store.ItemView{}, Previews: sc.Content != access.ContentNone,
		Description: sc.App.Settings.Features.SubscriptionGating.Settings.Description}
	if sc.Gated {
		plans, err := s.store.SubscriptionItems(c.Request().Context(), sc.App.ID)
		if err != nil {
			// The gate's screen still shows, with why the plans are missing.
			s.logger.Error("load plans", "app", sc.App.ID, "err", err)
			data.PlansError = "the plans could not be loaded. Please try again."
			props.Status = http.StatusServiceUnavailable // not kept by the page cache
		} else {
			data.Plans = plans
		}
	}
	props.Data = data
	return props, nil
}

// GET /apps/:app. The page cache (pagecache.go) keeps it whole for visitors
// and once per role for members.
func (s *Server) pageLanding(c echo.Context) error {
	sc := scopeFromPage(c) // loaded already when the page cache keyed a member's page
	var err error
	if sc == nil {
		sc, err = s.pageScope(c, c.Param("app"))
	}
	var appErr *Error
	if errors.As(err, &appErr) && appErr.Status == http.StatusNotFound {
		return err
	}
	if err != nil {
		// The landing page has its own error state with Retry.
		s.logger.Error("landing load failed", "app", c.Param("app"), "err", err)
		props := s.pageProps(c, nil)
		props.Error, props.Status = "Failed to load landing page", http.StatusServiceUnavailable
		props.Data = map[string]string{"appName": c.Param("app")}
		return s.renderPage(c, "Landing", props)
	}
	props, err := s.landingProps(c, sc)
	if err != nil {
		return err
	}
	return s.renderPage(c, "Landing", props)
}

// GET /healthz answers 200 while the process serves, whatever its
// dependencies (GET /readyz says whether they answer), and 503 from the
// moment a shutdown begins, so a load balancer stops sending new
// connections while the server still serves them (Run's drain delay).
func (s *Server) healthz(c echo.Context) error {
	if s.draining.Load() {
		c.Response().Header().Set("Connection", "close")
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": "shutting down"})
	}
	// Liveness, not readiness: the process answers. A database outage is
	// /readyz's to report; a liveness check that failed with PostgreSQL
	// had every instance restarted (or taken out) together, and took the
	// visitors' cached pages, which are served while it is down, with it.
	return c.JSON(http.StatusOK, map[string]any{"status": "ok"})
}

// gateTeasers: behind the app-wide gate, a post for members (any tier, the
// gate's own default) shows its first words as before (teaserPosts); one
// for a tier shows only its creator's teaser (store.LockViews).
func gateTeasers(views []store.MessageView, r store.Reader) []store.MessageView {
	out := make([]store.MessageView, 0, len(views))
	for _, v := range views {
		if v.Access.MinTierID == nil {
			out = append(out, teaserPosts([]store.MessageView{v})...)
			continue
		}
		out = append(out, teaserPosts([]store.MessageView{store.LockView(v, r)})...)
	}
	return out
}
