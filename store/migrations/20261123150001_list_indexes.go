package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Indexes for the lists that grow with an app (issue #14: 100,000 posts,
// 10,000 store items, 1,000 events in one app), matching each list's WHERE
// and ORDER BY so a page reads about as many index entries as it shows:
//
//   - the feed pages by keyset on (created_at, id) over top-level posts of
//     one type, and counts them index-only;
//   - the store grid lists live items newest first, optionally of one type or
//     in a price range; tags are looked up from the tag side too;
//   - the events list filters on type and on the date window (end_date from,
//     start_date to).
//
// Partial indexes carry the predicate every query of theirs has (top-level,
// not deleted), so they stay small and the planner can prove they apply.
// On PostgreSQL the substring search of the store grid and the events list
// (LOWER(col) LIKE '%q%') is served by trigram indexes; pg_trgm is a trusted
// extension, so the database owner may create it. SQLite keeps scanning one
// app's rows for it, which is cheap at embedded sizes.
var listIndexes = []string{
	`CREATE INDEX "messages_feed_idx" ON "messages" ("community_id", "type", "created_at", "id") WHERE parent_message_id IS NULL`,
	`CREATE INDEX "store_items_live_created_idx" ON "store_items" ("store_id", "created_at", "id") WHERE deleted_at IS NULL`,
	`CREATE INDEX "store_items_live_type_created_idx" ON "store_items" ("store_id", "type", "created_at", "id") WHERE deleted_at IS NULL`,
	`CREATE INDEX "store_items_live_price_idx" ON "store_items" ("store_id", "price") WHERE deleted_at IS NULL`,
	`CREATE INDEX "store_item_tags_tag_id_idx" ON "store_item_tags" ("tag_id")`,
	`CREATE INDEX "message_tags_tag_id_idx" ON "message_tags" ("tag_id")`,
	`CREATE INDEX "events_app_id_end_date_idx" ON "events" ("app_id", "end_date")`,
	`CREATE INDEX "events_app_id_type_start_date_idx" ON "events" ("app_id", "type", "start_date")`,
}

var listIndexesPG = []string{
	`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
	`CREATE INDEX "store_items_name_trgm_idx" ON "store_items" USING gin (lower("name") gin_trgm_ops)`,
	`CREATE INDEX "store_items_description_trgm_idx" ON "store_items" USING gin (lower("description") gin_trgm_ops)`,
	`CREATE INDEX "events_name_trgm_idx" ON "events" USING gin (lower("name") gin_trgm_ops)`,
	`CREATE INDEX "events_description_trgm_idx" ON "events" USING gin (lower("description") gin_trgm_ops)`,
	`CREATE INDEX "events_location_trgm_idx" ON "events" USING gin (lower("location") gin_trgm_ops)`,
}

var listIndexNames = []string{
	"messages_feed_idx", "store_items_live_created_idx", "store_items_live_type_created_idx", "store_items_live_price_idx",
	"store_item_tags_tag_id_idx", "message_tags_tag_id_idx", "events_app_id_end_date_idx", "events_app_id_type_start_date_idx",
	"store_items_name_trgm_idx", "store_items_description_trgm_idx", "events_name_trgm_idx", "events_description_trgm_idx",
	"events_location_trgm_idx",
}

func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := listIndexes
		if db.Dialect().Name() == dialect.PG {
			stmts = append(append([]string(nil), listIndexes...), listIndexesPG...)
		}
		return execAll(ctx, db, "list indexes migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, name := range listIndexNames {
			if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS "`+name+`"`); err != nil {
				return err
			}
		}
		return nil
	})
}
