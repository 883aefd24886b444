package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// page_versions holds one counter per app (and "*" for what every app shows,
// such as a member's picture). Cached pages are keyed by it, so a write bumps
// the counter and every process, the CLI included, sees the change on the
// next request. It lives in the database, not only in Redis: a bump made
// while Redis is down, or by a CLI without REDIS_URL, is not lost.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmt := `CREATE TABLE "page_versions" ("scope" VARCHAR NOT NULL, "version" BIGINT NOT NULL DEFAULT 0, PRIMARY KEY ("scope"))`
		return execAll(ctx, db, "page_versions", stmt)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS "page_versions"`)
		return err
	})
}
