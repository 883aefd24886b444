package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/store"
)

// linkIconPlaceholder is shown until a domain's icon is fetched, and for a
// site without one: a plain link glyph, from our origin too.
const linkIconPlaceholder = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="32" height="32">` +
	`<path fill="none" stroke="#6b7280" stroke-width="2" stroke-linecap="round" d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"/></svg>`

// linkDomain is the host of a link's URL, lower-cased, or "".
func linkDomain(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// GET /apps/:app/link-icons/:domain serves the favicon of a domain the app's
// link-in-bio links to, fetched once by the server (jobs.FetchLinkIcon) and
// cached in the database. Only the app's own link domains are served, so
// this is no open fetcher. The first request enqueues the fetch and, like
// a site without an icon, gets the placeholder, briefly cached.
func (s *Server) linkIcon(c echo.Context) error {
	sc := scopeFromPage(c)
	domain := strings.ToLower(c.Param("domain"))
	listed := false
	for _, l := range sc.App.Settings.Features.Links.Settings.Links {
		if l.Enabled && linkDomain(l.URL) == domain && domain != "" {
			listed = true
		}
	}
	if !listed {
		return notFound("Not found")
	}
	ctx := c.Request().Context()
	ic, err := s.store.LinkIcon(ctx, domain)
	if isNotFound(err) {
		err = s.store.ClaimLinkIcon(ctx, domain, func(ctx context.Context, tx bun.Tx) error {
			return jobs.Enqueue(ctx, tx, jobs.FetchLinkIconArgs{Domain: domain})
		})
		ic = &store.LinkIcon{Status: store.LinkIconPending}
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if ic.Status != store.LinkIconOK {
		// Pending: ask again soon; missing: a day.
		age := "300"
		if ic.Status == store.LinkIconMissing {
			age = "86400"
		}
		h.Set("Cache-Control", "public, max-age="+age)
		return c.Blob(http.StatusOK, "image/svg+xml", []byte(linkIconPlaceholder))
	}
	h.Set("Cache-Control", "public, max-age=604800")
	return c.Blob(http.StatusOK, ic.ContentType, ic.Body)
}
