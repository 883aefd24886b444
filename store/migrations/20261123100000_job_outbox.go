package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// job_outbox holds background jobs written in the transaction of the write
// that causes them (server/jobs moves them into river's own tables, which
// river's migrator creates).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmt := `CREATE TABLE "job_outbox" (
			"id" BIGSERIAL NOT NULL PRIMARY KEY,
			"kind" VARCHAR NOT NULL,
			"args" VARCHAR NOT NULL,
			"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
		)`
		if db.Dialect().Name() == dialect.SQLite {
			stmt = `CREATE TABLE "job_outbox" (
			"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
			"kind" VARCHAR NOT NULL,
			"args" VARCHAR NOT NULL,
			"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
		)`
		}
		return execAll(ctx, db, "job_outbox", stmt)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS "job_outbox"`)
		return err
	})
}
