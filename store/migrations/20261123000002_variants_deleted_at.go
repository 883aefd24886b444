package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Variants are deleted softly for the same reason as items: cart_items
// references them ON DELETE CASCADE, and removing an option from an item must
// not silently take lines out of members' carts (they are flagged instead).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts := "TIMESTAMPTZ"
		if db.Dialect().Name() == dialect.SQLite {
			ts = "TIMESTAMP"
		}
		if _, err := db.ExecContext(ctx, `ALTER TABLE "variants" ADD COLUMN "deleted_at" `+ts); err != nil {
			return fmt.Errorf("variants.deleted_at: %w", err)
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `ALTER TABLE "variants" DROP COLUMN "deleted_at"`)
		return err
	})
}
