package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// One audit log (issue 26): the studio's app_audit (roles, removals,
// settings, plans, suspension) moves into moderation_log, which already
// held every moderation action, so the studio shows one log of who did
// what to which target, when and why. A line about a member keeps them as
// its target; the studio's detail becomes the line's reason.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "one audit log",
			`INSERT INTO "moderation_log" ("id", "app_id", "actor_id", "action", "target_type", "target_id", "target_user_id", "reason", "created_at")
			SELECT "id", "app_id", "actor_id", "action", CASE WHEN "target_id" <> '' THEN 'MEMBER' ELSE '' END, "target_id", "target_id", "detail", "created_at"
			FROM "app_audit" WHERE "app_id" IN (SELECT "id" FROM "apps")`,
			`DROP TABLE "app_audit"`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `CREATE TABLE "app_audit" (
			"id" VARCHAR NOT NULL PRIMARY KEY,
			"app_id" VARCHAR NOT NULL,
			"actor_id" VARCHAR NOT NULL DEFAULT '',
			"action" VARCHAR NOT NULL,
			"target_id" VARCHAR NOT NULL DEFAULT '',
			"detail" VARCHAR NOT NULL DEFAULT '',
			"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
		)`)
		return err
	})
}
