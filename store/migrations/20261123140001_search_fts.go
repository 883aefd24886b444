package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Search on SQLite, the embedded default, goes through FTS5 (modernc's SQLite
// has it built in) so it ranks by bm25 and does not scan every row with LIKE.
// PostgreSQL keeps computing its tsvector at query time: nothing to do there.
//
// Each index keeps its own copy of the text keyed by the row's id (UNINDEXED)
// rather than being an external-content table: external content is addressed
// by rowid, and these tables have text primary keys, whose implicit rowids
// VACUUM may renumber, silently pointing the index at the wrong rows. The
// price is that removing a row's entry scans the index's id column, which is
// cheap at embedded sizes.
//
// Triggers keep the indexes in step with every write; only rows search can
// return are indexed (posts, not comments or DMs; items not soft-deleted),
// and search joins back to the table and applies its scoping rules anyway.
// No stemming: "porter" would turn a half-typed last word ("paintin") into a
// stem the prefix query no longer matches; prefix matching on the last word
// covers plurals typed in full.
var searchFTSUp = []string{
	`CREATE VIRTUAL TABLE "messages_fts" USING fts5(id UNINDEXED, content, tokenize = 'unicode61 remove_diacritics 2')`,
	`CREATE TRIGGER "messages_fts_insert" AFTER INSERT ON "messages" WHEN new."type" = 'POST' BEGIN
		INSERT INTO "messages_fts" (id, content) VALUES (new."id", new."content");
	END`,
	`CREATE TRIGGER "messages_fts_update" AFTER UPDATE OF "content", "type" ON "messages" BEGIN
		DELETE FROM "messages_fts" WHERE id = old."id";
		INSERT INTO "messages_fts" (id, content) SELECT new."id", new."content" WHERE new."type" = 'POST';
	END`,
	`CREATE TRIGGER "messages_fts_delete" AFTER DELETE ON "messages" BEGIN
		DELETE FROM "messages_fts" WHERE id = old."id";
	END`,
	`INSERT INTO "messages_fts" (id, content) SELECT "id", "content" FROM "messages" WHERE "type" = 'POST'`,

	`CREATE VIRTUAL TABLE "store_items_fts" USING fts5(id UNINDEXED, name, description, tokenize = 'unicode61 remove_diacritics 2')`,
	`CREATE TRIGGER "store_items_fts_insert" AFTER INSERT ON "store_items" WHEN new."deleted_at" IS NULL BEGIN
		INSERT INTO "store_items_fts" (id, name, description) VALUES (new."id", new."name", new."description");
	END`,
	`CREATE TRIGGER "store_items_fts_update" AFTER UPDATE OF "name", "description", "deleted_at" ON "store_items" BEGIN
		DELETE FROM "store_items_fts" WHERE id = old."id";
		INSERT INTO "store_items_fts" (id, name, description) SELECT new."id", new."name", new."description" WHERE new."deleted_at" IS NULL;
	END`,
	`CREATE TRIGGER "store_items_fts_delete" AFTER DELETE ON "store_items" BEGIN
		DELETE FROM "store_items_fts" WHERE id = old."id";
	END`,
	`INSERT INTO "store_items_fts" (id, name, description) SELECT "id", "name", "description" FROM "store_items" WHERE "deleted_at" IS NULL`,

	`CREATE VIRTUAL TABLE "events_fts" USING fts5(id UNINDEXED, name, description, location, tokenize = 'unicode61 remove_diacritics 2')`,
	`CREATE TRIGGER "events_fts_insert" AFTER INSERT ON "events" BEGIN
		INSERT INTO "events_fts" (id, name, description, location) VALUES (new."id", new."name", new."description", new."location");
	END`,
	`CREATE TRIGGER "events_fts_update" AFTER UPDATE OF "name", "description", "location" ON "events" BEGIN
		DELETE FROM "events_fts" WHERE id = old."id";
		INSERT INTO "events_fts" (id, name, description, location) VALUES (new."id", new."name", new."description", new."location");
	END`,
	`CREATE TRIGGER "events_fts_delete" AFTER DELETE ON "events" BEGIN
		DELETE FROM "events_fts" WHERE id = old."id";
	END`,
	`INSERT INTO "events_fts" (id, name, description, location) SELECT "id", "name", "description", "location" FROM "events"`,
}

var searchFTSDown = []string{
	`DROP TRIGGER IF EXISTS "messages_fts_insert"`,
	`DROP TRIGGER IF EXISTS "messages_fts_update"`,
	`DROP TRIGGER IF EXISTS "messages_fts_delete"`,
	`DROP TABLE IF EXISTS "messages_fts"`,
	`DROP TRIGGER IF EXISTS "store_items_fts_insert"`,
	`DROP TRIGGER IF EXISTS "store_items_fts_update"`,
	`DROP TRIGGER IF EXISTS "store_items_fts_delete"`,
	`DROP TABLE IF EXISTS "store_items_fts"`,
	`DROP TRIGGER IF EXISTS "events_fts_insert"`,
	`DROP TRIGGER IF EXISTS "events_fts_update"`,
	`DROP TRIGGER IF EXISTS "events_fts_delete"`,
	`DROP TABLE IF EXISTS "events_fts"`,
}

func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.SQLite {
			return nil
		}
		return execAll(ctx, db, "search fts migration", searchFTSUp...)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.SQLite {
			return nil
		}
		for _, stmt := range searchFTSDown {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("search fts rollback: %w\n%s", err, stmt)
			}
		}
		return nil
	})
}
