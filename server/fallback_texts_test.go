package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/uptrace/bun"
)

// The fallback texts SPEC.md quotes (empty states, "... not found", load
// failures), each with the page and the state that shows it (issue 27,
// item 8).
func TestSpecFallbackTexts(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	db := f.ts.store.DB()
	const missing = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
	var quietPost string
	if err := db.NewSelect().Table("messages").Column("id").
		Where("app_id = ? AND type = 'POST' AND hidden = ''", f.appID).
		Where("NOT EXISTS (SELECT 1 FROM messages r WHERE r.parent_message_id = messages.id)").
		Limit(1).Scan(ctx, &quietPost); err != nil {
		t.Fatalf("a post without comments: %v", err)
	}

	f.ts.run(t, []scenario{
		{name: "post: missing", path: "/apps/demo/posts/" + missing, as: "follower@demo.test", status: 404,
			contains: []string{"Post not found", "Go Back"}},
		{name: "post: no comments", path: "/apps/demo/posts/" + quietPost, as: "follower@demo.test", status: 200,
			contains: []string{"No comments yet. Be the first to comment!"}},
		{name: "item: missing", path: "/apps/demo/store/items/" + missing, as: "follower@demo.test", status: 404,
			contains: []string{"Item Not Found", "This item could not be loaded."}},
		{name: "store: nothing matches", path: "/apps/demo/store?search=zzqqxx", as: "follower@demo.test", status: 200,
			contains: []string{"No items found"}},
		{name: "events: nothing matches", path: "/apps/demo/events?search=zzqqxx", as: "follower@demo.test", status: 200,
			contains: []string{"No events found"}},
		{name: "cart: none yet", path: "/apps/demo/cart", as: "follower@demo.test", status: 200,
			contains: []string{"Your cart is empty"}, absent: []string{"Cart not found"}},
		{name: "order: missing", path: "/apps/demo/orders/" + missing, as: "follower@demo.test", status: 404,
			contains: []string{"Order not found"}},
		{name: "notifications: none yet", path: "/apps/demo/notifications", as: "aria@demo.test", status: 200,
			contains: []string{"No notifications yet"}},
	})

	// The community feature off, then on with no posts.
	f.set(t, "demo", "features.community.enabled", "false")
	f.ts.run(t, []scenario{
		{name: "community: off", path: "/apps/demo/community", as: "follower@demo.test", status: 200,
			contains: []string{"This app doesn&#x27;t have community features enabled."}},
	})
	f.set(t, "demo", "features.community.enabled", "true")
	if _, err := db.NewUpdate().Table("messages").Set("hidden = 'test'").Where("app_id = ? AND type = 'POST'", f.appID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	f.ts.store.InvalidateApp(ctx, f.appID)
	f.ts.run(t, []scenario{
		{name: "community: no posts", path: "/apps/demo/community", as: "follower@demo.test", status: 200,
			contains: []string{"No posts yet. Be the first to share something!"}},
	})

}

// The database gone before the app was ever loaded (nothing cached): the
// page says 'Failed to load app data' and offers Retry, a 503 the browser
// may retry.
func TestSpecFallbackAppLoadFailed(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	if err := ts.store.DB().Close(); err != nil {
		t.Fatal(err)
	}
	ts.run(t, []scenario{
		{name: "app: load failed", path: "/apps/demo/events", status: http.StatusServiceUnavailable,
			contains: []string{"Failed to load app data", "Retry", `href="/apps/demo/events"`}},
	})
}

// failQueries makes every query whose SQL contains match fail, as a
// database failing one query would: its context is already cancelled.
type failQueries struct{ match string }

func (h failQueries) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if strings.Contains(e.Query, h.match) {
		failed, cancel := context.WithCancel(ctx)
		cancel()
		return failed
	}
	return ctx
}

func (failQueries) AfterQuery(context.Context, *bun.QueryEvent) {}

// The secondary parts of a page fail on their own: the community shows its
// posts with 'Failed to fetch stories', a post itself with 'Failed to
// fetch comments', each with Retry (SPEC.md section 8).
func TestSpecFallbackPartsFail(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	f.ts.store.DB().AddQueryHook(failQueries{match: "type = 'STORY'"})
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	f.ts.store.DB().AddQueryHook(failQueries{match: "parent_message_id = '"})
	f.ts.run(t, []scenario{
		{name: "community: stories fail", path: "/apps/demo/community", as: "follower@demo.test", status: 200,
			contains: []string{"Failed to fetch stories", "Retry", "feed-card"}},
		{name: "post: comments fail", path: "/apps/demo/posts/" + f.postID, as: "follower@demo.test", status: 200,
			contains: []string{"Failed to fetch comments", "Retry", "post-body"},
			absent:   []string{"No comments yet", "Post not found"}},
	})
}

// A session that cannot be checked: the page shows as to a visitor and says
// 'Failed to load user data' with Retry (SPEC.md section 8).
func TestSpecFallbackUserLoadFailed(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	token := sessionFor(t, f.ts, "follower@demo.test")
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	f.ts.store.DB().AddQueryHook(failQueries{match: "JOIN sessions AS s"})
	got := f.ts.do(t, "GET", "/apps/demo/events", nil, map[string]string{"Cookie": sessionCookie + "=" + token})
	if got.Status != http.StatusOK || !strings.Contains(got.Body, "Failed to load user data") || !strings.Contains(got.Body, `href="/apps/demo/events">Retry`) {
		t.Fatalf("events with the session lookup failing: %d %.300s", got.Status, got.Body)
	}
	// Visitors, whose pages need no session, see no such line.
	if v := f.ts.do(t, "GET", "/apps/demo/events", nil, nil); strings.Contains(v.Body, "Failed to load user data") {
		t.Fatalf("a visitor is told their data failed")
	}
}

// An order that cannot be written: the checkout form comes back to the
// checkout page with 'Failed to create order' (SPEC.md section 8), and the
// cart is kept.
func TestSpecFallbackCreateOrderFailed(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	var itemID, storeID string
	if err := f.ts.store.DB().NewSelect().Table("store_items").Column("id", "store_id").
		Where("app_id = ? AND type = 'DIGITAL'", f.appID).Limit(1).Scan(context.Background(), &itemID, &storeID); err != nil {
		t.Fatal(err)
	}
	buyer := f.ts.as(t, "follower@demo.test")
	buyer.must(200, "POST", "/api/store/"+storeID+"/cart/items", `{"storeItemId":"`+itemID+`","variantId":null,"quantity":1}`)
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	f.ts.store.DB().AddQueryHook(failQueries{match: `INSERT INTO "orders"`})
	cookie := sessionCookie + "=" + sessionFor(t, f.ts, "follower@demo.test")
	got := f.ts.do(t, "POST", "/apps/demo/checkout", strings.NewReader("notes="), map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
	loc := got.Header.Get("Location")
	if got.Status != http.StatusSeeOther || !strings.Contains(loc, "error=Failed+to+create+order") {
		t.Fatalf("checkout with orders failing: %d %q", got.Status, loc)
	}
	page := f.ts.do(t, "GET", loc, nil, map[string]string{"Cookie": cookie})
	if !strings.Contains(page.Body, "Failed to create order") {
		t.Fatalf("the checkout page lacks the reason: %d", page.Status)
	}
	cart := dataOf(buyer.must(200, "GET", "/api/store/"+storeID+"/cart", ""))
	if n := len(cart["items"].([]any)); n != 1 {
		t.Fatalf("the cart has %d lines after the failure", n)
	}
}
