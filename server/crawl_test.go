package server

import (
	"context"
	"encoding/xml"
	"strings"
	"testing"

	"marquee/store"
)

// Crawlers and sharing (issue 27, item 7): robots.txt, the sitemap index,
// each app's sitemap (landing, community, posts, items, events, with
// lastmod) and Atom feed list exactly what a visitor may open, whoever asks;
// page 2 and later of a list have their own canonical URL and title.
func TestSitemapsAndFeeds(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo := appID(t, ts, "demo")
	var posts []store.Message
	if err := ts.store.DB().NewSelect().Model(&posts).Where("app_id = ? AND type = 'POST' AND parent_message_id IS NULL", demo).
		Order("created_at DESC", "id DESC").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var items, events int
	if n, err := ts.store.DB().NewSelect().Model((*store.StoreItem)(nil)).Where("app_id = ? AND deleted_at IS NULL AND type <> ?", demo, store.ItemSubscription).Count(ctx); err == nil {
		items = int(n)
	}
	if n, err := ts.store.DB().NewSelect().Model((*store.Event)(nil)).Where("app_id = ?", demo).Count(ctx); err == nil {
		events = int(n)
	}
	if len(posts) == 0 || items == 0 || events == 0 {
		t.Fatalf("demo has %d posts, %d items, %d events", len(posts), items, events)
	}

	ts.run(t, []scenario{
		{name: "robots", path: "/robots.txt", status: 200,
			contains: []string{"User-agent: *", "Disallow: /api/", "Disallow: /apps/*/checkout", "Sitemap: " + ts.cfg.PublicURL + "/sitemap.xml"}},
		{name: "index", path: "/sitemap.xml", status: 200,
			contains: []string{"<sitemapindex", "<loc>" + ts.cfg.PublicURL + "/apps/demo/sitemap.xml</loc>", "<lastmod>"}},
	})

	sitemap := func(as string) []sitemapURL {
		t.Helper()
		var h map[string]string
		if as != "" {
			h = commUser(t, ts, as)
		}
		r := ts.do(t, "GET", "/apps/demo/sitemap.xml", nil, h)
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/xml") {
			t.Fatalf("sitemap: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		var set urlSet
		if err := xml.Unmarshal([]byte(r.Body), &set); err != nil {
			t.Fatalf("sitemap XML: %v", err)
		}
		return set.URLs
	}
	base := ts.cfg.PublicURL + "/apps/demo"
	urls := sitemap("")
	count := map[string]int{}
	seen := map[string]bool{}
	for _, u := range urls {
		seen[u.Loc] = true
		switch {
		case strings.HasPrefix(u.Loc, base+"/posts/"):
			count["posts"]++
		case strings.HasPrefix(u.Loc, base+"/store/items/"):
			count["items"]++
		case strings.HasPrefix(u.Loc, base+"/events/"):
			count["events"]++
		}
		if u.LastMod == "" && u.Loc != base+"/events" {
			t.Errorf("%s has no lastmod", u.Loc)
		}
	}
	for _, want := range []string{base, base + "/community", base + "/events", base + "/posts/" + posts[0].ID} {
		if !seen[want] {
			t.Errorf("sitemap lacks %s", want)
		}
	}
	if count["posts"] != len(posts) || count["items"] != items || count["events"] != events {
		t.Fatalf("sitemap counts %v, want %d posts, %d items, %d events", count, len(posts), items, events)
	}
	// A member gets the visitor's sitemap, not their own view.
	if got := sitemap("creator@demo.test"); len(got) != len(urls) {
		t.Fatalf("creator's sitemap has %d URLs, a visitor's %d", len(got), len(urls))
	}

	// The Atom feed: the newest posts first, each linking its page.
	r := ts.do(t, "GET", "/apps/demo/feed.xml", nil, nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/atom+xml") {
		t.Fatalf("feed: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	var feed struct {
		Title   string `xml:"title"`
		Entries []struct {
			ID      string `xml:"id"`
			Title   string `xml:"title"`
			Content string `xml:"content"`
		} `xml:"entry"`
	}
	if err := xml.Unmarshal([]byte(r.Body), &feed); err != nil {
		t.Fatalf("feed XML: %v", err)
	}
	want := min(len(posts), atomFeedSize)
	if len(feed.Entries) != want || feed.Entries[0].ID != base+"/posts/"+posts[0].ID || feed.Entries[0].Content != posts[0].Content {
		t.Fatalf("feed has %d entries (want %d), first %+v", len(feed.Entries), want, feed.Entries[0])
	}

	// Lists: page 2 is its own page; page 1 keeps the plain canonical URL.
	ts.run(t, []scenario{
		{name: "events page 1", path: "/apps/demo/events?limit=3", status: 200,
			contains: []string{"<title>Events · Demo Studio</title>", `<link rel="canonical" href="` + base + `/events"/>`}},
		{name: "events page 2", path: "/apps/demo/events?limit=3&page=2", status: 200,
			contains: []string{"<title>Events · Page 2 · Demo Studio</title>", `<link rel="canonical" href="` + base + `/events?page=2"/>`}},
		{name: "community page 2", path: "/apps/demo/community?limit=2&page=2", status: 200,
			contains: []string{"Page 2 · Demo Studio</title>", `href="` + base + `/community?page=2"`,
				`<link rel="alternate" type="application/atom+xml"`, base + "/feed.xml"}},
		{name: "store page 2", path: "/apps/demo/store?limit=5&page=2", as: "follower@demo.test", status: 200,
			contains: []string{"<title>Store · Page 2 · Demo Studio</title>", `href="` + base + `/store?page=2"`}},
	})

	// A gated app shows visitors its landing page only: so do its sitemap
	// and feed.
	if err := ts.store.SetAppField(ctx, "demo", "features.subscriptionGating.settings.required", "true"); err != nil {
		t.Fatal(err)
	}
	if got := sitemap("creator@demo.test"); len(got) != 1 || got[0].Loc != base || got[0].LastMod == "" {
		t.Fatalf("gated sitemap: %+v", got)
	}
	ts.run(t, []scenario{
		{name: "gated feed", path: "/apps/demo/feed.xml", as: "creator@demo.test", status: 404},
		{name: "unknown app", path: "/apps/nope/sitemap.xml", status: 404},
	})
}
