package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Trials and offers (issue 40 item 5). A tier's free trial may ask for a
// card (subscription_plans.trial_card_required). A member's trial of an app
// is one trials row, unique per app and member, so a trial is had once per
// member per app however many requests race; the membership it opens
// carries trial_until (while it is a trial) and trial_reminded (the mail
// three days before its end went out). Offers are an app's codes (unique
// per app) for a percentage or an amount off, once, for some months or
// forever, with an expiry and a redemption limit counted in
// offers.redemptions; offer_redemptions holds one row per code and member
// (unique). A membership bought with a code remembers it (offer_id), its
// price without it (list_amount) and how many renewals it still discounts
// (discount_left, -1 for ever).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "subscription_plans" ADD COLUMN "trial_card_required" BOOLEAN NOT NULL DEFAULT false`,
			`ALTER TABLE "subscriptions" ADD COLUMN "trial_until" TIMESTAMPTZ`,
			`ALTER TABLE "subscriptions" ADD COLUMN "trial_reminded" BOOLEAN NOT NULL DEFAULT false`,
			`ALTER TABLE "subscriptions" ADD COLUMN "offer_id" VARCHAR`,
			`ALTER TABLE "subscriptions" ADD COLUMN "list_amount" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "subscriptions" ADD COLUMN "discount_left" BIGINT NOT NULL DEFAULT 0`,
			`CREATE TABLE "trials" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"plan_id" VARCHAR NOT NULL,
				"started_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"ends_at" TIMESTAMPTZ NOT NULL,
				"converted_at" TIMESTAMPTZ,
				"ended_at" TIMESTAMPTZ,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE UNIQUE INDEX "trials_app_user_key" ON "trials" ("app_id", "user_id")`,
			`CREATE TABLE "offers" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"code" VARCHAR NOT NULL,
				"percent_off" BIGINT NOT NULL DEFAULT 0,
				"amount_off" BIGINT NOT NULL DEFAULT 0,
				"duration" VARCHAR NOT NULL DEFAULT 'ONCE',
				"duration_months" BIGINT NOT NULL DEFAULT 0,
				"expires_at" TIMESTAMPTZ,
				"max_redemptions" BIGINT NOT NULL DEFAULT 0,
				"redemptions" BIGINT NOT NULL DEFAULT 0,
				"plan_id" VARCHAR,
				"active" BOOLEAN NOT NULL DEFAULT true,
				"stripe_coupon" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE UNIQUE INDEX "offers_app_code_key" ON "offers" ("app_id", "code")`,
			`CREATE TABLE "offer_redemptions" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"offer_id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"plan_id" VARCHAR NOT NULL,
				"method" VARCHAR NOT NULL DEFAULT '',
				"discount" BIGINT NOT NULL DEFAULT 0,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (offer_id) REFERENCES offers (id) ON DELETE CASCADE,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE UNIQUE INDEX "offer_redemptions_offer_user_key" ON "offer_redemptions" ("offer_id", "user_id")`,
			`CREATE INDEX "offer_redemptions_app_idx" ON "offer_redemptions" ("app_id", "created_at")`,
		}
		return execAll(ctx, db, "trials and offers migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`DROP TABLE "offer_redemptions"`,
			`DROP TABLE "offers"`,
			`DROP TABLE "trials"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "discount_left"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "list_amount"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "offer_id"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "trial_reminded"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "trial_until"`,
			`ALTER TABLE "subscription_plans" DROP COLUMN "trial_card_required"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
