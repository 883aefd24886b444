package store_test

import (
	"path/filepath"
	"strings"
	"testing"

	"marquee/store"
)

// The start-up log names the database in use without its password
// (issue 41 item 11): a DATABASE_URL without a scheme opened a new SQLite
// file and nothing said so.
func TestDescribeDatabase(t *testing.T) {
	t.Parallel()
	if got := store.DescribeDatabase("postgres://marquee:s3cret@db.internal:5432/marquee?sslmode=require"); got != "postgres db.internal:5432/marquee" {
		t.Errorf("postgres: %q", got)
	}
	abs, _ := filepath.Abs("db.internal:5432/marquee")
	if got := store.DescribeDatabase("db.internal:5432/marquee"); got != "sqlite "+abs || strings.Contains(got, "s3cret") {
		t.Errorf("no scheme: %q, want sqlite %s", got, abs)
	}
	if got := store.DescribeDatabase("sqlite:///var/lib/marquee/marquee.db"); got != "sqlite /var/lib/marquee/marquee.db" {
		t.Errorf("sqlite: %q", got)
	}
}
