package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Creator payouts (issue 24): each app's Stripe Connect account (an Express
// account the creator onboards through Account Links) with the state the
// account.updated webhooks last reported, and the operator's per-app
// platform fee (basis points; NULL takes PLATFORM_FEE_PERCENT).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "payout_accounts" (
				"app_id" VARCHAR NOT NULL,
				"stripe_account_id" VARCHAR NOT NULL DEFAULT '',
				"charges_enabled" BOOLEAN NOT NULL DEFAULT FALSE,
				"payouts_enabled" BOOLEAN NOT NULL DEFAULT FALSE,
				"details_submitted" BOOLEAN NOT NULL DEFAULT FALSE,
				"currently_due" VARCHAR NOT NULL DEFAULT '',
				"disabled_reason" VARCHAR NOT NULL DEFAULT '',
				"fee_bp" BIGINT,
				"state_at" BIGINT NOT NULL DEFAULT 0,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("app_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "payout_accounts_stripe_account_id_idx" ON "payout_accounts" ("stripe_account_id")`,
			`CREATE INDEX "wallet_transfers_order_id_idx" ON "wallet_transfers" ("order_id")`,
		}
		return execAll(ctx, db, "payouts migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{`DROP INDEX IF EXISTS "wallet_transfers_order_id_idx"`, `DROP TABLE "payout_accounts"`} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
