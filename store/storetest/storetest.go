// Package storetest gives tests a fresh, migrated database: a throwaway
// PostgreSQL database (dropped at cleanup) or a SQLite file in t.TempDir().
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/migrations"
)

// testPoolSize is the most connections a test's database pool opens.
const testPoolSize = 10

// DefaultPostgresURL is used when TEST_DATABASE_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresURL is the server tests connect to for creating throwaway databases.
func PostgresURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// Postgres creates a database named seedtest_<random> on the server of
// PostgresURL, migrated, and drops it when the test ends. Each test gets its
// own database so tests can run in parallel and never see each other's rows.
// It is a copy of a template migrated once per test process, which is much
// cheaper than migrating every test.
func Postgres(t testing.TB) *bun.DB {
	t.Helper()
	return PostgresFrom(t, "migrated", nil)
}

// PostgresFrom is Postgres with more in it: fill runs once per process on a
// migrated database that then serves as the template named kind, and every
// test gets its own copy. fill must be deterministic and self-contained
// (seed data, say), as every test of the process shares its result.
func PostgresFrom(t testing.TB, kind string, fill func(ctx context.Context, db *bun.DB) error) *bun.DB {
	t.Helper()
	ctx := context.Background()
	base := PostgresURL()
	admin, err := openPatient(base)
	if err != nil {
		t.Fatalf("open %s: %v", base, err)
	}
	admin.SetMaxOpenConns(2)
	t.Cleanup(func() { admin.Close() })
	tmpl, err := templates.get(kind, func() (string, error) {
		dropEndedTemplates(ctx, admin)
		name := fmt.Sprintf("marquee_tmpl_%d_%s", os.Getpid(), kind)
		return name, buildTemplate(ctx, admin, name, fill)
	})
	if err != nil {
		t.Fatalf("template database %s (is PostgreSQL running at %s?): %v", kind, base, err)
	}

	name := "seedtest_" + randomHex()
	// The names are generated here from hex digits, so quoting is enough.
	if err := createFrom(ctx, admin, name, tmpl); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", base, err)
	}
	u.Path = "/" + name
	// A test's statements may wait long on a machine running other suites
	// (50 requests queued on one row lock, say): past the product's query
	// timeout they would end as a 503 the test never meant to provoke.
	db, err := openPatient(u.String())
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	// Up to 16 tests run at once (-p 2 -parallel 8), each with this pool,
	// its job queue's and an admin connection: ten each keeps a full run
	// under PostgreSQL's 100 clients, past which it refuses connections.
	db.SetMaxOpenConns(testPoolSize)
	db.SetMaxIdleConns(testPoolSize)
	// Cleanups run last-in first-out: close our pool before dropping, and
	// FORCE ends any connection a test left behind.
	t.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	urls.Store(db, u.String())
	t.Cleanup(func() { urls.Delete(db) })
	return db
}

// openPatient opens dsn with timeouts for a machine running other suites:
// creating and dropping a database waits for a checkpoint, a test's 50
// requests may queue on one row lock, and connecting can take seconds. The
// product's defaults (store.DefaultConnectTimeout, DefaultQueryTimeout, made
// to answer a dead database fast) would turn those waits into failures.
func openPatient(dsn string) (*bun.DB, error) {
	return store.OpenWith(dsn, store.DBOptions{ConnectTimeout: time.Minute, QueryTimeout: 5 * time.Minute})
}

// patient lifts the driver's 10 s read timeout in a URL (for store.Migrate,
// which opens its own connection), as openPatient does.
func patient(dsn string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "read_timeout=300"
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// createFrom copies a template. PostgreSQL refuses the copy while another
// session is connected to the template, which happens for an instant while
// a parallel copy starts, so a refusal is retried.
func createFrom(ctx context.Context, admin *bun.DB, name, tmpl string) error {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		_, err = admin.ExecContext(ctx, `CREATE DATABASE "`+name+`" TEMPLATE "`+tmpl+`"`)
		if err == nil || !strings.Contains(err.Error(), "is being accessed by other users") {
			return err
		}
		time.Sleep(time.Duration(20+attempt*10) * time.Millisecond)
	}
	return err
}

// templates holds this process's template databases, built on first use.
// They are named after the process (marquee_tmpl_<pid>_<kind>): a test
// binary's templates are its own, made from its own migrations and seed,
// and templates of processes that have ended are dropped by the next one.
var templates = &templateSet{built: map[string]*templateBuild{}}

type templateSet struct {
	mu    sync.Mutex
	built map[string]*templateBuild
}

type templateBuild struct {
	once sync.Once
	name string
	err  error
}

// get answers the template named kind, made by build on first use.
func (ts *templateSet) get(kind string, build func() (string, error)) (string, error) {
	ts.mu.Lock()
	b := ts.built[kind]
	if b == nil {
		b = &templateBuild{}
		ts.built[kind] = b
	}
	ts.mu.Unlock()
	b.once.Do(func() { b.name, b.err = build() })
	return b.name, b.err
}

func buildTemplate(ctx context.Context, admin *bun.DB, name string, fill func(context.Context, *bun.DB) error) error {
	if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop old %s: %w", name, err)
	}
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	u, err := url.Parse(PostgresURL())
	if err != nil {
		return err
	}
	u.Path = "/" + name
	db, err := openPatient(u.String())
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	// Copies need the template without connections: close before returning.
	defer db.Close()
	if err := store.Migrate(ctx, patient(u.String()), migrations.Migrations, store.MigrateOptions{}); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if fill != nil {
		if err := fill(ctx, db); err != nil {
			return fmt.Errorf("fill %s: %w", name, err)
		}
	}
	return nil
}

// dropEndedTemplates drops the templates of test processes that are no
// longer running on this machine (a run that was killed, say).
func dropEndedTemplates(ctx context.Context, admin *bun.DB) {
	var names []string
	if err := admin.NewSelect().TableExpr("pg_database").Column("datname").
		Where("datname LIKE 'marquee_tmpl_%'").Scan(ctx, &names); err != nil {
		return
	}
	for _, name := range names {
		var pid int
		if _, err := fmt.Sscanf(name, "marquee_tmpl_%d_", &pid); err != nil || processRunning(pid) {
			continue
		}
		_, _ = admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
	}
}

func processRunning(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// urls remembers the URL of each throwaway database, for code that needs
// its own connection to it (river's pgx pool).
var urls sync.Map

// URL answers the PostgreSQL URL of a database made by Postgres, or "" for
// SQLite.
func URL(db *bun.DB) string {
	u, _ := urls.Load(db)
	s, _ := u.(string)
	return s
}

// SQLite opens a migrated SQLite file in a temporary folder: a copy of a
// file migrated once per test process.
func SQLite(t testing.TB) *bun.DB {
	t.Helper()
	return SQLiteFrom(t, "migrated", nil)
}

// SQLiteFrom is PostgresFrom for SQLite: fill runs once per process on a
// migrated file that then serves as the template named kind, and every test
// gets its own copy of that file.
func SQLiteFrom(t testing.TB, kind string, fill func(ctx context.Context, db *bun.DB) error) *bun.DB {
	t.Helper()
	tmpl, err := sqliteTemplates.get(kind, func() (string, error) {
		dir, err := sqliteDirOnce()
		if err != nil {
			return "", err
		}
		name := filepath.Join(dir, kind+".db")
		return name, buildSQLiteTemplate(context.Background(), name, fill)
	})
	if err != nil {
		t.Fatalf("SQLite template %s: %v", kind, err)
	}
	path := filepath.Join(t.TempDir(), "test.db")
	if err := copyFile(tmpl, path); err != nil {
		t.Fatalf("copy SQLite template %s: %v", kind, err)
	}
	// As openPatient for PostgreSQL: a busy machine must not turn a writer
	// queued behind others into "database is locked".
	db, err := store.OpenWith(path, store.DBOptions{QueryTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sqliteTemplates holds this process's SQLite template files, built on
// first use, in one folder per process (marquee-sqlite-<pid>) that the next
// process removes once this one has ended.
var sqliteTemplates = &templateSet{built: map[string]*templateBuild{}}

var sqliteDirOnce = sync.OnceValues(func() (string, error) {
	parent := filepath.Join(os.TempDir(), "marquee-sqlite-templates")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err == nil && pid != os.Getpid() && !processRunning(pid) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
	dir := filepath.Join(parent, fmt.Sprint(os.Getpid()))
	return dir, os.MkdirAll(dir, 0o755)
})

func buildSQLiteTemplate(ctx context.Context, path string, fill func(context.Context, *bun.DB) error) error {
	if err := store.Migrate(ctx, path, migrations.Migrations, store.MigrateOptions{}); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	db, err := store.OpenWith(path, store.DBOptions{QueryTimeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer db.Close()
	if fill != nil {
		if err := fill(ctx, db); err != nil {
			return fmt.Errorf("fill: %w", err)
		}
	}
	// Everything into the main file, so copying that one file copies it all.
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Both runs fn against PostgreSQL and SQLite as subtests, since the product
// runs on both and their SQL differs in small ways.
func Both(t *testing.T, fn func(t *testing.T, db *bun.DB)) {
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
}

// EmptyPostgres creates an empty database (no tables at all) and answers
// its URL; it is dropped when the test ends. For tests of migrating.
func EmptyPostgres(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	admin, err := openPatient(PostgresURL())
	if err != nil {
		t.Fatalf("open %s: %v", PostgresURL(), err)
	}
	name := "seedtest_" + randomHex()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		admin.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresURL(), err)
	}
	u.Path = "/" + name
	return u.String()
}
