package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Resumable uploads of a DIGITAL item's files (issue 27, item 3): the
// upload in progress and each part the storage holds, so an interrupted
// upload resumes with the parts still missing.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "item_uploads" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"mime_type" VARCHAR NOT NULL,
				"size" BIGINT NOT NULL,
				"part_size" BIGINT NOT NULL,
				"path" VARCHAR NOT NULL UNIQUE,
				"storage_upload_id" VARCHAR NOT NULL,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "item_uploads_item" ON "item_uploads" ("store_item_id")`,
			`CREATE TABLE "item_upload_parts" (
				"upload_id" VARCHAR NOT NULL,
				"number" INTEGER NOT NULL,
				"size" BIGINT NOT NULL,
				"etag" VARCHAR NOT NULL,
				PRIMARY KEY ("upload_id", "number"),
				FOREIGN KEY (upload_id) REFERENCES item_uploads (id) ON DELETE CASCADE
			)`,
		}
		return execAll(ctx, db, "item uploads", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{`DROP TABLE "item_upload_parts"`, `DROP TABLE "item_uploads"`} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
