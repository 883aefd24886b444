package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Moving a PayPal membership between tiers (issue 40 item 4): PayPal's
// revise needs the member's approval on PayPal, and an upgrade's prorated
// difference is a one-off PayPal order, so each move is kept from the
// request to its end: PENDING (revised, waiting for the approval), REVISED
// (PayPal bills the new plan; an upgrade's difference is being paid), DONE.
// "key" names the move (membership, tiers, period, and how many moves it
// made before), so any number of identical requests make one.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "paypal tier changes migration",
			`CREATE TABLE "paypal_tier_changes" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"key" VARCHAR NOT NULL UNIQUE,
				"subscription_id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"provider_ref" VARCHAR NOT NULL,
				"direction" VARCHAR NOT NULL,
				"from_plan_id" VARCHAR NOT NULL,
				"to_plan_id" VARCHAR NOT NULL,
				"cycle" VARCHAR NOT NULL,
				"price" BIGINT NOT NULL,
				"charge" BIGINT NOT NULL,
				"currency" VARCHAR NOT NULL,
				"period_end" TIMESTAMPTZ NOT NULL,
				"paypal_plan_id" VARCHAR NOT NULL,
				"approval_url" VARCHAR NOT NULL DEFAULT '',
				"charge_ref" VARCHAR NOT NULL DEFAULT '',
				"status" VARCHAR NOT NULL,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
			)`,
			`CREATE INDEX "paypal_tier_changes_ref_idx" ON "paypal_tier_changes" ("provider_ref", "status")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "paypal_tier_changes"`)
		return err
	})
}
