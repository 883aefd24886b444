package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Link-in-bio icons are fetched by the server once per domain (a river
// job) and served from our origin, so a landing view never asks a
// third-party favicon service. A row exists from the first request on:
// PENDING until the job has an answer, then OK (with the bytes) or MISSING.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmt := `CREATE TABLE "link_icons" (
			"domain" VARCHAR NOT NULL PRIMARY KEY,
			"status" VARCHAR NOT NULL DEFAULT 'PENDING',
			"content_type" VARCHAR NOT NULL DEFAULT '',
			"body" BYTEA,
			"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
			"fetched_at" TIMESTAMPTZ
		)`
		return execAll(ctx, db, "link icons migration", stmt)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "link_icons"`)
		return err
	})
}
