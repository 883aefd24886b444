package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Moving between tiers (issue 40 item 4): a downgrade takes effect at the
// period end, so the membership remembers the tier and price it moves to
// until its next renewal.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "tier changes migration",
			`ALTER TABLE "subscriptions" ADD COLUMN "next_plan_id" VARCHAR`,
			`ALTER TABLE "subscriptions" ADD COLUMN "next_amount" BIGINT`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`ALTER TABLE "subscriptions" DROP COLUMN "next_amount"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "next_plan_id"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
