package server

import (
	"context"
	"net/http"
	"testing"
)

// The fallback texts SPEC.md quotes (empty states, "... not found", load
// failures), each with the page and the state that shows it (issue 27,
// item 8).
func TestSpecFallbackTexts(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	db := f.ts.store.DB
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
	if err := ts.store.DB.Close(); err != nil {
		t.Fatal(err)
	}
	ts.run(t, []scenario{
		{name: "app: load failed", path: "/apps/demo/events", status: http.StatusServiceUnavailable,
			contains: []string{"Failed to load app data", "Retry", `href="/apps/demo/events"`}},
	})
}
