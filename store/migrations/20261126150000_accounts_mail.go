package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Accounts and e-mail (issue 25): the mails the product sends, each written
// once per key in the transaction of what it announces and sent by a river
// job; single-use account tokens (password reset, e-mail verification and
// change), stored as hashes; the members' e-mail switches beside their
// in-app ones; and when each session was last used (account settings).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		ts := "TIMESTAMPTZ"
		if db.Dialect().Name() == dialect.SQLite {
			ts = "TIMESTAMP"
		}
		stmts := []string{
			`CREATE TABLE "mails" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"mail_key" VARCHAR NOT NULL UNIQUE,
				"kind" VARCHAR NOT NULL,
				"app_id" VARCHAR,
				"user_id" VARCHAR,
				"to_addr" VARCHAR NOT NULL,
				"transactional" BOOLEAN NOT NULL DEFAULT false,
				"content" TEXT NOT NULL,
				"unsubscribe_token" VARCHAR UNIQUE,
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				"sent_at" ` + ts + `
			)`,
			`CREATE INDEX "mails_user_idx" ON "mails" ("user_id")`,
			`CREATE TABLE "account_tokens" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"user_id" VARCHAR NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
				"purpose" VARCHAR NOT NULL,
				"email" VARCHAR NOT NULL DEFAULT '',
				"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
				"expires_at" ` + ts + ` NOT NULL,
				"used_at" ` + ts + `
			)`,
			`CREATE INDEX "account_tokens_user_idx" ON "account_tokens" ("user_id", "purpose")`,
			`ALTER TABLE "notification_preferences" ADD COLUMN "email_muted_all" BOOLEAN NOT NULL DEFAULT false`,
			`ALTER TABLE "notification_preferences" ADD COLUMN "email_muted_kinds" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "sessions" ADD COLUMN "last_used_at" ` + ts,
			`ALTER TABLE "users" ADD COLUMN "deleted_at" ` + ts,
		}
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("accounts and mail migration: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{`DROP TABLE "mails"`, `DROP TABLE "account_tokens"`} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
