package migrations_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"marquee/store"
	"marquee/store/migrations"
	"marquee/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

var update = flag.Bool("update", false, "rewrite testdata/statements.*.sql from the migrations as they are")

// Migration files are frozen: a database that ran one never runs it again,
// so the SQL each one sends must stay what it was when it was committed.
// This test runs every migration on a fresh PostgreSQL and a fresh SQLite
// database, records each statement it sends, and compares them with
// testdata/statements.<dialect>.sql, which was recorded before the
// migrations moved to execAll and grows by a block per new migration
// (`go test ./store/migrations -run TestMigrationStatementsAreFrozen -update`
// after adding one; an existing block must never change).
func TestMigrationStatementsAreFrozen(t *testing.T) {
	for _, d := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"pg", func(t *testing.T) string { return storetest.EmptyPostgres(t) }},
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "fresh.db") }},
	} {
		t.Run(d.name, func(t *testing.T) {
			got := recordStatements(t, d.dsn(t))
			golden := filepath.Join("testdata", "statements."+d.name+".sql")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (record it with -update)", err)
			}
			if got == string(want) {
				return
			}
			g, w := splitBlocks(got), splitBlocks(string(want))
			for name, stmts := range w {
				if g[name] != stmts {
					t.Errorf("migration %s sends other SQL than it did on %s:\n--- sent now\n%s\n--- recorded\n%s", name, d.name, g[name], stmts)
				}
			}
			for name := range g {
				if _, ok := w[name]; !ok {
					t.Errorf("migration %s is not recorded in %s: rerun with -update", name, golden)
				}
			}
			if !t.Failed() {
				t.Errorf("the migrations' statements are in another order than %s", golden)
			}
		})
	}
}

// recordStatements applies every migration in order on the empty database
// at dsn and answers what each sent, in blocks headed "-- <migration>".
// The migrator's own bookkeeping and transaction control are left out.
func recordStatements(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	base, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	rec := &recorder{}
	db := base.WithQueryHook(rec)
	m := migrate.NewMigrator(db, migrations.Migrations, migrate.WithUpsert(true))
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	for _, mig := range migrations.Migrations.Sorted() {
		rec.b.WriteString("-- " + mig.String() + "\n")
		if err := m.RunMigration(ctx, mig.Name); err != nil {
			t.Fatalf("migration %s: %v", mig, err)
		}
		rec.b.WriteString("\n")
	}
	return rec.b.String()
}

type recorder struct{ b strings.Builder }

func (r *recorder) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (r *recorder) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	q := strings.TrimSpace(e.Query)
	switch strings.ToUpper(strings.SplitN(q, " ", 2)[0]) {
	case "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE":
		return
	}
	if strings.Contains(q, "bun_migration") {
		return
	}
	r.b.WriteString(q + ";\n")
}

func splitBlocks(s string) map[string]string {
	blocks := map[string]string{}
	for _, b := range strings.Split(s, "\n-- ")[0:] {
		b = strings.TrimPrefix(b, "-- ")
		name, body, _ := strings.Cut(b, "\n")
		blocks[name] = body
	}
	return blocks
}
