package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Digital deliveries (issue 27): the files a DIGITAL item delivers, kept
// private (never item media), and how often each buyer's entitlement was
// used.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "item_files" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"mime_type" VARCHAR NOT NULL,
				"size" BIGINT NOT NULL,
				"path" VARCHAR NOT NULL UNIQUE,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "item_files_item" ON "item_files" ("store_item_id")`,
			`ALTER TABLE "entitlements" ADD COLUMN "downloads" BIGINT NOT NULL DEFAULT 0`,
		}
		return execAll(ctx, db, "item files", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{`DROP TABLE "item_files"`, `ALTER TABLE "entitlements" DROP COLUMN "downloads"`} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
