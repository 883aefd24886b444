package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Indexes to find the apps whose pages show a user, their name and picture
// beside their posts, replies and event attendance: a profile change
// renews those apps' pages and no other's (store.InvalidateUser).
var userAppsIndexes = [][2]string{
	{"messages_sender_id_app_id_idx", `CREATE INDEX "messages_sender_id_app_id_idx" ON "messages" ("sender_id", "app_id")`},
	{"attendees_user_id_app_id_idx", `CREATE INDEX "attendees_user_id_app_id_idx" ON "attendees" ("user_id", "app_id")`},
}

func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		for _, ix := range userAppsIndexes {
			if _, err := db.ExecContext(ctx, ix[1]); err != nil {
				return fmt.Errorf("user apps indexes: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		for _, ix := range userAppsIndexes {
			if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS "`+ix[0]+`"`); err != nil {
				return err
			}
		}
		return nil
	})
}
