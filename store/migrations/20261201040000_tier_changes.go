package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Moving between tiers (issue 40 item 4): a downgrade takes effect at the
// period end, so the membership remembers the tier and price it moves to
// until its next renewal.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		integer := "BIGINT"
		if db.Dialect().Name() == dialect.SQLite {
			integer = "INTEGER"
		}
		for _, s := range []string{
			`ALTER TABLE "subscriptions" ADD COLUMN "next_plan_id" VARCHAR`,
			`ALTER TABLE "subscriptions" ADD COLUMN "next_amount" ` + integer,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("tier changes migration: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`ALTER TABLE "subscriptions" DROP COLUMN "next_amount"`,
			`ALTER TABLE "subscriptions" DROP COLUMN "next_plan_id"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
