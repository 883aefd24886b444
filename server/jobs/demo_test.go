package jobs_test

import (
	"context"
	"os"
	"testing"

	"github.com/uptrace/bun"

	"marquee/scripts/seed"
	"marquee/server/media"
	"marquee/store/storetest"
)

// seedDemo fills a template with the demo once per process; the jobs
// never read its pictures, so their folder goes once the template is made.
func seedDemo(ctx context.Context, db *bun.DB) error {
	dir, err := os.MkdirTemp("", "marquee-jobs-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return seed.Demo(ctx, db, &media.Local{Dir: dir, BaseURL: "http://main.test", Key: []byte("k")})
}

// demoPostgres is a PostgreSQL copy of the seeded demo, the test's own.
func demoPostgres(t *testing.T) *bun.DB { return storetest.PostgresFrom(t, "demo", seedDemo) }

// demoBoth runs fn on a copy of the seeded demo on PostgreSQL and on SQLite.
func demoBoth(t *testing.T, fn func(t *testing.T, db *bun.DB)) {
	t.Run("postgres", func(t *testing.T) { fn(t, demoPostgres(t)) })
	t.Run("sqlite", func(t *testing.T) { fn(t, storetest.SQLiteFrom(t, "demo", seedDemo)) })
}
