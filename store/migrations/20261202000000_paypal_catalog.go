package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// PayPal subscriptions (issue 40 item 3): the catalog product of each app
// and the billing plan of each tier, cycle and price that PayPal made for
// us, by a key that names what was asked for ("product:APP",
// "plan:TIER:MONTHLY:600:..."), so each is made once and reused.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "paypal catalog migration",
			`CREATE TABLE "paypal_catalog" (
				"key" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"paypal_id" VARCHAR NOT NULL,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
			)`,
			`CREATE INDEX "paypal_catalog_app_idx" ON "paypal_catalog" ("app_id")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "paypal_catalog"`)
		return err
	})
}
