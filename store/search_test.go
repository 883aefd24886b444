package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"

	"marquee/store"
	"marquee/store/migrations"
	"marquee/store/storetest"
)

var searchAll = store.SearchScope{Posts: true, Items: true, Events: true}

func searchIDs(t *testing.T, s *store.Storage, appID, appName, q string) (posts, items, events []string) {
	t.Helper()
	res, err := s.Search(context.Background(), appID, appName, q, searchAll)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	for _, h := range res.Posts {
		posts = append(posts, h.ID)
	}
	for _, h := range res.Items {
		items = append(items, h.ID)
	}
	for _, h := range res.Events {
		events = append(events, h.ID)
	}
	return posts, items, events
}

func appByName(t *testing.T, db *bun.DB, name string) *store.App {
	t.Helper()
	app := new(store.App)
	if err := db.NewSelect().Model(app).Where("name = ?", name).Scan(context.Background()); err != nil {
		t.Fatalf("app %s: %v", name, err)
	}
	return app
}

// aPost copies an existing post of the app with new content, so it has a
// real community and sender.
func aPost(t *testing.T, db *bun.DB, appID, typ, content string) *store.Message {
	t.Helper()
	ctx := context.Background()
	var like store.Message
	if err := db.NewSelect().Model(&like).Where("app_id = ? AND type = ?", appID, store.MessagePost).Limit(1).Scan(ctx); err != nil {
		t.Fatalf("a post of %s: %v", appID, err)
	}
	now := time.Now().UTC()
	m := &store.Message{ID: store.NewID(), AppID: appID, CommunityID: like.CommunityID, SenderID: like.SenderID,
		Type: typ, Content: content, CreatedAt: now, UpdatedAt: now}
	if typ != store.MessagePost {
		m.ParentMessageID = &like.ID
	}
	if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
		t.Fatalf("insert message: %v", err)
	}
	return m
}

func has(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Search on both databases: whole words, the last word as a prefix, nothing
// of another app, nothing that is not a post, edits and deletes reflected at
// once (on SQLite through the FTS5 triggers), and any typed input is safe.
func TestSearch(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := seeded(t, db, store.NewMemoryCache())
		demo, acme := appByName(t, db, "demo"), appByName(t, db, "acme")

		post := aPost(t, db, demo.ID, store.MessagePost, "Glazing zephyrquill pottery tonight")
		other := aPost(t, db, acme.ID, store.MessagePost, "Acme zephyrquill workshop")
		comment := aPost(t, db, demo.ID, store.MessageReply, "a zephyrquill reply")

		posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, "zephyrquill")
		if !has(posts, post.ID) || has(posts, other.ID) || has(posts, comment.ID) {
			t.Errorf("zephyrquill in demo: %v, want only the demo post %s", posts, post.ID)
		}
		posts, _, _ = searchIDs(t, s, acme.ID, acme.Name, "zephyrquill")
		if !has(posts, other.ID) || has(posts, post.ID) {
			t.Errorf("zephyrquill in acme: %v, want only the acme post %s", posts, other.ID)
		}
		queries := []string{"ZEPHYRQ", "glazing   tonight"}
		if db.Dialect().Name() == dialect.SQLite {
			// Words anywhere, the last one a prefix. PostgreSQL matches
			// either whole words or one substring of the whole query.
			queries = append(queries, "pottery zephyr", "tonight glaz")
		}
		for _, q := range queries {
			if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, q); !has(posts, post.ID) {
				t.Errorf("%q: %v, want the post", q, posts)
			}
		}
		if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, "zephyrquill absentword"); has(posts, post.ID) {
			t.Errorf("every word must match: %v", posts)
		}

		// Edit and delete.
		if _, err := db.NewUpdate().Model(post).Set("content = ?", "Now about moonwhistle only").WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, "zephyrquill"); has(posts, post.ID) {
			t.Errorf("old text still found after edit: %v", posts)
		}
		if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, "moonwhistle"); !has(posts, post.ID) {
			t.Errorf("new text not found after edit: %v", posts)
		}
		if err := s.DeleteMessage(ctx, post); err != nil {
			t.Fatal(err)
		}
		if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, "moonwhistle"); has(posts, post.ID) {
			t.Errorf("deleted post found: %v", posts)
		}

		// Store items: soft delete hides; a rename is found.
		var item store.StoreItem
		if err := db.NewSelect().Model(&item).Where("app_id = ? AND deleted_at IS NULL", demo.ID).Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model(&item).Set("name = ?", "Quibblefrost Mug").WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, items, _ := searchIDs(t, s, demo.ID, demo.Name, "quibblefrost"); !has(items, item.ID) {
			t.Errorf("renamed item not found: %v", items)
		}
		if _, items, _ := searchIDs(t, s, acme.ID, acme.Name, "quibblefrost"); len(items) != 0 {
			t.Errorf("demo item found in acme: %v", items)
		}
		if _, err := db.NewUpdate().Model(&item).Set("deleted_at = ?", time.Now().UTC()).WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, items, _ := searchIDs(t, s, demo.ID, demo.Name, "quibblefrost"); has(items, item.ID) {
			t.Errorf("soft-deleted item found: %v", items)
		}

		// Events: location is searched; a deleted event is gone.
		var ev store.Event
		if err := db.NewSelect().Model(&ev).Where("app_id = ?", demo.ID).Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model(&ev).Set("location = ?", "Snorkelburg Hall").WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, events := searchIDs(t, s, demo.ID, demo.Name, "snorkelb"); !has(events, ev.ID) {
			t.Errorf("event by location prefix not found: %v", events)
		}
		if err := s.DeleteEvent(ctx, &ev, ev.CreatorID); err != nil {
			t.Fatal(err)
		}
		if _, _, events := searchIDs(t, s, demo.ID, demo.Name, "snorkelburg"); has(events, ev.ID) {
			t.Errorf("deleted event found: %v", events)
		}

		// Whatever is typed is text, never FTS5 syntax or a LIKE wildcard.
		weird := aPost(t, db, demo.ID, store.MessagePost, `she said "NEAR(" and col:umn`)
		for _, q := range []string{`"`, `*`, `NEAR(`, `NEAR(a b)`, `a" OR "b`, `"unclosed`, `col:umn`, `^start`, `-x`,
			`AND`, `OR NOT`, `(`, `)`, `%`, `_`, `\`, `'`, `{a b}:c`, `***`, `+`, `a AND`, `😀`} {
			if _, err := s.Search(ctx, demo.ID, demo.Name, q, searchAll); err != nil {
				t.Errorf("search %q: %v", q, err)
			}
		}
		if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, `"near(" col:umn`); !has(posts, weird.ID) {
			t.Errorf("quoted words with syntax characters not found as text: %v", posts)
		}
		if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, "%"); len(posts) != 0 {
			t.Errorf("%% matched as a wildcard: %v", posts)
		}
	})
}

// The SQLite migration indexes the rows that existed before it ran, and its
// down step removes the FTS5 tables and triggers.
func TestSearchFTSBackfill(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	s := seeded(t, db, store.NewMemoryCache())
	demo := appByName(t, db, "demo")

	var fts migrate.Migration
	for _, m := range migrations.Migrations.Sorted() {
		if m.Name == "20261123140001" {
			fts = m
		}
	}
	if fts.Down == nil {
		t.Fatal("no migration 20261123140001")
	}
	migrator := migrate.NewMigrator(db, migrations.Migrations)
	if err := fts.Down(ctx, migrator, &fts); err != nil {
		t.Fatalf("down: %v", err)
	}
	var n int
	if err := db.NewRaw(`SELECT count(*) FROM sqlite_master WHERE name LIKE '%fts%'`).Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("after down: %d fts objects left (%v)", n, err)
	}
	before := aPost(t, db, demo.ID, store.MessagePost, "Written before the index: gravelmoth")
	if err := fts.Up(ctx, migrator, &fts); err != nil {
		t.Fatalf("up: %v", err)
	}
	if posts, _, _ := searchIDs(t, s, demo.ID, demo.Name, "gravelmoth"); !has(posts, before.ID) {
		t.Errorf("existing post not backfilled: %v", posts)
	}
	// Ranked by bm25 with the name weighing more than the description, not
	// by date: the newer item mentioning the word only in its description
	// comes second.
	var two []store.StoreItem
	if err := db.NewSelect().Model(&two).Where("app_id = ? AND deleted_at IS NULL", demo.ID).Order("id").Limit(2).Scan(ctx); err != nil || len(two) != 2 {
		t.Fatalf("two items: %v", err)
	}
	now := time.Now().UTC()
	if _, err := db.NewUpdate().Model(&two[0]).Set("name = ?", "Velvetorb Lamp").Set("created_at = ?", now.Add(-time.Hour)).WherePK().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewUpdate().Model(&two[1]).Set("description = ?", "Pairs well with a velvetorb.").Set("created_at = ?", now).WherePK().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, items, _ := searchIDs(t, s, demo.ID, demo.Name, "velvetorb"); len(items) != 2 || items[0] != two[0].ID {
		t.Errorf("velvetorb: %v, want %s (name) before %s (description)", items, two[0].ID, two[1].ID)
	}

	// Seeded items are found too.
	var item store.StoreItem
	if err := db.NewSelect().Model(&item).Where("app_id = ? AND deleted_at IS NULL", demo.ID).Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if _, items, _ := searchIDs(t, s, demo.ID, demo.Name, item.Name); !has(items, item.ID) {
		t.Errorf("backfilled item %q not found: %v", item.Name, items)
	}
}
