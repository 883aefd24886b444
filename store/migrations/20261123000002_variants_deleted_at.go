package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Variants are deleted softly for the same reason as items: cart_items
// references them ON DELETE CASCADE, and removing an option from an item must
// not silently take lines out of members' carts (they are flagged instead).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "variants.deleted_at", `ALTER TABLE "variants" ADD COLUMN "deleted_at" TIMESTAMPTZ`)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `ALTER TABLE "variants" DROP COLUMN "deleted_at"`)
		return err
	})
}
