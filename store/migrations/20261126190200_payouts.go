package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Creator payouts (issue 24): each app's Stripe Connect account (an Express
// account the creator onboards through Account Links) with the state the
// account.updated webhooks last reported, and the operator's per-app
// platform fee (basis points; NULL takes PLATFORM_FEE_PERCENT).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts, integer, boolean, f := "TIMESTAMPTZ", "BIGINT", "BOOLEAN", "FALSE"
		if db.Dialect().Name() == dialect.SQLite {
			ts, integer = "TIMESTAMP", "INTEGER"
		}
		stmts := []string{
			`CREATE TABLE "payout_accounts" (
				"app_id" VARCHAR NOT NULL,
				"stripe_account_id" VARCHAR NOT NULL DEFAULT '',
				"charges_enabled" ` + boolean + ` NOT NULL DEFAULT ` + f + `,
				"payouts_enabled" ` + boolean + ` NOT NULL DEFAULT ` + f + `,
				"details_submitted" ` + boolean + ` NOT NULL DEFAULT ` + f + `,
				"currently_due" VARCHAR NOT NULL DEFAULT '',
				"disabled_reason" VARCHAR NOT NULL DEFAULT '',
				"fee_bp" ` + integer + `,
				"state_at" ` + integer + ` NOT NULL DEFAULT 0,
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				"updated_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("app_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "payout_accounts_stripe_account_id_idx" ON "payout_accounts" ("stripe_account_id")`,
			`CREATE INDEX "wallet_transfers_order_id_idx" ON "wallet_transfers" ("order_id")`,
		}
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, stmt := range stmts {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("payouts migration: %w\n%s", err, stmt)
				}
			}
			return nil
		})
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{`DROP INDEX IF EXISTS "wallet_transfers_order_id_idx"`, `DROP TABLE "payout_accounts"`} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
