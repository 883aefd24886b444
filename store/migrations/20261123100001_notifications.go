package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Notifications carry a kind (so members can mute by kind) and a link (so a
// click opens what it is about); preferences are per member and app, because
// notification overload is the first complaint and "quiet this one app" is
// the usual fix. source names what caused an audience notice, so a fan-out
// job that runs twice writes once. muted_kinds is a comma-wrapped list (",REPLY,NEW_POST,") so
// one LIKE filters it on both databases. The partial index serves the unread
// list and the bell's count.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "notifications" ADD COLUMN "kind" VARCHAR NOT NULL DEFAULT 'SYSTEM'`,
			`ALTER TABLE "notifications" ADD COLUMN "link" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "notifications" ADD COLUMN "source" VARCHAR NOT NULL DEFAULT ''`,
			`CREATE INDEX "notifications_source_idx" ON "notifications" ("app_id", "source")`,
			`CREATE INDEX "notifications_unread_idx" ON "notifications" ("app_id", "user_id", "created_at") WHERE read_at IS NULL`,
			`CREATE TABLE "notification_preferences" (
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"muted_all" BOOLEAN NOT NULL DEFAULT FALSE,
				"muted_kinds" VARCHAR NOT NULL DEFAULT '',
				"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("app_id", "user_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
			)`,
		}
		return execAll(ctx, db, "notifications migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{
			`DROP TABLE IF EXISTS "notification_preferences"`,
			`DROP INDEX IF EXISTS "notifications_unread_idx"`,
			`DROP INDEX IF EXISTS "notifications_source_idx"`,
			`ALTER TABLE "notifications" DROP COLUMN "source"`,
			`ALTER TABLE "notifications" DROP COLUMN "link"`,
			`ALTER TABLE "notifications" DROP COLUMN "kind"`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
