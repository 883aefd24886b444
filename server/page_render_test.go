package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/store"
)

// A creator's post is in the visitor pages before anyone asks for them
// (RENDER_AHEAD): the write enqueues a render_pages job in its own
// transaction, the durable queue works it, and the first visitor of the
// app's landing and community page reads them from the page cache's
// second tier with the post in them, rendering nothing. Likes enqueue
// nothing (their counts are the readers' to renew), nor does any write
// with RENDER_AHEAD off, and the job renders nothing the cache holds at
// the app's version.
func TestPagesRenderedAheadOfVisitors(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		ts := newTestServerStore(t, db, func(c *Config) { c.RenderAhead, c.PageCacheDiskMB, c.PageCacheDir = true, 8, t.TempDir() },
			func(o *store.Options) { o.RenderAhead = true })
		ids := commLoad(t, ts)
		demo, err := ts.store.AppByIDOrName(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		creator, follower := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "follower@demo.test")
		renderJobs := func() int {
			t.Helper()
			n, err := db.NewSelect().Model((*store.JobOutbox)(nil)).Where("kind = ?", store.JobRenderPages).
				Where("args = ?", fmt.Sprintf(`{"app_id":%q}`, demo.ID)).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}

		// Rendered once by a visitor before the post: the job has a new
		// version to render.
		ts.visit(t, "/apps/demo/community", "miss")
		r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Rendered ahead 4417", "type": "POST", "communityId": ids.demoCommunity}), creator)
		var created struct{ Data store.MessageView }
		commJSON(t, r, &created)
		if n := renderJobs(); n != 1 {
			t.Fatalf("render_pages jobs after a post: %d, want 1", n)
		}
		if r := ts.do(t, "POST", "/api/messages/"+created.Data.ID+"/reactions", body(map[string]any{"reaction": "❤️"}), follower); r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("like: %d %s", r.Status, r.Body)
		}
		if n := renderJobs(); n != 1 {
			t.Fatalf("render_pages jobs after a like: %d, want still 1", n)
		}
		// Not before the job: the post is not in any page the cache holds.
		if p := ts.pages.get(visitorKey(t, ts, demo.ID, "/apps/demo/community"), time.Now()); p != nil {
			t.Fatal("a page of the new version was cached before the job ran")
		}

		startJobQueue(t, db, jobs.Deps{Store: ts.store, Logger: ts.logger, Pages: ts.Server})
		waitFor(t, func() bool { // the render_pages job completed
			var states []string
			err := db.NewSelect().Table("river_job").Column("state").Where("kind = ?", store.JobRenderPages).Scan(ctx, &states)
			return err == nil && len(states) == 1 && states[0] == "completed"
		})

		// In the second tier, not in memory: nobody has read it yet.
		key := visitorKey(t, ts, demo.ID, "/apps/demo/community")
		if ts.pages.get(key, time.Now()) != nil {
			t.Error("the rendered page went to memory, not the second tier")
		}
		if ts.pages.disk.load(key) == nil {
			t.Fatal("the community page is not in the second tier")
		}
		page := ts.visit(t, "/apps/demo/community", "hit")
		if !strings.Contains(page, "Rendered ahead 4417") {
			t.Error("the community page rendered ahead lacks the post")
		}
		ts.visit(t, "/apps/demo", "hit")

		// The job again: the cache holds both pages at this version, so
		// nothing is rendered (the disk keeps its files untouched).
		before := ts.pages.disk.size()
		files := len(ts.pages.disk.files)
		if err := ts.RenderAppPages(ctx, demo.ID); err != nil {
			t.Fatal(err)
		}
		if ts.pages.disk.size() != before || len(ts.pages.disk.files) != files {
			t.Errorf("a second run rendered again: %d files (%d bytes), were %d (%d)", len(ts.pages.disk.files), ts.pages.disk.size(), files, before)
		}

		// RENDER_AHEAD off (the zero Config): a post enqueues nothing.
		renderJobsEver := func() int {
			t.Helper()
			queued, err := db.NewSelect().Model((*store.JobOutbox)(nil)).Where("kind = ?", store.JobRenderPages).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			taken, err := db.NewSelect().Table("river_job").Where("kind = ?", store.JobRenderPages).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(queued + taken)
		}
		off := newTestServer(t, db)
		r = off.do(t, "POST", "/api/messages", body(map[string]any{"content": "Not ahead 4418", "type": "POST", "communityId": ids.demoCommunity}), creator)
		commJSON(t, r, &created)
		if n := renderJobsEver(); n != 1 {
			t.Errorf("render_pages jobs after a post with RENDER_AHEAD off: %d, want still 1", n)
		}
		// And a job enqueued before it was turned off renders nothing.
		if err := off.RenderAppPages(ctx, demo.ID); err != nil {
			t.Fatal(err)
		}
		if got := off.pages.get(visitorKey(t, off, demo.ID, "/apps/demo/community"), time.Now()); got != nil {
			t.Error("RENDER_AHEAD off rendered a page ahead")
		}

		// An app on its own domain: its main-site pages redirect there, so
		// none is rendered ahead.
		ts.addVerifiedDomain(t, "acme", "acme-fans.example.test")
		// (The queue may be working the job the domain's write enqueued.)
		before = ts.pages.disk.size()
		if err := ts.RenderAppPages(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if got := ts.pages.disk.size(); got != before {
			t.Errorf("an app on its own domain had pages rendered ahead for the main site: %d bytes more on disk", got-before)
		}
	})
}

// visitorKey is the page cache key of a visitor's page at the app's
// current version.
func visitorKey(t *testing.T, ts *testServer, appID, path string) string {
	t.Helper()
	v, err := ts.pageVersion(context.Background(), appID, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(appendPageKey(nil, appID, v.content, ts.build, path, "", "visitor"))
}
