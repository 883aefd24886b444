package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Content for each tier (issue 40 item 2): every message has an audience
// (PUBLIC, FOLLOWERS, MEMBERS), an optional lowest tier (a tier and above)
// and the creator's teaser shown to those it is locked for. Existing posts
// are PUBLIC: the app-wide gate still applies to them as before.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "message access migration",
			`ALTER TABLE "messages" ADD COLUMN "access_audience" VARCHAR NOT NULL DEFAULT 'PUBLIC'`,
			`ALTER TABLE "messages" ADD COLUMN "access_min_tier_id" VARCHAR`,
			`ALTER TABLE "messages" ADD COLUMN "teaser" VARCHAR NOT NULL DEFAULT ''`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`ALTER TABLE "messages" DROP COLUMN "teaser"`,
			`ALTER TABLE "messages" DROP COLUMN "access_min_tier_id"`,
			`ALTER TABLE "messages" DROP COLUMN "access_audience"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
