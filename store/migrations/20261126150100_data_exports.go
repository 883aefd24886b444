package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// A member's data export (issue 25): asked for on the account page,
// prepared by a river job into this row, mailed as a link (the token is
// stored hashed) and kept for a week.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "data_exports" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"user_id" VARCHAR NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
				"token_hash" VARCHAR NOT NULL UNIQUE,
				"app_id" VARCHAR,
				"content" TEXT,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"ready_at" TIMESTAMPTZ,
				"expires_at" TIMESTAMPTZ NOT NULL
			)`,
			`CREATE INDEX "data_exports_user_idx" ON "data_exports" ("user_id")`,
		}
		return execAll(ctx, db, "data exports migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "data_exports"`)
		return err
	})
}
