package server

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
)

type feedPage struct {
	Success bool
	Data    struct {
		Posts      []store.MessageView
		Pagination store.Pagination
	}
}

// TestFeedCursor: "load more" by cursor never repeats a post after a new
// one is added, nor skips one after one is deleted, where page numbers do
// both; the server-rendered Load More link carries the cursor too.
func TestFeedCursor(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)
		ids := commLoad(t, ts)
		subscriber := commUser(t, ts, "subscriber@demo.test")
		creator := commUser(t, ts, "creator@demo.test")
		feed := "/api/community/" + ids.demoCommunity + "/posts?limit=10&type=POST"
		load := func(query string) feedPage {
			t.Helper()
			var p feedPage
			r := ts.do(t, "GET", feed+query, nil, nil)
			commJSON(t, r, &p)
			if r.Status != 200 || !p.Success {
				t.Fatalf("GET %s: %d %s", query, r.Status, r.Body)
			}
			return p
		}
		idsOf := func(p feedPage) []string {
			var out []string
			for _, m := range p.Data.Posts {
				out = append(out, m.ID)
			}
			return out
		}

		// Walking the whole feed by cursor gives every post once, in order.
		var all []string
		p := load("&page=1")
		if p.Data.Pagination.Total != 30 || p.Data.Pagination.TotalPages != 3 || !p.Data.Pagination.HasNext || p.Data.Pagination.NextCursor == "" {
			t.Fatalf("page 1: %+v", p.Data.Pagination)
		}
		for page := 2; ; page++ {
			all = append(all, idsOf(p)...)
			if !p.Data.Pagination.HasNext {
				if p.Data.Pagination.NextCursor != "" {
					t.Fatal("last page carries a cursor")
				}
				break
			}
			p = load("&page=" + strconv.Itoa(page) + "&cursor=" + p.Data.Pagination.NextCursor)
			if p.Data.Pagination.Page != page || !p.Data.Pagination.HasPrev {
				t.Fatalf("page %d by cursor: %+v", page, p.Data.Pagination)
			}
		}
		if len(all) != 30 || len(uniqueStrings(all)) != 30 {
			t.Fatalf("walk by cursor: %d posts, %d distinct", len(all), len(uniqueStrings(all)))
		}

		// A post is added after page 1 was loaded.
		first := load("&page=1")
		r := ts.do(t, "POST", "/api/messages", body(map[string]any{"communityId": ids.demoCommunity, "content": "Fresh post"}), subscriber)
		commExpect(t, "new post", r, 201, "Fresh post")
		byCursor := load("&page=2&cursor=" + first.Data.Pagination.NextCursor)
		if dup := intersect(idsOf(first), idsOf(byCursor)); len(dup) > 0 {
			t.Fatalf("page 2 by cursor repeats %v", dup)
		}
		if got, want := idsOf(byCursor), all[10:20]; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("page 2 by cursor after an insert:\n got %v\nwant %v", got, want)
		}
		// Page numbers alone keep the viewer's place too (loadFeed
		// remembers where their page 1 ended; TestFeedPagesByNumberStayStable).
		if dup := intersect(idsOf(first), idsOf(load("&page=2"))); len(dup) != 0 {
			t.Fatalf("page=2 after an insert repeats %v", dup)
		}
		if total := byCursor.Data.Pagination.Total; total != 31 {
			t.Fatalf("total after an insert: %d, want 31 (cached count dropped)", total)
		}

		// A post shown on page 1 is deleted before the next load.
		first = load("&page=1")
		victim := first.Data.Posts[3].ID
		commExpect(t, "delete", ts.do(t, "DELETE", "/api/messages/"+victim, nil, creator), 200, "")
		byCursor = load("&page=2&cursor=" + first.Data.Pagination.NextCursor)
		if got := idsOf(byCursor); got[0] != all[9] {
			// all[9] was the 10th post before the insert; after it, the
			// 11th on the feed and the first of page 2.
			t.Fatalf("page 2 by cursor after a delete starts at %s, want %s", got[0], all[9])
		}
		if byPage := idsOf(load("&page=2")); byPage[0] != all[9] {
			t.Fatalf("page=2 after a delete skipped: starts at %s, want %s", byPage[0], all[9])
		}
		// Deleting the very post the cursor names still continues after it.
		last := first.Data.Posts[len(first.Data.Posts)-1].ID
		commExpect(t, "delete cursor post", ts.do(t, "DELETE", "/api/messages/"+last, nil, creator), 200, "")
		if got := idsOf(load("&cursor=" + first.Data.Pagination.NextCursor)); got[0] != all[9] {
			t.Fatalf("after deleting the cursor's post: starts at %s, want %s", got[0], all[9])
		}

		commExpect(t, "bad cursor", ts.do(t, "GET", feed+"&cursor=nope!", nil, nil), 400, "cursor is not valid")
		commExpect(t, "forged cursor", ts.do(t, "GET", feed+"&cursor=MTIzLnguLg", nil, nil), 400, "cursor is not valid")

		// Without JavaScript: the Load More link carries the cursor and
		// opens the next page, rendered by the server.
		page := ts.do(t, "GET", "/apps/demo/community", nil, nil)
		m := regexp.MustCompile(`href="(\?page=2&amp;cursor=[A-Za-z0-9_-]+)"`).FindStringSubmatch(page.Body)
		if m == nil {
			i := strings.Index(page.Body, "page=2")
			t.Fatalf("Load More link without a cursor: %d %s, near page=2: %q", page.Status, page.Header.Get("X-Page-Cache"), page.Body[max(0, i-200):min(len(page.Body), max(0, i)+200)])
		}
		next := ts.do(t, "GET", "/apps/demo/community"+html.UnescapeString(m[1]), nil, nil)
		var api feedPage
		commJSON(t, ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts"+html.UnescapeString(m[1]), nil, nil), &api)
		if next.Status != 200 || len(api.Data.Posts) == 0 || !strings.Contains(next.Body, "/posts/"+api.Data.Posts[0].ID) {
			t.Fatalf("page 2 without JavaScript: %d", next.Status)
		}
	})
}

func uniqueStrings(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func intersect(a, b []string) []string {
	in := uniqueStrings(a)
	var out []string
	for _, x := range b {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}
