package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// PayPal to the creator (issue 24): each app may name the PayPal account
// its orders pay (merchant id or e-mail), and the platform fee a PayPal
// order to a creator could not carry is recorded as owed.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "paypal payees migration",
			`CREATE TABLE "app_paypal_payees" (
				"app_id" VARCHAR NOT NULL PRIMARY KEY,
				"merchant_id" VARCHAR NOT NULL DEFAULT '',
				"email" VARCHAR NOT NULL DEFAULT '',
				"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
			)`,
			`CREATE TABLE "platform_fees_owed" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"order_id" VARCHAR NOT NULL,
				"provider" VARCHAR NOT NULL,
				"payment_ref" VARCHAR NOT NULL,
				"payee" VARCHAR NOT NULL DEFAULT '',
				"gross" BIGINT NOT NULL,
				"amount" BIGINT NOT NULL,
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				CONSTRAINT "platform_fees_owed_payment" UNIQUE ("provider", "payment_ref")
			)`,
			`CREATE INDEX "platform_fees_owed_app" ON "platform_fees_owed" ("app_id", "created_at")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, t := range []string{"platform_fees_owed", "app_paypal_payees"} {
			if _, err := db.ExecContext(ctx, `DROP TABLE "`+t+`"`); err != nil {
				return err
			}
		}
		return nil
	})
}
