package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// A member's data export (issue 25): asked for on the account page,
// prepared by a river job into this row, mailed as a link (the token is
// stored hashed) and kept for a week.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts := "TIMESTAMPTZ"
		if db.Dialect().Name() == dialect.SQLite {
			ts = "TIMESTAMP"
		}
		stmts := []string{
			`CREATE TABLE "data_exports" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"user_id" VARCHAR NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
				"token_hash" VARCHAR NOT NULL UNIQUE,
				"app_id" VARCHAR,
				"content" TEXT,
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				"ready_at" ` + ts + `,
				"expires_at" ` + ts + ` NOT NULL
			)`,
			`CREATE INDEX "data_exports_user_idx" ON "data_exports" ("user_id")`,
		}
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("data exports migration: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "data_exports"`)
		return err
	})
}
