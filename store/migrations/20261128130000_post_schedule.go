package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Drafts and scheduled posts (issue 44): a post saved for later is hidden
// (messages.hidden DRAFT or SCHEDULED, so every list already leaves it out)
// until it is published; publish_at is when a scheduled one goes out, and
// newsletter says it is mailed to the app's members when it does.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts := "TIMESTAMPTZ"
		if db.Dialect().Name() == dialect.SQLite {
			ts = "TIMESTAMP"
		}
		stmts := []string{
			`ALTER TABLE "messages" ADD COLUMN "publish_at" ` + ts,
			`ALTER TABLE "messages" ADD COLUMN "newsletter" BOOLEAN NOT NULL DEFAULT false`,
			// The publish job's one query: the scheduled posts that are due.
			`CREATE INDEX "messages_scheduled_idx" ON "messages" ("publish_at") WHERE "hidden" = 'SCHEDULED'`,
		}
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("post schedule migration: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS "messages_scheduled_idx"`)
		return err
	})
}
