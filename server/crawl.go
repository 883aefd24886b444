package server

import (
	"encoding/xml"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// Crawlers and sharing: robots.txt, a sitemap index, one sitemap per app
// and an Atom feed of each app's posts. They list only what a visitor (not
// signed in) may open, whoever asks: a crawler is a visitor, and a member's
// copy must not leak what the gate keeps from visitors.

// GET /robots.txt: everything a visitor may open is crawlable; the JSON
// API, personal pages and the forms' targets are not.
func (s *Server) robots(c echo.Context) error {
	if d := customHost(c.Request()); d != nil {
		return s.domainRobots(c, d)
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, p := range []string{"/api/", "/media-upload/", "/apps/*/cart", "/apps/*/checkout", "/apps/*/orders",
		"/apps/*/profile", "/apps/*/notifications", "/apps/*/transactions", "/apps/*/search", "/apps/*/manage/",
		"/apps/*/create-", "/apps/*/payment-success", "/apps/*/cancel_order", "/apps/*/donations"} {
		b.WriteString("Disallow: " + p + "\n")
	}
	b.WriteString("Allow: /\n\nSitemap: " + s.cfg.PublicURL + "/sitemap.xml\n")
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(b.String()))
}

// robots.txt of a custom domain: its app's pages live at the root, and its
// sitemap is the app's.
func (s *Server) domainRobots(c echo.Context, d *store.DomainRoute) error {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, p := range []string{"/api/", "/media-upload/", "/cart", "/checkout", "/orders", "/profile", "/notifications",
		"/transactions", "/search", "/manage/", "/create-", "/payment-success", "/cancel_order", "/donations", "/studio"} {
		b.WriteString("Disallow: " + p + "\n")
	}
	b.WriteString("Allow: /\n\nSitemap: " + s.domainOrigin(d.Domain) + "/sitemap.xml\n")
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(b.String()))
}

type sitemapIndex struct {
	XMLName  xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
	Sitemaps []sitemapURL `xml:"sitemap"`
}

type urlSet struct {
	XMLName xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []sitemapURL `xml:"url"`
}

type sitemapURL struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod,omitempty"`
}

func lastmod(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func writeXML(c echo.Context, contentType string, v any) error {
	out, err := xml.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=600")
	return c.Blob(http.StatusOK, contentType, append([]byte(xml.Header), out...))
}

// GET /sitemap.xml: the index of the apps' sitemaps.
func (s *Server) sitemapIndex(c echo.Context) error {
	apps, err := s.store.SitemapApps(c.Request().Context())
	if err != nil {
		return err
	}
	idx := sitemapIndex{Sitemaps: []sitemapURL{}}
	domains := s.domains.get(c.Request().Context()).byName
	for _, a := range apps {
		if domains[a.Name] != "" {
			continue // its sitemap is on its own domain (its robots.txt names it)
		}
		idx.Sitemaps = append(idx.Sitemaps, sitemapURL{Loc: s.cfg.PublicURL + "/apps/" + a.Name + "/sitemap.xml", LastMod: lastmod(a.UpdatedAt)})
	}
	return writeXML(c, "application/xml; charset=utf-8", idx)
}

// visitorSees reports which parts of an app a visitor may open: a gated
// app shows visitors its landing page only.
type visitorParts struct{ community, store, events bool }

func visitorSees(app *store.AppView) visitorParts {
	if access.Gated(app.Settings, store.RolePublic, false) {
		return visitorParts{}
	}
	f := app.Settings.Features
	return visitorParts{
		community: f.Community.Enabled && app.Community != nil,
		store:     f.Store.Enabled && app.Store != nil,
		events:    f.Events.Enabled,
	}
}

// GET /apps/:app/sitemap.xml: the landing page, then the community and its
// posts, the store's items and the events, each with when it last changed.
func (s *Server) appSitemap(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := requirePublished(sc); err != nil {
		return err
	}
	ctx := c.Request().Context()
	base := s.appBaseURL(ctx, sc.App.ID, sc.App.Name)
	appChanged, err := s.store.AppUpdatedAt(ctx, sc.App.ID)
	if err != nil {
		return err
	}
	// The landing page shows recent posts, events and items: it changes
	// when the app or any of them does.
	set := urlSet{URLs: []sitemapURL{{Loc: s.appLink(ctx, sc.App.ID, sc.App.Name, "")}}}
	landing := appChanged
	add := func(path string, pages []store.SitemapPage) {
		for _, p := range pages {
			set.URLs = append(set.URLs, sitemapURL{Loc: base + path + p.ID, LastMod: lastmod(p.UpdatedAt)})
			if p.UpdatedAt.After(landing) {
				landing = p.UpdatedAt
			}
		}
	}
	parts := visitorSees(sc.App)
	if parts.community {
		posts, err := s.store.PublicPosts(ctx, sc.App.ID, store.SitemapLimit)
		if err != nil {
			return err
		}
		newest := sitemapURL{Loc: base + "/community"}
		if len(posts) > 0 {
			newest.LastMod = lastmod(posts[0].UpdatedAt)
		}
		set.URLs = append(set.URLs, newest)
		add("/posts/", posts)
	}
	if parts.store {
		// The store's list asks a visitor to sign in; its items' pages are
		// open to everyone.
		items, err := s.store.SitemapItems(ctx, sc.App.ID)
		if err != nil {
			return err
		}
		add("/store/items/", items)
	}
	if parts.events {
		events, err := s.store.SitemapEvents(ctx, sc.App.ID)
		if err != nil {
			return err
		}
		set.URLs = append(set.URLs, sitemapURL{Loc: base + "/events"})
		add("/events/", events)
	}
	set.URLs[0].LastMod = lastmod(landing)
	return writeXML(c, "application/xml; charset=utf-8", set)
}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Links   []atomLink  `xml:"link"`
	Author  atomAuthor  `xml:"author"`
	Entries []atomEntry `xml:"entry"`
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
}

type atomAuthor struct {
	Name string `xml:"name"`
}

type atomEntry struct {
	Title     string      `xml:"title"`
	ID        string      `xml:"id"`
	Link      atomLink    `xml:"link"`
	Published string      `xml:"published"`
	Updated   string      `xml:"updated"`
	Content   atomContent `xml:"content"`
}

type atomContent struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

// atomFeedSize bounds the Atom feed: readers poll it, and the newest posts are
// what they show.
const atomFeedSize = 50

// feedTitle is a post's title in a feed: its first line, cut at 80
// characters on a rune boundary.
func feedTitle(content string) string {
	line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(content), "\n", 2)[0])
	if line == "" {
		return "Post"
	}
	if utf8.RuneCountInString(line) > 80 {
		r := []rune(line)
		return strings.TrimSpace(string(r[:80])) + "..."
	}
	return line
}

// GET /apps/:app/feed.xml: an Atom feed of the app's newest posts, for
// readers and sharing. An app whose community a visitor cannot open has no
// feed (404).
func (s *Server) appFeed(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := requirePublished(sc); err != nil {
		return err
	}
	if !visitorSees(sc.App).community {
		return notFound("This app has no public feed")
	}
	posts, err := s.store.PublicPosts(c.Request().Context(), sc.App.ID, atomFeedSize)
	if err != nil {
		return err
	}
	base := s.appBaseURL(c.Request().Context(), sc.App.ID, sc.App.Name)
	name := sc.App.Settings.Basic.Title(sc.App.Name)
	updated, err := s.store.AppUpdatedAt(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	feed := atomFeed{Title: name, ID: base + "/feed.xml", Updated: lastmod(updated), Author: atomAuthor{Name: name},
		Links:   []atomLink{{Href: base + "/community", Rel: "alternate", Type: "text/html"}, {Href: base + "/feed.xml", Rel: "self", Type: "application/atom+xml"}},
		Entries: []atomEntry{}}
	for i, p := range posts {
		if i == 0 && p.UpdatedAt.After(updated) {
			feed.Updated = lastmod(p.UpdatedAt)
		}
		url := base + "/posts/" + p.ID
		feed.Entries = append(feed.Entries, atomEntry{Title: feedTitle(p.Content), ID: url, Link: atomLink{Href: url, Rel: "alternate"},
			Published: lastmod(p.CreatedAt), Updated: lastmod(p.UpdatedAt), Content: atomContent{Type: "text", Body: p.Content}})
	}
	return writeXML(c, "application/atom+xml; charset=utf-8", feed)
}
