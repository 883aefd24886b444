package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Digital deliveries (issue 27): the files a DIGITAL item delivers, kept
// private (never item media), and how often each buyer's entitlement was
// used.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts, integer := "TIMESTAMPTZ", "BIGINT"
		if db.Dialect().Name() == dialect.SQLite {
			ts, integer = "TIMESTAMP", "INTEGER"
		}
		stmts := []string{
			`CREATE TABLE "item_files" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"mime_type" VARCHAR NOT NULL,
				"size" ` + integer + ` NOT NULL,
				"path" VARCHAR NOT NULL UNIQUE,
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "item_files_item" ON "item_files" ("store_item_id")`,
			`ALTER TABLE "entitlements" ADD COLUMN "downloads" ` + integer + ` NOT NULL DEFAULT 0`,
		}
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("item files: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{`DROP TABLE "item_files"`, `ALTER TABLE "entitlements" DROP COLUMN "downloads"`} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
