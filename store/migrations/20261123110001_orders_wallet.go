package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Checkout and the member wallet.
//
//   - orders.cart_id is unique: one order per cart, so a double submit or a
//     retry finds the order the first request made instead of making a second.
//   - order_items remember whether stock was taken from the item and the
//     variant, so a cancel or expiry gives back exactly what was taken even if
//     the creator has since started or stopped tracking stock.
//   - entitlements are what a paid order grants (a DIGITAL item's download).
//   - wallet_accounts / wallet_transfers / wallet_entries are a double-entry
//     ledger: every transfer has two entries that sum to zero, a member's
//     balance may never go below zero (CHECK, plus conditional updates), and a
//     transfer's reference is unique per app so a repeated call moves money
//     once.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "orders" ADD COLUMN "cart_id" VARCHAR`,
			`ALTER TABLE "orders" ADD COLUMN "paid_at" TIMESTAMPTZ`,
			`CREATE UNIQUE INDEX "orders_cart_id_idx" ON "orders" ("cart_id")`,
			`CREATE INDEX "orders_app_id_status_created_at_idx" ON "orders" ("app_id", "status", "created_at")`,
			`ALTER TABLE "order_items" ADD COLUMN "item_stock_taken" BOOLEAN NOT NULL DEFAULT false`,
			`ALTER TABLE "order_items" ADD COLUMN "variant_stock_taken" BOOLEAN NOT NULL DEFAULT false`,
			`CREATE TABLE "entitlements" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"order_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"kind" VARCHAR NOT NULL,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"revoked_at" TIMESTAMPTZ,
				PRIMARY KEY ("id"),
				CONSTRAINT "entitlement_order_item" UNIQUE ("order_id", "store_item_id", "kind"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
				FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id)
			)`,
			`CREATE INDEX "entitlements_app_id_user_id_idx" ON "entitlements" ("app_id", "user_id")`,
			`CREATE TABLE "wallet_accounts" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"kind" VARCHAR NOT NULL,
				"owner_id" VARCHAR NOT NULL DEFAULT '',
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"balance" BIGINT NOT NULL DEFAULT 0,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "wallet_account_owner" UNIQUE ("app_id", "kind", "owner_id", "currency"),
				CONSTRAINT "wallet_balance_not_negative" CHECK (balance >= 0 OR kind = 'EXTERNAL'),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE TABLE "wallet_transfers" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"reference" VARCHAR NOT NULL,
				"kind" VARCHAR NOT NULL,
				"amount" BIGINT NOT NULL,
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"order_id" VARCHAR,
				"memo" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "wallet_transfer_reference" UNIQUE ("app_id", "reference"),
				CONSTRAINT "wallet_transfer_positive" CHECK (amount > 0),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE TABLE "wallet_entries" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"transfer_id" VARCHAR NOT NULL,
				"account_id" VARCHAR NOT NULL,
				"amount" BIGINT NOT NULL,
				"balance_after" BIGINT NOT NULL,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (transfer_id) REFERENCES wallet_transfers (id) ON DELETE CASCADE,
				FOREIGN KEY (account_id) REFERENCES wallet_accounts (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "wallet_entries_account_id_created_at_idx" ON "wallet_entries" ("account_id", "created_at")`,
			`CREATE INDEX "wallet_entries_transfer_id_idx" ON "wallet_entries" ("transfer_id")`,
		}
		return execAll(ctx, db, "orders and wallet migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{
			`DROP TABLE IF EXISTS "wallet_entries"`, `DROP TABLE IF EXISTS "wallet_transfers"`,
			`DROP TABLE IF EXISTS "wallet_accounts"`, `DROP TABLE IF EXISTS "entitlements"`,
			`DROP INDEX IF EXISTS "orders_app_id_status_created_at_idx"`, `DROP INDEX IF EXISTS "orders_cart_id_idx"`,
			`ALTER TABLE "order_items" DROP COLUMN "variant_stock_taken"`,
			`ALTER TABLE "order_items" DROP COLUMN "item_stock_taken"`,
			`ALTER TABLE "orders" DROP COLUMN "paid_at"`, `ALTER TABLE "orders" DROP COLUMN "cart_id"`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
