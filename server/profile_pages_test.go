package server

import (
	"context"
	"strings"
	"testing"
)

// A member's name and picture show beside their posts, replies and event
// attendance: changing them renews the pages of the apps that show them
// and leaves every other app's pages cached.
func TestProfileChangeRenewsOnlyAppsShowingTheUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ts := newTestServer(t, demoDB(t))
	for _, app := range []string{"/apps/demo", "/apps/acme"} {
		ts.visit(t, app, "miss")
		ts.visit(t, app, "hit")
	}
	var creatorID string
	if err := ts.store.DB().NewSelect().Table("users").Column("id").Where("email = ?", "creator@demo.test").Scan(ctx, &creatorID); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.ChangeUsername(ctx, creatorID, "lunarenamed"); err != nil {
		t.Fatal(err)
	}
	ts.visit(t, "/apps/acme", "hit")
	if body := ts.visit(t, "/apps/demo", "miss"); !strings.Contains(body, "lunarenamed") {
		t.Error("the demo landing still shows the creator's old name beside their posts")
	}

	// Someone who only attends one of demo's events: demo's pages are
	// renewed (the attendee list shows them), acme's are not.
	var attendee string
	err := ts.store.DB().NewRaw(`SELECT a.user_id FROM attendees a JOIN apps ON apps.id = a.app_id WHERE apps.name = 'demo'
		AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.sender_id = a.user_id) LIMIT 1`).Scan(ctx, &attendee)
	if err != nil {
		t.Fatalf("the demo has no attendee without posts: %v", err)
	}
	ts.visit(t, "/apps/demo", "hit")
	ts.store.InvalidateUser(ctx, attendee)
	ts.visit(t, "/apps/acme", "hit")
	ts.visit(t, "/apps/demo", "miss")
}
