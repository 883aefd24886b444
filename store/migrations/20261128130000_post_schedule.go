package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Drafts and scheduled posts (issue 44): a post saved for later is hidden
// (messages.hidden DRAFT or SCHEDULED, so every list already leaves it out)
// until it is published; publish_at is when a scheduled one goes out, and
// newsletter says it is mailed to the app's members when it does.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`ALTER TABLE "messages" ADD COLUMN "publish_at" TIMESTAMPTZ`,
			`ALTER TABLE "messages" ADD COLUMN "newsletter" BOOLEAN NOT NULL DEFAULT false`,
			// The publish job's one query: the scheduled posts that are due.
			`CREATE INDEX "messages_scheduled_idx" ON "messages" ("publish_at") WHERE "hidden" = 'SCHEDULED'`,
		}
		return execAll(ctx, db, "post schedule migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS "messages_scheduled_idx"`)
		return err
	})
}
