package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// A push subscription remembers the origin it was made on (issue 42 item
// 5): the app's verified domain or the main site, each with its own service
// worker and so its own subscription in the same browser. The push job
// sends to the subscriptions of the app's current origin, and to the
// other's only for a member who has none there. Rows made before are of
// no known origin (the empty string).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "push origin migration", `ALTER TABLE "push_subscriptions" ADD COLUMN "origin" VARCHAR NOT NULL DEFAULT ''`)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `ALTER TABLE "push_subscriptions" DROP COLUMN "origin"`)
		return err
	})
}
