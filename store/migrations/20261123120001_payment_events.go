package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Card and PayPal payments.
//
//   - payment_events remembers every provider event (a webhook's event id, a
//     refund's id) that changed or was checked against an order. The unique
//     (provider, event_id) pair is what makes a webhook delivered ten times,
//     even at the same moment, change the order once: the insert and the
//     order change share a transaction, and only the first insert succeeds.
//   - orders.payment_ref already holds the provider's payment id once an order
//     is paid; it is now also set while the order is PENDING (the
//     PaymentIntent or PayPal order started for it), so a capture, confirm or
//     webhook that names only the provider's id finds its order by index.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "payment_events" (
				"id" VARCHAR NOT NULL,
				"provider" VARCHAR NOT NULL,
				"event_id" VARCHAR NOT NULL,
				"type" VARCHAR NOT NULL,
				"app_id" VARCHAR,
				"order_id" VARCHAR,
				"payment_ref" VARCHAR NOT NULL DEFAULT '',
				"amount" BIGINT NOT NULL DEFAULT 0,
				"currency" VARCHAR NOT NULL DEFAULT '',
				"outcome" VARCHAR NOT NULL DEFAULT '',
				"message" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "payment_events_provider_event" UNIQUE ("provider", "event_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE
			)`,
			`CREATE INDEX "payment_events_order_id_idx" ON "payment_events" ("order_id", "created_at")`,
			`CREATE INDEX "orders_payment_ref_idx" ON "orders" ("payment_ref")`,
		}
		return execAll(ctx, db, "payment events migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{
			`DROP INDEX IF EXISTS "orders_payment_ref_idx"`,
			`DROP TABLE IF EXISTS "payment_events"`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
