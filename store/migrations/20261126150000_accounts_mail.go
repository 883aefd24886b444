package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Accounts and e-mail (issue 25): the mails the product sends, each written
// once per key in the transaction of what it announces and sent by a river
// job; single-use account tokens (password reset, e-mail verification and
// change), stored as hashes; the members' e-mail switches beside their
// in-app ones; and when each session was last used (account settings).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
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
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"sent_at" TIMESTAMPTZ
			)`,
			`CREATE INDEX "mails_user_idx" ON "mails" ("user_id")`,
			`CREATE TABLE "account_tokens" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"user_id" VARCHAR NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
				"purpose" VARCHAR NOT NULL,
				"email" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				"expires_at" TIMESTAMPTZ NOT NULL,
				"used_at" TIMESTAMPTZ
			)`,
			`CREATE INDEX "account_tokens_user_idx" ON "account_tokens" ("user_id", "purpose")`,
			`ALTER TABLE "notification_preferences" ADD COLUMN "email_muted_all" BOOLEAN NOT NULL DEFAULT false`,
			`ALTER TABLE "notification_preferences" ADD COLUMN "email_muted_kinds" VARCHAR NOT NULL DEFAULT ''`,
			`ALTER TABLE "sessions" ADD COLUMN "last_used_at" TIMESTAMPTZ`,
			`ALTER TABLE "users" ADD COLUMN "deleted_at" TIMESTAMPTZ`,
		}
		return execAll(ctx, db, "accounts and mail migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{`DROP TABLE "mails"`, `DROP TABLE "account_tokens"`} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
