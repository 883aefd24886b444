package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The store deletes items softly: cart_items and order_items point at
// store_items, and a hard delete would cascade away what members put in
// their carts (carts flag a deleted item instead of dropping it). The partial
// unique index makes "one ACTIVE cart per member and store" a database rule,
// so two concurrent first adds cannot create two carts.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "store_items" ADD COLUMN "deleted_at" TIMESTAMPTZ`,
			`CREATE UNIQUE INDEX "carts_one_active_idx" ON "carts" ("store_id", "user_id") WHERE status = 'ACTIVE'`,
		}
		return execAll(ctx, db, "store cart migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS "carts_one_active_idx"`); err != nil {
			return err
		}
		_, err := db.ExecContext(ctx, `ALTER TABLE "store_items" DROP COLUMN "deleted_at"`)
		return err
	})
}
