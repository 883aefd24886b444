package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The newsletter (issue 44): one row per post and member it is mailed to,
// unique per pair so a member gets a post once however often its jobs run,
// with the delivery state that lets a send resume after a crash; the
// addresses that bounced (undeliverable after repeated permanent
// failures); and the one pacing row every instance reserves send slots
// from (NEWSLETTER_RATE per deployment).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := []string{
			`CREATE TABLE "newsletter_recipients" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"message_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"email" VARCHAR NOT NULL,
				"state" VARCHAR NOT NULL DEFAULT 'PENDING',
				"attempts" BIGINT NOT NULL DEFAULT 0,
				"last_error" VARCHAR NOT NULL DEFAULT '',
				"unsubscribe_token" VARCHAR NOT NULL UNIQUE,
				"next_attempt_at" TIMESTAMPTZ,
				"claimed_at" TIMESTAMPTZ,
				"sent_at" TIMESTAMPTZ,
				"unsubscribed_at" TIMESTAMPTZ,
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				CONSTRAINT "newsletter_recipients_once" UNIQUE ("message_id", "user_id")
			)`,
			`CREATE INDEX "newsletter_recipients_state_idx" ON "newsletter_recipients" ("message_id", "state")`,
			`CREATE INDEX "newsletter_recipients_app_idx" ON "newsletter_recipients" ("app_id", "email")`,
			`CREATE TABLE "mail_bounces" (
				"email" VARCHAR NOT NULL PRIMARY KEY,
				"bounces" BIGINT NOT NULL DEFAULT 0,
				"undeliverable" BOOLEAN NOT NULL DEFAULT false,
				"last_error" VARCHAR NOT NULL DEFAULT '',
				"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
			)`,
			`CREATE TABLE "newsletter_pace" (
				"id" BIGINT NOT NULL PRIMARY KEY,
				"next_ns" BIGINT NOT NULL DEFAULT 0
			)`,
			`INSERT INTO "newsletter_pace" ("id", "next_ns") VALUES (1, 0)`,
		}
		return execAll(ctx, db, "newsletter migration", stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{`DROP TABLE "newsletter_recipients"`, `DROP TABLE "mail_bounces"`, `DROP TABLE "newsletter_pace"`} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
