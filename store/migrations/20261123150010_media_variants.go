package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Images get resized copies at upload (server/media/variants.go) and pages
// give every <img> its width and height: the media row records the
// original's intrinsic size and which copies exist, so a page lists them in
// srcset without asking the storage. Widths are a short comma-separated
// list ("96,192,384"): always read and written whole, never queried.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		// bun's type for a Go int: BIGINT on PostgreSQL, INTEGER (64-bit there) on SQLite.
		integer := "BIGINT"
		if db.Dialect().Name() == dialect.SQLite {
			integer = "INTEGER"
		}
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, stmt := range []string{
				`ALTER TABLE "media" ADD COLUMN "width" ` + integer + ` NOT NULL DEFAULT 0`,
				`ALTER TABLE "media" ADD COLUMN "height" ` + integer + ` NOT NULL DEFAULT 0`,
				`ALTER TABLE "media" ADD COLUMN "variants" VARCHAR NOT NULL DEFAULT ''`,
				`ALTER TABLE "media" ADD COLUMN "variant_type" VARCHAR NOT NULL DEFAULT ''`,
			} {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("media variants migration: %w\n%s", err, stmt)
				}
			}
			return nil
		})
	}, func(ctx context.Context, db *bun.DB) error {
		for _, col := range []string{"variant_type", "variants", "height", "width"} {
			if _, err := db.ExecContext(ctx, `ALTER TABLE "media" DROP COLUMN "`+col+`"`); err != nil {
				return err
			}
		}
		return nil
	})
}
