package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The creator studio writes every change it makes (roles, removals, settings,
// plans, suspension) to an audit log the studio shows: who, what, when.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "studio migration",
			`CREATE TABLE "app_audit" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"actor_id" VARCHAR NOT NULL DEFAULT '',
				"action" VARCHAR NOT NULL,
				"target_id" VARCHAR NOT NULL DEFAULT '',
				"detail" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
			)`,
			`CREATE INDEX "app_audit_app_created" ON "app_audit" ("app_id", "created_at")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "app_audit"`)
		return err
	})
}
