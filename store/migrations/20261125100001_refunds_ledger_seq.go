package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Partial refunds and the wallet ledger's order:
//   - orders.refunded_amount is the money given back so far (a partial
//     refund leaves the order's status; one reaching the total makes it
//     REFUNDED);
//   - wallet_accounts.entry_count numbers each account's entries, and
//     wallet_entries.seq is that number, so a wallet's history lists
//     movements in the order they were booked even when two share a
//     timestamp. Existing entries are numbered by (created_at, id).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "refunds and ledger sequence migration",
			`ALTER TABLE "orders" ADD COLUMN "refunded_amount" BIGINT NOT NULL DEFAULT 0`,
			`UPDATE "orders" SET "refunded_amount" = "total" WHERE "status" = 'REFUNDED'`,
			`ALTER TABLE "wallet_accounts" ADD COLUMN "entry_count" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "wallet_entries" ADD COLUMN "seq" BIGINT NOT NULL DEFAULT 0`,
			`UPDATE "wallet_entries" SET "seq" = (SELECT COUNT(*) FROM "wallet_entries" AS e2
					WHERE e2.account_id = wallet_entries.account_id
					AND (e2.created_at < wallet_entries.created_at OR (e2.created_at = wallet_entries.created_at AND e2.id <= wallet_entries.id)))`,
			`UPDATE "wallet_accounts" SET "entry_count" = (SELECT COUNT(*) FROM "wallet_entries" AS e WHERE e.account_id = wallet_accounts.id)`,
			`CREATE INDEX "wallet_entries_account_id_seq_idx" ON "wallet_entries" ("account_id", "seq")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{
			`DROP INDEX IF EXISTS "wallet_entries_account_id_seq_idx"`,
			`ALTER TABLE "wallet_entries" DROP COLUMN "seq"`,
			`ALTER TABLE "wallet_accounts" DROP COLUMN "entry_count"`,
			`ALTER TABLE "orders" DROP COLUMN "refunded_amount"`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
