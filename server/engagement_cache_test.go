package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
)

// A like, a reply or a follow moves only the app's engagement version: the
// cached pages stay and are served (stale) until staleFor has passed since
// their render, then one request renders them again; the data behind them
// (landing data, lists, the API) is exact at once. New content still shows
// on the very next request.
func TestEngagementKeepsPagesCached(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := commLoad(t, ts)
	creator, follower := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "follower@demo.test")
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Engagement post 3310", "type": "POST", "communityId": ids.demoCommunity}), creator)
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	postPage := "/apps/demo/posts/" + created.Data.ID

	ts.pages.staleFor = time.Hour
	for _, p := range []string{"/apps/demo", "/apps/demo/community", postPage} {
		ts.visit(t, p, "miss")
		ts.visit(t, p, "hit")
	}
	before := ts.store.LandingBuilds()

	if r := ts.do(t, "POST", "/api/messages/"+created.Data.ID+"/reactions", body(map[string]any{"reaction": "❤️"}), follower); r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("like: %d %s", r.Status, r.Body)
	}
	// The pages were not emptied: each is answered from the cache, with the
	// count as of its render.
	for _, p := range []string{"/apps/demo", "/apps/demo/community"} {
		ts.visit(t, p, "stale")
	}
	if m := likeCount.FindStringSubmatch(ts.visit(t, postPage, "stale")); m == nil || m[1] != "0" {
		t.Fatalf("stale post page count: %v", m)
	}
	// The data is exact at once, without rebuilding the landing content.
	api := ts.do(t, "GET", "/api/app/demo/landing", nil, nil)
	if !strings.Contains(api.Body, created.Data.ID) || !strings.Contains(api.Body, `"_count":{"reactions":1,"replies":0}`) {
		t.Fatalf("landing API after a like: %s", api.Body)
	}
	if got := ts.store.LandingBuilds(); got != before {
		t.Errorf("a like rebuilt the landing content %d times", got-before)
	}

	// Whoever just wrote through a form (the like button without
	// JavaScript) gets the page with their write, not the stale one.
	like := ts.do(t, "POST", "/apps/demo/posts/"+created.Data.ID+"/like", nil, map[string]string{"Cookie": follower["Cookie"], "Content-Type": "application/x-www-form-urlencoded"})
	if like.Status != http.StatusSeeOther || !strings.Contains(like.Header.Get("Set-Cookie"), freshCookie+"=1") {
		t.Fatalf("form like: %d, Set-Cookie %q", like.Status, like.Header.Get("Set-Cookie"))
	}
	own := ts.do(t, "GET", postPage, nil, map[string]string{"Cookie": freshCookie + "=1"})
	if m := likeCount.FindStringSubmatch(own.Body); m == nil || m[1] != "0" || own.Header.Get("X-Page-Cache") != "refresh" {
		t.Fatalf("the writer's page after unliking: %v, %s", m, own.Header.Get("X-Page-Cache"))
	}
	if r := ts.do(t, "POST", "/api/messages/"+created.Data.ID+"/reactions", body(map[string]any{"reaction": "❤️"}), follower); r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("like again: %d %s", r.Status, r.Body)
	}
	if m := likeCount.FindStringSubmatch(ts.visit(t, postPage, "stale")); m == nil || m[1] != "0" {
		t.Fatalf("others still get the stale page: %v", m)
	}

	// Past the bound, one request renders the page with the new count.
	ts.pages.staleFor = 0
	if m := likeCount.FindStringSubmatch(ts.visit(t, postPage, "refresh")); m == nil || m[1] != "1" {
		t.Fatalf("refreshed post page count: %v", m)
	}
	ts.visit(t, postPage, "hit")

	// A reply shows on its post's page at once; elsewhere only counts move.
	ts.visit(t, "/apps/demo/community", "refresh")
	ts.visit(t, "/apps/demo/community", "hit")
	ts.pages.staleFor = time.Hour
	if r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "A reply 5120", "type": "REPLY", "parentMessageId": created.Data.ID}), follower); r.Status != http.StatusCreated {
		t.Fatalf("reply: %d %s", r.Status, r.Body)
	}
	if page := ts.visit(t, postPage, "miss"); !strings.Contains(page, "A reply 5120") {
		t.Error("the post's page does not show the new reply")
	}
	ts.visit(t, "/apps/demo/community", "stale")

	// A new post is content: on the very next request.
	r = ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Second post 8841", "type": "POST", "communityId": ids.demoCommunity}), creator)
	if r.Status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	for _, p := range []string{"/apps/demo", "/apps/demo/community"} {
		if page := ts.visit(t, p, "miss"); !strings.Contains(page, "Second post 8841") {
			t.Errorf("%s does not show the new post", p)
		}
	}
}

// A follow changes what the follower may do at once, although it leaves the
// cached pages in place.
func TestFollowChangesTheMembersPageAtOnce(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ts.pages.staleFor = time.Hour
	member := commUser(t, ts, "member@demo.test")
	cookie := map[string]string{"Cookie": member["Cookie"]}
	postPage := "/apps/demo/posts/" + commLoad(t, ts).demoPost
	const invite = "Follow this app to join the conversation"
	// Warm the pages of both classes, so the follow has cached pages to keep.
	ts.visit(t, postPage, "")
	ts.do(t, "GET", postPage, nil, commUser(t, ts, "follower@demo.test"))
	before := ts.do(t, "GET", postPage, nil, cookie)
	if before.Status != http.StatusOK || !strings.Contains(before.Body, invite) {
		t.Fatalf("before following: %d, invited to follow: %v", before.Status, strings.Contains(before.Body, invite))
	}
	demo, err := ts.store.AppByIDOrName(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "POST", "/api/notifications/follow/"+demo.ID, nil, member); r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("follow: %d %s", r.Status, r.Body)
	}
	after := ts.do(t, "GET", postPage, nil, cookie)
	if after.Status != http.StatusOK || strings.Contains(after.Body, invite) {
		t.Fatalf("after following: %d, still invited to follow: %v", after.Status, strings.Contains(after.Body, invite))
	}
}

// Twenty members like and unlike one post 200 times in all while visitors
// read: every visitor gets a visitor's page, no count is lost, and once the
// writes stop and the bound has passed the page shows the exact count.
func TestConcurrentLikesKeepCountsExact(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := commLoad(t, ts)
	ctx := context.Background()
	creator := commUser(t, ts, "creator@demo.test")
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Popular post 7007", "type": "POST", "communityId": ids.demoCommunity}), creator)
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	postPage := "/apps/demo/posts/" + created.Data.ID
	demo, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	fans := make([]map[string]string, 20)
	fanIDs := make([]string, 20)
	for i := range fans {
		u, err := ts.store.CreateUser(ctx, fmt.Sprintf("fan%d@likes.test", i), fmt.Sprintf("fan%d", i), "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.store.Follow(ctx, demo.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		fans[i], fanIDs[i] = commUser(t, ts, u.Email), u.ID
	}
	ts.visit(t, postPage, "miss")

	// Each fan toggles: like, unlike, ... ending liked for even fans (10
	// requests each) and unliked for odd ones.
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for i, fan := range fans {
		wg.Add(1)
		go func(i int, fan map[string]string) {
			defer wg.Done()
			rounds := 5
			for k := 0; k < rounds*2; k++ {
				if k%2 == 0 {
					r := ts.do(t, "POST", "/api/messages/"+created.Data.ID+"/reactions", body(map[string]any{"reaction": "❤️"}), fan)
					if r.Status != http.StatusCreated && r.Status != http.StatusOK {
						errs <- fmt.Sprintf("like: %d %s", r.Status, r.Body)
						return
					}
					if i%2 == 0 && k == rounds*2-2 {
						return // even fans end liked
					}
					continue
				}
				var mine struct {
					Data store.MessageView
				}
				commJSON(t, ts.do(t, "GET", "/api/messages/"+created.Data.ID, nil, fan), &mine)
				uid := fanIDs[i]
				for _, re := range mine.Data.Reactions {
					if re.Sender.ID == uid {
						if r := ts.do(t, "DELETE", "/api/messages/"+created.Data.ID+"/reactions/"+re.ID, nil, fan); r.Status != http.StatusOK && r.Status != http.StatusNoContent {
							errs <- fmt.Sprintf("unlike: %d %s", r.Status, r.Body)
							return
						}
					}
				}
			}
		}(i, fan)
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 25; k++ {
				page := ts.do(t, "GET", postPage, nil, map[string]string{"Accept-Encoding": "identity"})
				if page.Status != http.StatusOK || !strings.Contains(page.Body, "Popular post 7007") || strings.Contains(page.Body, "likes.test") {
					errs <- fmt.Sprintf("visitor read: %d, holds a member's address: %v", page.Status, strings.Contains(page.Body, "likes.test"))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	n, err := ts.store.DB().NewSelect().Model((*store.Reaction)(nil)).Where("message_id = ?", created.Data.ID).Count(ctx)
	if err != nil || n != 10 {
		t.Fatalf("reactions stored: %d %v, want 10", n, err)
	}
	var api struct{ Data store.MessageView }
	commJSON(t, ts.do(t, "GET", "/api/messages/"+created.Data.ID, nil, fans[0]), &api)
	if api.Data.Count.Reactions != 10 {
		t.Errorf("API count %d, want 10", api.Data.Count.Reactions)
	}
	ts.pages.staleFor = 0
	if m := likeCount.FindStringSubmatch(ts.visit(t, postPage, "")); m == nil || m[1] != "10" {
		t.Errorf("page count once writes stopped: %v, want 10", m)
	}
	landing := ts.do(t, "GET", "/api/app/demo/landing", nil, nil)
	if !strings.Contains(landing.Body, `"_count":{"reactions":10,`) {
		t.Errorf("landing data after the writes does not count 10 reactions")
	}
}

// A like leaves what the page cache remembers of each member's standing:
// a member's cached page after a like costs no membership, ban or hidden-
// post lookup (at 60 likes a second every member paid them again). A
// follow is what changes a standing, and it is seen at once
// (TestFollowChangesTheMembersPageAtOnce).
func TestLikeKeepsMemberClasses(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	follower := commUser(t, ts, "follower@demo.test")
	ts.pages.staleFor = time.Hour
	for _, want := range []string{"miss", "hit"} {
		if r := ts.do(t, "GET", "/apps/demo", nil, follower); r.Header.Get("X-Page-Cache") != want {
			t.Fatalf("member landing: %q, want %q", r.Header.Get("X-Page-Cache"), want)
		}
	}
	// What a like does after its insert (store.AddReaction).
	appID, err := ts.store.AppIDOf(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	ts.store.NoteEngagement(context.Background(), appID)
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	db.AddQueryHook(store.QueryCountHook{})
	qctx, qc := store.WithQueryCount(context.Background())
	req := newRequest("GET", "/apps/demo", nil).WithContext(qctx)
	req.Header.Set("Cookie", follower["Cookie"])
	rec := httptest.NewRecorder()
	ts.Main().ServeHTTP(rec, req)
	if got := rec.Header().Get("X-Page-Cache"); got != "stale" {
		t.Fatalf("member landing after a like: %q, want stale", got)
	}
	for _, q := range qc.Queries() {
		if strings.Contains(q, `"memberships"`) || strings.Contains(q, `"bans"`) || strings.Contains(q, `"messages"`) {
			t.Errorf("a like made the member's standing be looked up again: %s", q)
		}
	}
}

// The feed is cached per content version with its counts laid over per
// engagement version: a like and a reply show in the next feed call.
func TestFeedCountsExactAfterEngagement(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := commLoad(t, ts)
	creator, follower := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "follower@demo.test")
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Feed counts post 4471", "type": "POST", "communityId": ids.demoCommunity}), creator)
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	feed := "/api/community/" + ids.demoCommunity + "/posts"
	countOf := func() store.MessageCount {
		t.Helper()
		var page struct {
			Data struct{ Posts []store.MessageView }
		}
		commJSON(t, ts.do(t, "GET", feed, nil, follower), &page)
		for _, p := range page.Data.Posts {
			if p.ID == created.Data.ID {
				if len(p.Reactions) != p.Count.Reactions {
					t.Fatalf("reactions %d listed, %d counted", len(p.Reactions), p.Count.Reactions)
				}
				return p.Count
			}
		}
		t.Fatalf("post not in the feed")
		return store.MessageCount{}
	}
	if c := countOf(); c.Reactions != 0 || c.Replies != 0 {
		t.Fatalf("new post: %+v", c)
	}
	if r := ts.do(t, "POST", "/api/messages/"+created.Data.ID+"/reactions", body(map[string]any{"reaction": "❤️"}), follower); r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("like: %d %s", r.Status, r.Body)
	}
	if c := countOf(); c.Reactions != 1 || c.Replies != 0 {
		t.Fatalf("after a like: %+v", c)
	}
	r = ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "a reply", "type": "REPLY", "communityId": ids.demoCommunity, "parentMessageId": created.Data.ID}), follower)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("reply: %d %s", r.Status, r.Body)
	}
	if c := countOf(); c.Reactions != 1 || c.Replies != 1 {
		t.Fatalf("after a reply: %+v", c)
	}
}

// Replies and follows under load, while visitors read: a reply is on its
// post's page from the very next request (it moves the post's own
// version), no visitor page holds a member's state, and once the writes
// stop the counts are exact: every reply, and the members who end up
// following.
func TestRepliesAndFollowsUnderLoad(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := commLoad(t, ts)
	ctx := context.Background()
	demo, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	membersBefore, err := ts.store.DB().NewSelect().Model((*store.Membership)(nil)).Where("app_id = ?", demo.ID).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	postPage := "/apps/demo/posts/" + ids.demoPost
	ts.visit(t, postPage, "miss")
	ts.visit(t, "/apps/demo", "")

	// All of them fit the first page of comments (CommentsPageSize).
	const fans, replies = 20, 2
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range fans {
		u, err := ts.store.CreateUser(ctx, fmt.Sprintf("crowd%d@replies.test", i), fmt.Sprintf("crowd%d", i), "x")
		if err != nil {
			t.Fatal(err)
		}
		fan := commUser(t, ts, u.Email)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Follow, unfollow, follow: even fans stop after the second
			// follow, odd ones unfollow once more.
			for k, action := range []string{"follow", "unfollow", "follow", "unfollow"} {
				if k == 3 && i%2 == 0 {
					break
				}
				if r := ts.do(t, "POST", "/api/notifications/"+action+"/"+demo.ID, nil, fan); r.Status >= 300 {
					errs <- fmt.Sprintf("%s: %d %s", action, r.Status, r.Body)
					return
				}
				if k != 2 {
					continue
				}
				for n := range replies {
					text := fmt.Sprintf("Reply %d from crowd%d", n, i)
					r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": text, "type": "REPLY",
						"parentMessageId": ids.demoPost, "communityId": ids.demoCommunity}), fan)
					if r.Status != http.StatusCreated {
						errs <- fmt.Sprintf("reply: %d %s", r.Status, r.Body)
						return
					}
					// The very next request of anyone shows it.
					page := ts.do(t, "GET", postPage, nil, map[string]string{"Accept-Encoding": "identity"})
					if !strings.Contains(page.Body, text) {
						errs <- fmt.Sprintf("%q is not on the post's page right after it was written (%s)", text, page.Header.Get("X-Page-Cache"))
					}
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 30 {
				path := postPage
				if k%2 == 1 {
					path = "/apps/demo"
				}
				page := ts.do(t, "GET", path, nil, map[string]string{"Accept-Encoding": "identity"})
				if page.Status != http.StatusOK || strings.Contains(page.Body, "replies.test") || strings.Contains(page.Body, `"user":{`) {
					errs <- fmt.Sprintf("visitor read of %s: %d, holds a member's state: %v", path, page.Status, page.Status == http.StatusOK)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	stored, err := ts.store.DB().NewSelect().Model((*store.Message)(nil)).Where("parent_message_id = ? AND content LIKE 'Reply % from crowd%'", ids.demoPost).Count(ctx)
	if err != nil || stored != fans*replies {
		t.Fatalf("replies stored: %d %v, want %d", stored, err, fans*replies)
	}
	var landing struct {
		Data struct {
			Count struct{ Members int64 } `json:"_count"`
		}
	}
	commJSON(t, ts.do(t, "GET", "/api/app/demo/landing", nil, nil), &landing)
	if want := membersBefore + fans/2; landing.Data.Count.Members != int64(want) {
		t.Errorf("landing counts %d members after the follows, want %d", landing.Data.Count.Members, want)
	}
	ts.pages.staleFor = 0
	page := ts.visit(t, postPage, "")
	if n := strings.Count(page, " from crowd"); n < fans*replies {
		t.Errorf("the post's page shows %d of the %d replies once the writes stopped", n, fans*replies)
	}
}

// queryCounter counts the queries of a database whose SQL holds a string.
type queryCounter struct {
	holds string
	n     atomic.Int64
}

func (q *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}
func (q *queryCounter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.Contains(e.Query, q.holds) {
		q.n.Add(1)
	}
}

// After a write, every request of the app wants the rebuilt data at once:
// fifty of them share one rebuild per key and version (issue 22 item 2),
// the landing content after a new post, the landing's and the feed's
// counts after a like.
func TestConcurrentCallsShareOneRebuild(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	reactionReads := &queryCounter{holds: `FROM "reactions"`}
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	db.AddQueryHook(reactionReads)
	ts := newTestServer(t, db)
	ctx := context.Background()
	ids := commLoad(t, ts)
	demo, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	feed := "/api/community/" + ids.demoCommunity + "/posts"
	all := func(paths ...string) {
		t.Helper()
		var wg sync.WaitGroup
		fails := make(chan string, 100)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path := paths[i%len(paths)]
				if r := ts.do(t, "GET", path, nil, nil); r.Status != http.StatusOK {
					fails <- fmt.Sprintf("%s: %d", path, r.Status)
				}
			}()
		}
		wg.Wait()
		close(fails)
		for f := range fails {
			t.Error(f)
		}
	}
	all("/api/app/demo/landing", feed)

	ts.store.InvalidateApp(ctx, demo.ID)
	builds := ts.store.LandingBuilds()
	all("/api/app/demo/landing")
	if got := ts.store.LandingBuilds() - builds; got != 1 {
		t.Errorf("fifty landing calls after a new version built the landing content %d times, want 1", got)
	}

	follower := commUser(t, ts, "follower@demo.test")
	if r := ts.do(t, "POST", "/api/messages/"+ids.demoPost+"/reactions", body(map[string]any{"reaction": "❤️"}), follower); r.Status >= 300 {
		t.Fatalf("like: %d %s", r.Status, r.Body)
	}
	builds, reads := ts.store.LandingBuilds(), reactionReads.n.Load()
	all("/api/app/demo/landing", feed)
	if got := ts.store.LandingBuilds() - builds; got != 0 {
		t.Errorf("a like rebuilt the landing content %d times", got)
	}
	// One read of the reactions for the landing's posts, one for the feed's.
	if got := reactionReads.n.Load() - reads; got != 2 {
		t.Errorf("fifty landing and feed calls after a like read the reactions %d times, want 2", got)
	}
}
