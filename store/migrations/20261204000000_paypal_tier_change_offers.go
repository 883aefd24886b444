package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Offer codes on a PayPal membership's upgrade (issue 40 item 5): the move
// keeps the code it was asked with (offer_id, empty for none), the upgrade's
// charge without it (list_charge), what the renewals cost while it runs
// (next_charge) and how many renewals it discounts (discount_left, -1 for
// all), so the code is redeemed only once the member approved the move on
// PayPal, and the membership counts the discounted renewals PayPal bills.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "paypal tier change offers migration",
			`ALTER TABLE "paypal_tier_changes" ADD COLUMN "offer_id" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "paypal_tier_changes" ADD COLUMN "list_charge" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "paypal_tier_changes" ADD COLUMN "next_charge" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "paypal_tier_changes" ADD COLUMN "discount_left" BIGINT NOT NULL DEFAULT 0`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, col := range []string{"offer_id", "list_charge", "next_charge", "discount_left"} {
			if _, err := db.ExecContext(ctx, `ALTER TABLE "paypal_tier_changes" DROP COLUMN "`+col+`"`); err != nil {
				return err
			}
		}
		return nil
	})
}
