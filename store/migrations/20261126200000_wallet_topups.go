package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Wallet top-ups (issue 24): a member adds money to their wallet by card or
// PayPal. A top-up is a payment like an order's: PENDING until the provider
// says the money arrived, then PAID once, with the wallet credit written in
// the same transaction.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "wallet top-ups migration",
			`CREATE TABLE "wallet_topups" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"amount" BIGINT NOT NULL,
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"status" VARCHAR NOT NULL DEFAULT 'PENDING',
				"payment_method" VARCHAR NOT NULL DEFAULT '',
				"payment_ref" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"paid_at" TIMESTAMPTZ
			)`,
			`CREATE INDEX "wallet_topups_app_user" ON "wallet_topups" ("app_id", "user_id", "created_at")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "wallet_topups"`)
		return err
	})
}
