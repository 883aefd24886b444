package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Tiers (issue 40 item 1): an app's membership plans become ordered tiers.
// subscription_plans gains a rank (1 is the first tier above following), a
// state (DRAFT, ON_SALE, ARCHIVED), a monthly and a yearly price (either may
// be missing, not both once on sale) and free-trial days. billing_cycle stays
// the tier's default cycle, whose price is the store item's price. A
// subscription records the cycle its member chose (empty: the plan's).
// Existing plans keep their price in their cycle's column; an archived item
// makes an ARCHIVED tier; ranks follow the old cheapest-first order.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "subscription_plans" ADD COLUMN "tier_rank" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "subscription_plans" ADD COLUMN "state" VARCHAR NOT NULL DEFAULT 'ON_SALE'`,
			`ALTER TABLE "subscription_plans" ADD COLUMN "monthly_price" BIGINT`,
			`ALTER TABLE "subscription_plans" ADD COLUMN "yearly_price" BIGINT`,
			`ALTER TABLE "subscription_plans" ADD COLUMN "trial_days" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "subscriptions" ADD COLUMN "cycle" VARCHAR NOT NULL DEFAULT ''`,
			`UPDATE "subscription_plans" SET "monthly_price" = (SELECT i.price FROM store_items AS i WHERE i.id = subscription_plans.store_item_id)
				WHERE "billing_cycle" = 'MONTHLY'`,
			`UPDATE "subscription_plans" SET "yearly_price" = (SELECT i.price FROM store_items AS i WHERE i.id = subscription_plans.store_item_id)
				WHERE "billing_cycle" = 'YEARLY'`,
			`UPDATE "subscription_plans" SET "state" = 'ARCHIVED'
				WHERE EXISTS (SELECT 1 FROM store_items AS i WHERE i.id = subscription_plans.store_item_id AND i.deleted_at IS NOT NULL)`,
			`UPDATE "subscription_plans" SET "state" = 'DRAFT' WHERE "billing_cycle" NOT IN ('MONTHLY', 'YEARLY') AND "state" = 'ON_SALE'`,
			`UPDATE "subscription_plans" SET "tier_rank" = 1 + (SELECT COUNT(*) FROM subscription_plans AS o
				JOIN store_items AS oi ON oi.id = o.store_item_id, store_items AS si
				WHERE si.id = subscription_plans.store_item_id AND o.app_id = subscription_plans.app_id
				AND (oi.price < si.price OR (oi.price = si.price AND o.id < subscription_plans.id)))`,
			`CREATE INDEX "subscription_plans_app_rank_idx" ON "subscription_plans" ("app_id", "tier_rank")`,
		}
		return execAll(ctx, db, "tiers migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`DROP INDEX "subscription_plans_app_rank_idx"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "cycle"`,
			`ALTER TABLE "subscription_plans" DROP COLUMN "trial_days"`,
			`ALTER TABLE "subscription_plans" DROP COLUMN "yearly_price"`,
			`ALTER TABLE "subscription_plans" DROP COLUMN "monthly_price"`,
			`ALTER TABLE "subscription_plans" DROP COLUMN "state"`,
			`ALTER TABLE "subscription_plans" DROP COLUMN "tier_rank"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
