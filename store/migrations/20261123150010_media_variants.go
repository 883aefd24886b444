package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Images get resized copies at upload (server/media/variants.go) and pages
// give every <img> its width and height: the media row records the
// original's intrinsic size and which copies exist, so a page lists them in
// srcset without asking the storage. Widths are a short comma-separated
// list ("96,192,384"): always read and written whole, never queried.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		// bun's type for a Go int: BIGINT on PostgreSQL, INTEGER (64-bit there) on SQLite.
		return execAll(ctx, db, "media variants migration",
			`ALTER TABLE "media" ADD COLUMN "width" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "media" ADD COLUMN "height" BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE "media" ADD COLUMN "variants" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "media" ADD COLUMN "variant_type" VARCHAR NOT NULL DEFAULT ''`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, col := range []string{"variant_type", "variants", "height", "width"} {
			if _, err := db.ExecContext(ctx, `ALTER TABLE "media" DROP COLUMN "`+col+`"`); err != nil {
				return err
			}
		}
		return nil
	})
}
