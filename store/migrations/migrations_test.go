package migrations

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// bun records a migration by its timestamp alone: two files with one
// timestamp (easy when work is merged from branches) would make a database
// that ran one of them skip the other for good.
func TestMigrationIDsAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, m := range Migrations.Sorted() {
		if other, ok := seen[m.Name]; ok {
			t.Errorf("migrations %s_%s and %s_%s share the id %s: give the newer file a later timestamp", m.Name, other, m.Name, m.Comment, m.Name)
		}
		seen[m.Name] = m.Comment
	}
	if len(seen) < 10 {
		t.Fatalf("only %d migrations registered", len(seen))
	}
}

// execAll translates the types for SQLite, runs all or nothing, and names
// what failed and the statement.
func TestExecAllTranslatesAndRollsBack(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open(sqliteshim.ShimName, filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := bun.NewDB(sqldb, sqlitedialect.New())
	defer db.Close()
	if err := execAll(ctx, db, "first", `CREATE TABLE "t" ("a" BIGINT, "b" TIMESTAMPTZ, "c" BYTEA)`); err != nil {
		t.Fatal(err)
	}
	var ddl string
	if err := db.NewRaw(`SELECT sql FROM sqlite_master WHERE name = 't'`).Scan(ctx, &ddl); err != nil {
		t.Fatal(err)
	}
	if want := `CREATE TABLE "t" ("a" INTEGER, "b" TIMESTAMP, "c" BLOB)`; ddl != want {
		t.Errorf("SQLite ran %q, want %q", ddl, want)
	}
	err = execAll(ctx, db, "second", `INSERT INTO "t" ("a") VALUES (1)`, `INSERT INTO "nowhere" ("a") VALUES (2)`)
	if err == nil || !strings.Contains(err.Error(), "second: ") || !strings.Contains(err.Error(), `INSERT INTO "nowhere"`) {
		t.Errorf("error %v does not name the migration and the statement", err)
	}
	n, err := db.NewSelect().Table("t").Count(ctx)
	if err != nil || n != 0 {
		t.Errorf("%d rows left after a failed execAll (%v), want its earlier statements rolled back", n, err)
	}
}
