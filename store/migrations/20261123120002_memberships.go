package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Paid memberships and donations.
//
//   - subscriptions become one row per member and app (unique), so buying a
//     plan twice, a renewal and a webhook all update the same row with
//     conditional updates instead of racing to insert. The row remembers what
//     renewing needs: the amount and currency charged, the provider and its
//     reference (a Stripe subscription id), the order that bought it, whether
//     the member cancelled at period end, and the end of a grace period after
//     a failed renewal.
//   - donations remember how they were paid (method and the provider's or the
//     ledger's reference), and are indexed for the creator's list and a
//     donor's paid total.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "subscriptions" ADD COLUMN "amount" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "subscriptions" ADD COLUMN "currency" VARCHAR NOT NULL DEFAULT 'USD'`,
			`ALTER TABLE "subscriptions" ADD COLUMN "provider" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "subscriptions" ADD COLUMN "provider_ref" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "subscriptions" ADD COLUMN "order_id" VARCHAR`,
			`ALTER TABLE "subscriptions" ADD COLUMN "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false`,
			`ALTER TABLE "subscriptions" ADD COLUMN "grace_until" TIMESTAMPTZ`,
			`ALTER TABLE "subscriptions" ADD COLUMN "ended_at" TIMESTAMPTZ`,
			`ALTER TABLE "subscriptions" ADD COLUMN "renewals" BIGINT NOT NULL DEFAULT 0`,
			`DROP INDEX IF EXISTS "subscriptions_app_id_user_id_idx"`,
			`CREATE UNIQUE INDEX "subscriptions_app_id_user_id_key" ON "subscriptions" ("app_id", "user_id")`,
			`CREATE INDEX "subscriptions_status_current_period_end_idx" ON "subscriptions" ("status", "current_period_end")`,
			`CREATE INDEX "subscriptions_provider_ref_idx" ON "subscriptions" ("provider_ref")`,
			`ALTER TABLE "donations" ADD COLUMN "payment_method" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "donations" ADD COLUMN "payment_ref" VARCHAR NOT NULL DEFAULT ''`,
			`CREATE INDEX "donations_app_id_status_created_at_idx" ON "donations" ("app_id", "status", "created_at")`,
			`CREATE INDEX "donations_app_id_user_id_status_idx" ON "donations" ("app_id", "user_id", "status")`,
		}
		return execAll(ctx, db, "memberships migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{
			`DROP INDEX IF EXISTS "donations_app_id_user_id_status_idx"`,
			`DROP INDEX IF EXISTS "donations_app_id_status_created_at_idx"`,
			`ALTER TABLE "donations" DROP COLUMN "payment_ref"`,
			`ALTER TABLE "donations" DROP COLUMN "payment_method"`,
			`DROP INDEX IF EXISTS "subscriptions_provider_ref_idx"`,
			`DROP INDEX IF EXISTS "subscriptions_status_current_period_end_idx"`,
			`DROP INDEX IF EXISTS "subscriptions_app_id_user_id_key"`,
			`CREATE INDEX "subscriptions_app_id_user_id_idx" ON "subscriptions" ("app_id", "user_id")`,
			`ALTER TABLE "subscriptions" DROP COLUMN "renewals"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "ended_at"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "grace_until"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "cancel_at_period_end"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "order_id"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "provider_ref"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "provider"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "currency"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "amount"`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
