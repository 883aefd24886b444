package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Operator's tools (issue 21, item 7): an operator can disable an account
// (users.disabled_at), and push deliveries that failed are recorded
// (push_failures) for `marquee jobs failed`.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "operator tools",
			`ALTER TABLE "users" ADD COLUMN "disabled_at" TIMESTAMPTZ`,
			`CREATE TABLE "push_failures" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"subscription_id" VARCHAR NOT NULL,
				"notification_id" VARCHAR NOT NULL,
				"endpoint_host" VARCHAR NOT NULL DEFAULT '',
				"status" INTEGER NOT NULL DEFAULT 0,
				"error" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id")
			)`,
			`CREATE INDEX "push_failures_created_at_idx" ON "push_failures" ("created_at")`,
			`CREATE INDEX "notifications_created_at_idx" ON "notifications" ("created_at")`,
			`CREATE INDEX "sessions_expires_at_idx" ON "sessions" ("expires_at")`,
		)
	}, nil)
}
