package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Custom domains (issue 42 item 3): an app has at most one domain, and a
// domain belongs to one app (its unique key: of fifty apps adding the same
// domain at once, one wins). A domain serves its app once ownership is
// proved by a DNS TXT record carrying the token. domain_sign_ins are the
// one-time codes that carry a sign-in from the auth host to a custom domain
// (a minute, once, for that domain); sessions.linked_id ties the custom
// domain's session to the auth host's, so signing out of one ends both.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "app_domains" (
				"app_id" VARCHAR NOT NULL PRIMARY KEY,
				"domain" VARCHAR NOT NULL,
				"token" VARCHAR NOT NULL,
				"state" VARCHAR NOT NULL DEFAULT 'pending',
				"last_error" VARCHAR NOT NULL DEFAULT '',
				"checked_at" TIMESTAMPTZ,
				"verified_at" TIMESTAMPTZ,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			)`,
			`CREATE UNIQUE INDEX "app_domains_domain" ON "app_domains" ("domain")`,
			`CREATE TABLE "domain_sign_ins" (
				"code" VARCHAR NOT NULL PRIMARY KEY,
				"domain" VARCHAR NOT NULL,
				"session_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"expires_at" TIMESTAMPTZ NOT NULL
			)`,
			`CREATE INDEX "domain_sign_ins_expires" ON "domain_sign_ins" ("expires_at")`,
			`ALTER TABLE "sessions" ADD COLUMN "linked_id" VARCHAR`,
			`CREATE INDEX "sessions_linked" ON "sessions" ("linked_id")`,
		}
		return execAll(ctx, db, "app domains migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{`DROP INDEX "sessions_linked"`, `ALTER TABLE "sessions" DROP COLUMN "linked_id"`,
			`DROP TABLE "domain_sign_ins"`, `DROP TABLE "app_domains"`} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
