package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/render"
	"marquee/store"
)

// A page whose only change with the clock is its relative times is renewed
// by rewriting them, not by a render: the bytes are those a render at that
// time gives (compared byte for byte with one), the feed's island is given
// the same now, and the render counter does not move. Something else
// changing with the clock before then (a story's day ending) has the page
// rendered, as does the data's age bound (PageTTLMax after the render).
func TestClockRenewsRelativeTimesByRewriting(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	ctx := context.Background()
	db := ts.store.DB()
	appID := demoAppID(t, ts)
	t0 := time.Now().UTC()
	clock := t0
	ts.now = func() time.Time { return clock }

	// Posts just now, minutes, hours, days and months old; the events a
	// month away.
	var ids []string
	if err := db.NewSelect().Table("messages").Column("id").Where("app_id = ? AND type = ? AND parent_message_id IS NULL AND hidden = ''", appID, store.MessagePost).
		OrderExpr("id").Scan(ctx, &ids); err != nil || len(ids) < 5 {
		t.Fatalf("the demo's posts: %v %v", ids, err)
	}
	for i, age := range []time.Duration{30 * time.Second, 5*time.Minute + 10*time.Second, 3 * time.Hour, 50 * time.Hour, 40 * 24 * time.Hour} {
		if _, err := db.NewUpdate().Table("messages").Set("created_at = ?", t0.Add(-age)).Where("id = ?", ids[i]).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.NewUpdate().Table("messages").Set("created_at = ?", t0.AddDate(0, -3, 0)).Where("app_id = ? AND id NOT IN (?)", appID, bun.List(ids[:5])).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	setEvents := func(start time.Time) {
		t.Helper()
		if _, err := db.NewUpdate().Table("events").Set("start_date = ?, end_date = ?", start, start.Add(time.Hour)).Where("app_id = ?", appID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		ts.store.InvalidateLanding(ctx, appID)
		ts.store.InvalidateApp(ctx, appID)
	}
	setEvents(t0.AddDate(0, 1, 0))

	renders := func() float64 { return scrape(t, ts, "marquee_render_duration_seconds_count") }
	restamps := func() float64 { return scrape(t, ts, "marquee_page_restamps_total") }
	// expire has the cached page of path reach its expiry (as the clock
	// would have it at clock).
	expire := func(path string) {
		t.Helper()
		// A refresh slot rests after a refresh (refreshRest): the next
		// expired page would be served stale meanwhile.
		eventually(t, "a free refresh slot", func() bool { return len(ts.pages.refreshing) < cap(ts.pages.refreshing) })
		p := ts.cachedEntry(t, path)
		np := cachedPageOf(p.status, p.header, p.etag, p.identityLen, p.gz, p.brotliIfMade())
		np.engagement, np.rendered, np.clock = p.engagement, p.rendered, p.clock
		np.expires = time.Now().Add(-time.Millisecond)
		ts.pages.mu.Lock()
		for key, el := range ts.pages.entries.slots {
			if el.Value.(*pageSlot).page == p {
				ts.pages.mu.Unlock()
				ts.pages.put(key, np)
				return
			}
		}
		ts.pages.mu.Unlock()
		t.Fatalf("%s: no entry", path)
	}
	// fresh is path rendered now, the cache emptied first.
	fresh := func(path string) string {
		t.Helper()
		ts.pages.purge()
		return ts.visit(t, path, "miss")
	}

	monthsAgo, _ := render.RelativeTime(t0.Add(-40*24*time.Hour), t0)
	lists := [2][]string{{">just now</time>", ">5m ago</time>", ">3h ago</time>", ">2d ago</time>", ">" + monthsAgo + "</time>"}, {">7m ago</time>", ">12m ago</time>", ">3h ago</time>"}}
	for _, page := range []struct {
		path string
		want [2][]string // at t0, 7 minutes later
	}{
		{"/apps/demo/community", lists},
		{"/apps/demo", lists},
		{"/apps/demo/posts/" + ids[1], [2][]string{{">5m ago</time>"}, {">12m ago</time>"}}},
	} {
		path := page.path
		clock = t0
		first := ts.visit(t, path, "")
		for _, want := range page.want[0] {
			if !strings.Contains(first, want) {
				t.Fatalf("%s at t0 lacks %q", path, want)
			}
		}
		clock = t0.Add(7 * time.Minute)
		expire(path)
		before, beforeRestamps := renders(), restamps()
		rewritten := ts.visit(t, path, "refresh")
		if got := restamps() - beforeRestamps; got != 1 {
			t.Errorf("%s: %v rewrites, want 1", path, got)
		}
		if got := renders() - before; got != 0 {
			t.Errorf("%s: %v renders to renew its relative times, want 0", path, got)
		}
		for _, want := range page.want[1] {
			if !strings.Contains(rewritten, want) {
				t.Errorf("%s rewritten lacks %q", path, want)
			}
		}
		// Its brotli bytes are made at the first request that takes
		// them, not with the rewrite, and are then kept and shared.
		if ts.cachedEntry(t, path).brotliIfMade() != nil {
			t.Errorf("%s: brotli made with the rewrite, before any request took it", path)
		}
		for range 2 {
			br := ts.do(t, "GET", path, nil, map[string]string{"Accept-Encoding": "gzip, br"})
			if br.Header.Get("Content-Encoding") != "br" || br.Header.Get("Etag") == "" || unbrotli(t, br.Body) != rewritten {
				t.Fatalf("%s rewritten, asked in brotli: encoding %q, etag %q, same page %v", path,
					br.Header.Get("Content-Encoding"), br.Header.Get("Etag"), unbrotli(t, br.Body) == rewritten)
			}
		}
		if p := ts.cachedEntry(t, path); p.brotliIfMade() == nil || len(sharedOf(p).Brotli) == 0 {
			t.Errorf("%s: brotli made for a request is not kept", path)
		} else if held := len(p.gz) + len(p.brotliIfMade()); p.size < held {
			t.Errorf("%s: counted as %d bytes in the cache, holds %d", path, p.size, held)
		}
		if rendered := fresh(path); rewritten != rendered {
			t.Errorf("%s rewritten for 7 minutes later differs from its render then:\n%s", path, firstDifference(rewritten, rendered))
		}
		p := ts.cachedEntry(t, path)
		if p.clock == nil || !p.clock.until.Equal(p.rendered.Add(PageTTLMax)) {
			t.Errorf("%s: rewritable until %+v, want PageTTLMax after its render", path, p.clock)
		}
	}
	if strings.Count(ts.visit(t, "/apps/demo/community", ""), "&quot;now&quot;:&quot;"+render.PropsTime(clock)+"&quot;") == 0 {
		t.Error("the feed's island is not given the page's now")
	}

	// A story whose day ends before the later time: the community is
	// rendered (its strip loses the story).
	var story string
	if err := db.NewSelect().Table("messages").Column("id").Where("app_id = ? AND type = ? AND hidden = ''", appID, store.MessageStory).
		OrderExpr("id").Limit(1).Scan(ctx, &story); err != nil {
		t.Fatalf("a story of the demo: %v", err)
	}
	if _, err := db.NewUpdate().Table("messages").Set("created_at = ?", t0.Add(3*time.Minute-store.StoryLifetime)).Where("id = ?", story).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ts.store.InvalidateApp(ctx, appID)
	clock = t0
	ts.visit(t, "/apps/demo/community", "miss")
	clock = t0.Add(7 * time.Minute)
	expire("/apps/demo/community")
	before, beforeRestamps := renders(), restamps()
	renewed := ts.visit(t, "/apps/demo/community", "refresh")
	if restamps() != beforeRestamps || renders()-before != 1 {
		t.Errorf("a story ended: %v rewrites, %v renders; want 0 and 1", restamps()-beforeRestamps, renders()-before)
	}
	if !strings.Contains(renewed, ">7m ago</time>") {
		t.Error("the community rendered after the story ended lacks the post's new relative time")
	}

	// Past the data's age bound: rendered.
	if _, err := db.NewUpdate().Table("messages").Set("created_at = ?", t0.AddDate(0, -3, 0)).Where("id = ?", story).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ts.store.InvalidateApp(ctx, appID)
	clock = t0
	ts.visit(t, "/apps/demo/community", "miss")
	clock = t0.Add(PageTTLMax + time.Minute)
	expire("/apps/demo/community")
	before, beforeRestamps = renders(), restamps()
	ts.visit(t, "/apps/demo/community", "refresh")
	if restamps() != beforeRestamps || renders()-before != 1 {
		t.Errorf("past PageTTLMax: %v rewrites, %v renders; want 0 and 1", restamps()-beforeRestamps, renders()-before)
	}
}

// firstDifference shows where a and b part.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-120)
	return "rewritten: ..." + a[from:min(len(a), i+120)] + "\nrendered:  ..." + b[from:min(len(b), i+120)]
}
