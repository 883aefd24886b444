package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// App exports (issue 43 item 3): a creator's archive of the app's data (a
// zip of CSV and JSON), built by a job and downloaded through a mailed link
// whose token only its hash is kept of. Gone with the app.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "app_exports" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"token_hash" VARCHAR NOT NULL UNIQUE,
				"content" BYTEA,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"ready_at" TIMESTAMPTZ,
				"expires_at" TIMESTAMPTZ NOT NULL,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "app_exports_app_idx" ON "app_exports" ("app_id", "created_at")`,
		}
		return execAll(ctx, db, "app exports migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "app_exports"`)
		return err
	})
}
