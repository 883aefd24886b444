package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// An EVENT_TICKET item names the event it admits to. A column rather than
// the item's settings JSON: "does this event require a ticket" is asked on
// every event page and join, and wants an index. No foreign key: deleting an
// event clears the link explicitly (store.DeleteEvent), like its other
// children, so the result does not depend on ON DELETE behaviour.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "item event migration",
			`ALTER TABLE "store_items" ADD COLUMN "event_id" VARCHAR`,
			`CREATE INDEX "store_items_event_id_idx" ON "store_items" ("event_id")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, stmt := range []string{
			`DROP INDEX IF EXISTS "store_items_event_id_idx"`,
			`ALTER TABLE "store_items" DROP COLUMN "event_id"`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
