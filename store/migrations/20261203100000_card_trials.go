package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Card trials (issue 40 item 5): a tier whose free trial needs a card starts
// it through Stripe Checkout in subscription mode. card_trials holds a
// member's one card trial being set up in an app (unique per app and
// member): the tier, cycle and offer code asked for, the Checkout Session
// made for it (session_ref, keyed by the row's id, so concurrent joins get
// one session) and, once the card is saved, the Stripe subscription
// (provider_ref). status is PENDING until the trial starts (STARTED) or
// cannot (CANCELED: the member had a trial meanwhile).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "card trials migration",
			`CREATE TABLE "card_trials" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"plan_id" VARCHAR NOT NULL,
				"item_id" VARCHAR NOT NULL,
				"cycle" VARCHAR NOT NULL DEFAULT '',
				"offer_code" VARCHAR NOT NULL DEFAULT '',
				"session_ref" VARCHAR NOT NULL DEFAULT '',
				"provider_ref" VARCHAR NOT NULL DEFAULT '',
				"status" VARCHAR NOT NULL DEFAULT 'PENDING',
				"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
			)`,
			`CREATE UNIQUE INDEX "card_trials_app_user_key" ON "card_trials" ("app_id", "user_id")`,
			`CREATE INDEX "card_trials_session_idx" ON "card_trials" ("session_ref")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "card_trials"`)
		return err
	})
}
