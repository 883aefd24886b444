package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"marquee/scripts/seed"
	"marquee/store"
)

// TestQueriesPerRequest: every list costs the same number of database
// queries for 5 rows as for 50 (no query per row, N+1), on the calls and
// pages that list posts, items, events and comments.
func TestQueriesPerRequest(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()

	type appIDs struct{ app, community, shop, post, member string }
	apps := map[int]appIDs{}
	for _, n := range []int{5, 50} {
		name := fmt.Sprintf("rows%d", n)
		res, err := seed.BenchData(ctx, db, seed.BenchSizes{App: name, Posts: n, Items: n, Events: n, Users: 60})
		if err != nil {
			t.Fatal(err)
		}
		ids := appIDs{app: res.AppID}
		if err := db.NewSelect().Model((*store.Community)(nil)).Column("id").Where("app_id = ?", res.AppID).Scan(ctx, &ids.community); err != nil {
			t.Fatal(err)
		}
		if err := db.NewSelect().Model((*store.Shop)(nil)).Column("id").Where("app_id = ?", res.AppID).Scan(ctx, &ids.shop); err != nil {
			t.Fatal(err)
		}
		var post store.Message
		if err := db.NewSelect().Model(&post).Where("community_id = ? AND type = ?", ids.community, store.MessagePost).
			OrderExpr("created_at DESC").Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		ids.post = post.ID
		// The newest post gets n comments in all, each liked once.
		have, err := db.NewSelect().Model((*store.Message)(nil)).Where("parent_message_id = ?", post.ID).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var users []store.Membership
		if err := db.NewSelect().Model(&users).Where("app_id = ?", res.AppID).Order("user_id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for i := int(have); i < n; i++ {
			at := post.CreatedAt.Add(time.Duration(i+10) * time.Second)
			reply := &store.Message{ID: store.NewID(), AppID: res.AppID, CommunityID: ids.community, SenderID: users[i].UserID,
				Type: store.MessageReply, Content: "comment", ParentMessageID: &post.ID, CreatedAt: at, UpdatedAt: at}
			like := &store.Reaction{ID: store.NewID(), AppID: res.AppID, MessageID: reply.ID, SenderID: users[i+1].UserID, Reaction: "❤️", CreatedAt: at}
			for _, row := range []any{reply, like} {
				if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		u, err := ts.store.UserByEmail(ctx, "user2@"+name+".test")
		if err != nil {
			t.Fatal(err)
		}
		if ids.member, err = ts.store.CreateSession(ctx, u.ID, "test"); err != nil {
			t.Fatal(err)
		}
		apps[n] = ids
	}

	// The app's own data (settings, landing) is loaded once and cached:
	// warm it so each call below counts only its own queries.
	for n, a := range apps {
		ts.do(t, "GET", "/api/app/"+a.app+"/landing", nil, nil)
		ts.do(t, "GET", fmt.Sprintf("/apps/rows%d", n), nil, nil)
	}
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	db.AddQueryHook(store.QueryCountHook{})
	count := func(t *testing.T, target, session string) (int, []string) {
		t.Helper()
		qctx, qc := store.WithQueryCount(ctx)
		req := newRequest("GET", target, nil).WithContext(qctx)
		if session != "" {
			req.Header.Set("Cookie", sessionCookie+"="+session)
		}
		rec := httptest.NewRecorder()
		ts.Main().ServeHTTP(rec, req)
		checkContract(t, "GET", target, rec.Code, rec.Header(), rec.Body.Bytes())
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body.String())
		}
		// Page-version lookups belong to the page cache, which keeps
		// versions in memory for a while, and session lookups to the
		// session memo (a second): whether one is made depends on timing,
		// not on rows.
		var queries []string
		for _, q := range qc.Queries() {
			if !strings.Contains(q, `FROM "page_versions"`) && !strings.Contains(q, `JOIN sessions AS s ON`) {
				queries = append(queries, q)
			}
		}
		return len(queries), queries
	}
	for _, c := range []struct {
		name   string
		target func(a appIDs, name string) string
		member bool
	}{
		{"feed", func(a appIDs, _ string) string { return "/api/community/" + a.community + "/posts?limit=100" }, false},
		{"feed by cursor", func(a appIDs, _ string) string {
			return "/api/community/" + a.community + "/posts?limit=100&page=2&cursor=" + cursorAfterNewest(t, ts, a.community)
		}, false},
		{"store items", func(a appIDs, _ string) string { return "/api/store/" + a.shop + "/items?limit=100" }, true},
		{"store items filtered", func(a appIDs, _ string) string {
			return "/api/store/" + a.shop + "/items?limit=100&type=PHYSICAL&minPrice=1&inStock=true&search=e"
		}, true},
		{"events, member", func(a appIDs, _ string) string { return "/api/events/apps/" + a.app + "/events?limit=100" }, true},
		{"post", func(a appIDs, _ string) string {
			return "/api/messages/" + a.post + "?include=sender,attachments,reactions,tags,replies"
		}, false},
		{"post replies", func(a appIDs, _ string) string { return "/api/messages/" + a.post + "/replies?page=1&limit=50" }, false},
		{"landing", func(a appIDs, _ string) string {
			ts.store.InvalidateLanding(ctx, a.app) // count the build, not a cache hit
			return "/api/app/" + a.app + "/landing"
		}, false},
		{"post page", func(a appIDs, name string) string { return "/apps/" + name + "/posts/" + a.post }, false},
		{"community page", func(a appIDs, name string) string { return "/apps/" + name + "/community" }, false},
		{"store page", func(a appIDs, name string) string { return "/apps/" + name + "/store" }, true},
		{"events page", func(a appIDs, name string) string { return "/apps/" + name + "/events" }, false},
		{"landing page", func(a appIDs, name string) string {
			ts.store.InvalidateLanding(ctx, a.app)
			return "/apps/" + name
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [2]int
			var queries [2][]string
			for i, n := range []int{5, 50} {
				session := ""
				if c.member {
					session = apps[n].member
				}
				got[i], queries[i] = count(t, c.target(apps[n], fmt.Sprintf("rows%d", n)), session)
			}
			if got[0] != got[1] || got[0] == 0 {
				t.Errorf("%d queries for 5 rows, %d for 50:\n5:\n%s\n50:\n%s", got[0], got[1],
					strings.Join(queries[0], "\n"), strings.Join(queries[1], "\n"))
			}
			t.Logf("%s: %d queries", c.name, got[1])
		})
	}
}

// cursorAfterNewest is the cursor after a community's newest post.
func cursorAfterNewest(t *testing.T, ts *testServer, communityID string) string {
	t.Helper()
	p, err := ts.store.CommunityPosts(context.Background(), communityID, store.MessagePost, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p.Pagination.NextCursor
}

// TestQueriesPerLike: a like and an unlike are the writes a popular app
// sees most (sixty a second in scripts/bench), and each query is a round
// trip members wait behind and each write a commit: the post, the viewer's
// membership and ban in one, and (on PostgreSQL, this test's database) the
// reaction with the engagement version in one statement.
func TestQueriesPerLike(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	ids := commLoad(t, ts)
	follower := withSession(sessionFor(t, ts, "follower@demo.test"))
	// The seed's follower may like the post already: this like is a new one.
	followerID := ts.userID(t, "follower@demo.test")
	if _, err := db.NewDelete().Model((*store.Reaction)(nil)).Where("message_id = ? AND sender_id = ?", ids.demoPost, followerID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// Warm the app's cached data: only the write's own queries count.
	ts.do(t, "GET", "/apps/demo/community", nil, follower)
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	db.AddQueryHook(store.QueryCountHook{})
	write := func(method, target, body string) ([]string, string) {
		t.Helper()
		qctx, qc := store.WithQueryCount(ctx)
		req := newRequest(method, target, strings.NewReader(body)).WithContext(qctx)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range follower {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		ts.Main().ServeHTTP(rec, req)
		if rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body.String())
		}
		var queries []string
		for _, q := range qc.Queries() {
			// The session memo's lookup and the page versions' (known
			// in memory for a while) depend on timing, not on the write.
			if !strings.Contains(q, `JOIN sessions AS s ON`) && !strings.Contains(q, `"sessions"`) && !strings.Contains(q, `FROM "page_versions"`) {
				queries = append(queries, q)
			}
		}
		return queries, rec.Body.String()
	}
	liked, body := write("POST", "/api/messages/"+ids.demoPost+"/reactions", `{"reaction":"heart"}`)
	if len(liked) > 3 || !bumps(liked) || writes(liked) != 1 {
		t.Errorf("a like made %d queries (%d writing), want at most 3 and one write with the engagement bump:\n%s",
			len(liked), writes(liked), strings.Join(liked, "\n"))
	}
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || created.Data.ID == "" {
		t.Fatalf("like answered %s (%v)", body, err)
	}
	unliked, _ := write("DELETE", "/api/messages/"+ids.demoPost+"/reactions/"+created.Data.ID, "")
	if len(unliked) > 3 || !bumps(unliked) || writes(unliked) != 1 {
		t.Errorf("an unlike made %d queries (%d writing), want at most 3 and one write with the engagement bump:\n%s",
			len(unliked), writes(unliked), strings.Join(unliked, "\n"))
	}
	t.Logf("like: %d queries, unlike: %d", len(liked), len(unliked))
}

// bumps says whether a write's queries include the page-version bump
// (a like that changed nothing would not).
func bumps(queries []string) bool {
	for _, q := range queries {
		if strings.Contains(q, `INSERT INTO "page_versions"`) || strings.Contains(q, `INSERT INTO page_versions`) {
			return true
		}
	}
	return false
}

// writes counts the statements that write (each its own commit).
func writes(queries []string) int {
	n := 0
	for _, q := range queries {
		if !strings.HasPrefix(strings.TrimSpace(q), "SELECT") {
			n++
		}
	}
	return n
}
