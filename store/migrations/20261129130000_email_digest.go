package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The weekly digest (issue 44): a member's choice, per app, of one mail a
// week with the new posts and events instead of a mail for each post.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "email digest migration", `ALTER TABLE "notification_preferences" ADD COLUMN "email_digest" BOOLEAN NOT NULL DEFAULT false`)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `ALTER TABLE "notification_preferences" DROP COLUMN "email_digest"`)
		return err
	})
}
