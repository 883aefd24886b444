package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// PayPal to the creator (issue 24): each app may name the PayPal account
// its orders pay (merchant id or e-mail), and the platform fee a PayPal
// order to a creator could not carry is recorded as owed.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts, big := "TIMESTAMPTZ", "BIGINT"
		if db.Dialect().Name() == dialect.SQLite {
			ts, big = "TIMESTAMP", "INTEGER"
		}
		for _, stmt := range []string{
			`CREATE TABLE "app_paypal_payees" (
				"app_id" VARCHAR NOT NULL PRIMARY KEY,
				"merchant_id" VARCHAR NOT NULL DEFAULT '',
				"email" VARCHAR NOT NULL DEFAULT '',
				"updated_at" ` + ts + ` NOT NULL DEFAULT current_timestamp
			)`,
			`CREATE TABLE "platform_fees_owed" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"order_id" VARCHAR NOT NULL,
				"provider" VARCHAR NOT NULL,
				"payment_ref" VARCHAR NOT NULL,
				"payee" VARCHAR NOT NULL DEFAULT '',
				"gross" ` + big + ` NOT NULL,
				"amount" ` + big + ` NOT NULL,
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				CONSTRAINT "platform_fees_owed_payment" UNIQUE ("provider", "payment_ref")
			)`,
			`CREATE INDEX "platform_fees_owed_app" ON "platform_fees_owed" ("app_id", "created_at")`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("paypal payees migration: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		for _, t := range []string{"platform_fees_owed", "app_paypal_payees"} {
			if _, err := db.ExecContext(ctx, `DROP TABLE "`+t+`"`); err != nil {
				return err
			}
		}
		return nil
	})
}
