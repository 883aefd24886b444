package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Resumable uploads of a DIGITAL item's files (issue 27, item 3): the
// upload in progress and each part the storage holds, so an interrupted
// upload resumes with the parts still missing.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts, integer := "TIMESTAMPTZ", "BIGINT"
		if db.Dialect().Name() == dialect.SQLite {
			ts, integer = "TIMESTAMP", "INTEGER"
		}
		stmts := []string{
			`CREATE TABLE "item_uploads" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"mime_type" VARCHAR NOT NULL,
				"size" ` + integer + ` NOT NULL,
				"part_size" ` + integer + ` NOT NULL,
				"path" VARCHAR NOT NULL UNIQUE,
				"storage_upload_id" VARCHAR NOT NULL,
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "item_uploads_item" ON "item_uploads" ("store_item_id")`,
			`CREATE TABLE "item_upload_parts" (
				"upload_id" VARCHAR NOT NULL,
				"number" INTEGER NOT NULL,
				"size" ` + integer + ` NOT NULL,
				"etag" VARCHAR NOT NULL,
				PRIMARY KEY ("upload_id", "number"),
				FOREIGN KEY (upload_id) REFERENCES item_uploads (id) ON DELETE CASCADE
			)`,
		}
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("item uploads: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{`DROP TABLE "item_upload_parts"`, `DROP TABLE "item_uploads"`} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
