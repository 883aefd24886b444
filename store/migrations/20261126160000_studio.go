package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The creator studio writes every change it makes (roles, removals, settings,
// plans, suspension) to an audit log the studio shows: who, what, when.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts := "TIMESTAMPTZ"
		if db.Dialect().Name() == dialect.SQLite {
			ts = "TIMESTAMP"
		}
		for _, stmt := range []string{
			`CREATE TABLE "app_audit" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"actor_id" VARCHAR NOT NULL DEFAULT '',
				"action" VARCHAR NOT NULL,
				"target_id" VARCHAR NOT NULL DEFAULT '',
				"detail" VARCHAR NOT NULL DEFAULT '',
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp
			)`,
			`CREATE INDEX "app_audit_app_created" ON "app_audit" ("app_id", "created_at")`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("studio migration: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "app_audit"`)
		return err
	})
}
