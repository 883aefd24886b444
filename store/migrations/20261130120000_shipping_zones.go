package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Shipping (issue 43 item 4): an app's shipping zones, each a set of
// countries (ISO 3166-1 alpha-2) with a flat rate per order, a rate per
// extra item and a threshold over which shipping is free, all in cents. A
// country belongs to at most one zone of an app (the unique key of
// shipping_zone_countries). An order records the shipping it was charged
// (orders.shipping, part of its total).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "shipping_zones" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"flat_rate" BIGINT NOT NULL DEFAULT 0,
				"per_item" BIGINT NOT NULL DEFAULT 0,
				"free_over" BIGINT NOT NULL DEFAULT 0,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "shipping_zones_app_idx" ON "shipping_zones" ("app_id", "name")`,
			`CREATE TABLE "shipping_zone_countries" (
				"app_id" VARCHAR NOT NULL,
				"country" VARCHAR NOT NULL,
				"zone_id" VARCHAR NOT NULL,
				PRIMARY KEY ("app_id", "country"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (zone_id) REFERENCES shipping_zones (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "shipping_zone_countries_zone_idx" ON "shipping_zone_countries" ("zone_id")`,
			`ALTER TABLE "orders" ADD COLUMN "shipping" BIGINT NOT NULL DEFAULT 0`,
		}
		return execAll(ctx, db, "shipping zones migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`ALTER TABLE "orders" DROP COLUMN "shipping"`,
			`DROP TABLE "shipping_zone_countries"`,
			`DROP TABLE "shipping_zones"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
