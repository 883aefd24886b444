package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Link-in-bio icons are fetched by the server once per domain (a river
// job) and served from our origin, so a landing view never asks a
// third-party favicon service. A row exists from the first request on:
// PENDING until the job has an answer, then OK (with the bytes) or MISSING.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		blob, ts := "BYTEA", "TIMESTAMPTZ"
		if db.Dialect().Name() == dialect.SQLite {
			blob, ts = "BLOB", "TIMESTAMP"
		}
		stmt := `CREATE TABLE "link_icons" (
			"domain" VARCHAR NOT NULL PRIMARY KEY,
			"status" VARCHAR NOT NULL DEFAULT 'PENDING',
			"content_type" VARCHAR NOT NULL DEFAULT '',
			"body" ` + blob + `,
			"created_at" ` + ts + ` NOT NULL DEFAULT current_timestamp,
			"fetched_at" ` + ts + `
		)`
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("link icons migration: %w", err)
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE "link_icons"`)
		return err
	})
}
