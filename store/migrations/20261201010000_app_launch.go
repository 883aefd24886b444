package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Launch (issue 43 item 1): an app a creator makes starts unpublished,
// open to its staff only, until they publish it from the studio's launch
// checklist. Every app that exists now stays published (the default). The
// checklist remembers when the app was last previewed as a visitor and as
// a member.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "app launch migration",
			`ALTER TABLE "apps" ADD COLUMN "unpublished" BOOLEAN NOT NULL DEFAULT FALSE`,
			`ALTER TABLE "apps" ADD COLUMN "previewed_visitor_at" TIMESTAMPTZ`,
			`ALTER TABLE "apps" ADD COLUMN "previewed_member_at" TIMESTAMPTZ`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{
			`ALTER TABLE "apps" DROP COLUMN "previewed_member_at"`,
			`ALTER TABLE "apps" DROP COLUMN "previewed_visitor_at"`,
			`ALTER TABLE "apps" DROP COLUMN "unpublished"`,
		} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
