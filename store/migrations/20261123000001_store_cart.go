package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The store deletes items softly: cart_items and order_items point at
// store_items, and a hard delete would cascade away what members put in
// their carts (carts flag a deleted item instead of dropping it). The partial
// unique index makes "one ACTIVE cart per member and store" a database rule,
// so two concurrent first adds cannot create two carts.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts := "TIMESTAMPTZ"
		if db.Dialect().Name() == dialect.SQLite {
			ts = "TIMESTAMP"
		}
		stmts := []string{
			`ALTER TABLE "store_items" ADD COLUMN "deleted_at" ` + ts,
			`CREATE UNIQUE INDEX "carts_one_active_idx" ON "carts" ("store_id", "user_id") WHERE status = 'ACTIVE'`,
		}
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, stmt := range stmts {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("store cart migration: %w\n%s", err, stmt)
				}
			}
			return nil
		})
	}, func(ctx context.Context, db *bun.DB) error {
		if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS "carts_one_active_idx"`); err != nil {
			return err
		}
		_, err := db.ExecContext(ctx, `ALTER TABLE "store_items" DROP COLUMN "deleted_at"`)
		return err
	})
}
