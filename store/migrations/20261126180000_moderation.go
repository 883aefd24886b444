package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Moderation (issue 26): members report content and members once per
// target; content can be hidden (by reports reaching the app's threshold,
// by a moderator, or held for approval); apps ban or silence members, by
// account and by normalised e-mail; every moderation and role action is
// written to an audit log.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "messages" ADD COLUMN "hidden" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "events" ADD COLUMN "hidden" VARCHAR NOT NULL DEFAULT ''`,
			`CREATE TABLE "reports" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"reporter_id" VARCHAR NOT NULL,
				"target_type" VARCHAR NOT NULL,
				"target_id" VARCHAR NOT NULL,
				"target_user_id" VARCHAR NOT NULL,
				"reason" VARCHAR NOT NULL,
				"text" VARCHAR NOT NULL DEFAULT '',
				"status" VARCHAR NOT NULL DEFAULT 'OPEN',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"resolved_at" TIMESTAMPTZ,
				PRIMARY KEY ("id"),
				CONSTRAINT "report_once" UNIQUE ("app_id", "reporter_id", "target_type", "target_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (reporter_id) REFERENCES users (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "reports_app_id_status_idx" ON "reports" ("app_id", "status", "target_type", "target_id")`,
			`CREATE TABLE "bans" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"email" VARCHAR NOT NULL DEFAULT '',
				"kind" VARCHAR NOT NULL,
				"reason" VARCHAR NOT NULL DEFAULT '',
				"ends_at" TIMESTAMPTZ,
				"created_by" VARCHAR NOT NULL,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "ban_once" UNIQUE ("app_id", "user_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "bans_app_id_email_idx" ON "bans" ("app_id", "email")`,
			`CREATE TABLE "moderation_log" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"actor_id" VARCHAR NOT NULL DEFAULT '',
				"action" VARCHAR NOT NULL,
				"target_type" VARCHAR NOT NULL DEFAULT '',
				"target_id" VARCHAR NOT NULL DEFAULT '',
				"target_user_id" VARCHAR NOT NULL DEFAULT '',
				"reason" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "moderation_log_app_id_created_at_idx" ON "moderation_log" ("app_id", "created_at")`,
		}
		return execAll(ctx, db, "moderation migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{`DROP TABLE "moderation_log"`, `DROP TABLE "bans"`, `DROP TABLE "reports"`,
			`ALTER TABLE "events" DROP COLUMN "hidden"`, `ALTER TABLE "messages" DROP COLUMN "hidden"`} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
