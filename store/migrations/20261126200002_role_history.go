package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The role history (issue 23): one row for every change of a member's role
// in an app (a join, a role change, a leave, removal or ban), so analytics
// can count members by the role they held at any time. The memberships of
// today are backfilled as joins at their created_at.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "role history migration",
			`CREATE TABLE "role_changes" (
					"id" VARCHAR NOT NULL PRIMARY KEY,
					"app_id" VARCHAR NOT NULL,
					"user_id" VARCHAR NOT NULL,
					"role" VARCHAR NOT NULL DEFAULT '',
					"previous" VARCHAR NOT NULL DEFAULT '',
					"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
					FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
				)`,
			`CREATE INDEX "role_changes_app_time" ON "role_changes" ("app_id", "created_at")`,
			`CREATE INDEX "role_changes_app_user" ON "role_changes" ("app_id", "user_id", "created_at")`,
			`INSERT INTO "role_changes" ("id", "app_id", "user_id", "role", "previous", "created_at")
					SELECT "id", "app_id", "user_id", "role", '', "created_at" FROM "memberships"`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "role_changes"`)
		return err
	})
}
