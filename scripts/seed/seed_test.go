package seed

import (
	"context"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/media"
	"marquee/store"
	"marquee/store/storetest"
)

func TestDemo(t *testing.T) {
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		storage := &media.Local{Dir: t.TempDir(), BaseURL: "http://x", Key: []byte("k")}
		if err := Demo(ctx, db, storage); err != nil {
			t.Fatal(err)
		}
		first := tableCounts(t, db)
		checkDemo(t, db)
		checkAcme(t, db)
		checkMedia(t, db, storage)

		if err := Demo(ctx, db, storage); err != nil {
			t.Fatalf("second run: %v", err)
		}
		second := tableCounts(t, db)
		for table, n := range first {
			if second[table] != n {
				t.Errorf("second run changed %s: %d -> %d rows", table, n, second[table])
			}
		}
	})
}

var tables = []string{"users", "apps", "memberships", "communities", "media", "messages", "message_attachments",
	"reactions", "tags", "message_tags", "stores", "store_items", "store_item_media", "store_item_tags", "variants",
	"subscription_plans", "subscriptions", "events", "event_media", "attendees", "donation_tiers", "links"}

func tableCounts(t *testing.T, db *bun.DB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range tables {
		n, err := db.NewSelect().TableExpr(table).Count(context.Background())
		if err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		if n == 0 {
			t.Errorf("table %s is empty after seeding", table)
		}
		out[table] = n
	}
	return out
}

func count(t *testing.T, q *bun.SelectQuery) int64 {
	t.Helper()
	n, err := q.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func app(t *testing.T, db *bun.DB, name string) *store.App {
	t.Helper()
	a := new(store.App)
	if err := db.NewSelect().Model(a).Where("name = ?", name).Scan(context.Background()); err != nil {
		t.Fatalf("load app %s: %v", name, err)
	}
	return a
}

func checkDemo(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	demo := app(t, db, DemoAppName)
	now := time.Now()
	msgs := func(typ string) *bun.SelectQuery {
		return db.NewSelect().Model((*store.Message)(nil)).Where("app_id = ? AND type = ?", demo.ID, typ)
	}
	if n := count(t, msgs(store.MessagePost)); n != 30 {
		t.Errorf("posts = %d, want 30", n)
	}
	if n := count(t, msgs(store.MessagePost).Where("is_featured = ?", true)); n != 2 {
		t.Errorf("featured posts = %d, want 2", n)
	}
	if n := count(t, msgs(store.MessagePost).Where("created_at < ?", now.AddDate(0, 0, -31))); n != 0 {
		t.Errorf("%d posts older than 30 days", n)
	}
	if n := count(t, msgs(store.MessageReply)); n == 0 {
		t.Error("no replies")
	}
	withImage := count(t, db.NewSelect().Model((*store.MessageAttachment)(nil)).
		Join("JOIN messages AS m ON m.id = message_attachment.message_id").
		Where("m.app_id = ? AND m.type = ?", demo.ID, store.MessagePost))
	if withImage != 10 {
		t.Errorf("post attachments = %d, want 10", withImage)
	}
	var storyAuthors []string
	if err := msgs(store.MessageStory).ColumnExpr("DISTINCT sender_id").
		Where("created_at > ?", now.Add(-24*time.Hour)).Scan(ctx, &storyAuthors); err != nil {
		t.Fatal(err)
	}
	if len(storyAuthors) != 3 {
		t.Errorf("story authors in the last day = %d, want 3", len(storyAuthors))
	}

	events := func() *bun.SelectQuery {
		return db.NewSelect().Model((*store.Event)(nil)).Where("app_id = ?", demo.ID)
	}
	if n := count(t, events()); n != 10 {
		t.Errorf("events = %d, want 10", n)
	}
	if n := count(t, events().Where("start_date <= ? AND end_date >= ?", now, now)); n != 2 {
		t.Errorf("ongoing events = %d, want 2", n)
	}
	if n := count(t, events().Where("end_date < ?", now)); n != 4 {
		t.Errorf("past events = %d, want 4", n)
	}
	var types []string
	if err := events().ColumnExpr("DISTINCT type").Scan(ctx, &types); err != nil {
		t.Fatal(err)
	}
	if len(types) != 5 {
		t.Errorf("event types = %v, want all 5", types)
	}
	if n := count(t, db.NewSelect().Model((*store.Attendee)(nil)).Where("app_id = ? AND role = 'HOST'", demo.ID)); n != 10 {
		t.Errorf("HOST rows = %d, want 10", n)
	}

	var items []store.StoreItem
	if err := db.NewSelect().Model(&items).Where("app_id = ?", demo.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	// 11 store items and three membership tiers (issue 40: the first is
	// the old membership item; tiers are not on the store's grid).
	if len(items) != 14 {
		t.Errorf("items = %d, want 14", len(items))
	}
	var tiers []store.SubscriptionPlan
	if err := db.NewSelect().Model(&tiers).Where("app_id = ?", demo.ID).Order("tier_rank ASC").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(tiers) != 3 || tiers[0].Rank != 1 || tiers[2].Rank != 3 || tiers[0].State != store.TierOnSale {
		t.Errorf("tiers = %+v, want three on sale ranked 1 to 3", tiers)
	}
	var held string
	if err := db.NewSelect().Model((*store.Subscription)(nil)).Column("plan_id").
		Where("app_id = ? AND user_id = ?", demo.ID, userID(t, db, "subscriber@demo.test")).Scan(ctx, &held); err != nil || len(tiers) == 0 || held != tiers[0].ID {
		t.Errorf("subscriber@demo.test holds %q, want the first tier (%v)", held, err)
	}
	itemTypes, stock, featured := map[string]bool{}, map[string]bool{}, 0
	for _, it := range items {
		itemTypes[it.Type] = true
		switch {
		case it.Stock == nil:
			stock["untracked"] = true
		case *it.Stock == 0:
			stock["out"] = true
		case *it.Stock <= 5:
			stock["low"] = true
		default:
			stock["plenty"] = true
		}
		if it.IsFeatured {
			featured++
		}
	}
	if len(itemTypes) != 5 || len(stock) != 4 || featured != 4 {
		t.Errorf("item types %v, stock states %v, featured %d; want 5 types, 4 states, 4 featured", itemTypes, stock, featured)
	}

	wantRoles := map[string]string{"creator@demo.test": store.RoleCreator, "admin@demo.test": store.RoleAdmin,
		"moderator@demo.test": store.RoleModerator, "subscriber@demo.test": store.RoleSubscriber,
		"follower@demo.test": store.RoleFollower, "member@demo.test": ""}
	for email, want := range wantRoles {
		var u store.User
		if err := db.NewSelect().Model(&u).Where("email = ?", email).Scan(ctx); err != nil {
			t.Fatalf("user %s: %v", email, err)
		}
		var roles []string
		if err := db.NewSelect().Model((*store.Membership)(nil)).Column("role").
			Where("app_id = ? AND user_id = ?", demo.ID, u.ID).Scan(ctx, &roles); err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(roles) == 1 {
			got = roles[0]
		}
		if got != want || len(roles) > 1 || !u.EmailVerified {
			t.Errorf("%s: roles %v verified %v, want %q", email, roles, u.EmailVerified, want)
		}
	}
	ok, err := store.New(store.Options{DB: db}).HasValidSubscription(ctx, demo.ID, userID(t, db, "subscriber@demo.test"), now)
	if err != nil || !ok {
		t.Errorf("subscriber has no valid subscription: %v %v", ok, err)
	}
	if demo.BannerMediaID == nil || demo.TitleMediaID == nil {
		t.Error("demo app lacks banner or title image")
	}
	s := demo.Settings.Features
	if !s.Store.Enabled || !s.Donations.Enabled || !s.Links.Enabled || !s.Chat.Enabled || !demo.Settings.LandingPage.ShowLinkInBio {
		t.Errorf("demo features not all on: %+v", s)
	}
}

func userID(t *testing.T, db *bun.DB, email string) string {
	t.Helper()
	var id string
	if err := db.NewSelect().Model((*store.User)(nil)).Column("id").Where("email = ?", email).Scan(context.Background(), &id); err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return id
}

func checkAcme(t *testing.T, db *bun.DB) {
	acme := app(t, db, AcmeAppName)
	if acme.Settings.Features.Store.Enabled || acme.Settings.Features.Donations.Enabled || !acme.Settings.Features.Events.Enabled {
		t.Errorf("acme features: %+v", acme.Settings.Features)
	}
	if n := count(t, db.NewSelect().Model((*store.Membership)(nil)).
		Where("app_id = ? AND user_id = ?", acme.ID, userID(t, db, "follower@demo.test"))); n != 0 {
		t.Error("follower@demo.test has a role in acme")
	}
	if n := count(t, db.NewSelect().Model((*store.Message)(nil)).Where("app_id = ?", acme.ID)); n == 0 {
		t.Error("acme has no posts")
	}
}

// checkMedia proves every Media row points at stored bytes that decode as an
// image of the recorded size and type.
func checkMedia(t *testing.T, db *bun.DB, storage media.Storage) {
	ctx := context.Background()
	var rows []store.Media
	if err := db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range rows {
		r, size, err := storage.Open(ctx, m.Path)
		if err != nil {
			t.Errorf("media %s (%s): %v", m.ID, m.Path, err)
			continue
		}
		cfg, format, err := image.DecodeConfig(r)
		r.Close()
		if err != nil {
			t.Errorf("media %s (%s) does not decode: %v", m.ID, m.Path, err)
			continue
		}
		if size != m.Size || "image/"+format != m.MimeType || cfg.Width == 0 || m.Status != store.MediaUploaded {
			t.Errorf("media %s: size %d/%d, format %s/%s, status %s", m.Path, size, m.Size, format, m.MimeType, m.Status)
		}
		if m.Size > 100_000 {
			t.Errorf("media %s is %d bytes; keep demo images small", m.Path, m.Size)
		}
	}
}
