package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// An event's details have an access setting like posts (issue 40 item 2):
// an audience (PUBLIC, FOLLOWERS, MEMBERS) and an optional lowest tier.
// Existing events are PUBLIC.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "event access migration",
			`ALTER TABLE "events" ADD COLUMN "access_audience" VARCHAR NOT NULL DEFAULT 'PUBLIC'`,
			`ALTER TABLE "events" ADD COLUMN "access_min_tier_id" VARCHAR`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`ALTER TABLE "events" DROP COLUMN "access_min_tier_id"`,
			`ALTER TABLE "events" DROP COLUMN "access_audience"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
