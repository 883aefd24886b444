// Package storetest gives tests a fresh, migrated database: a throwaway
// PostgreSQL database (dropped when the test process ends) or a SQLite file
// in t.TempDir().
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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/sync/semaphore"

	"marquee/store"
	"marquee/store/migrations"
)

// A test database's pool and the job queue's pool a test may open on it:
// every PostgreSQL database a test gets reserves both from the process's
// connection budget (TEST_PG_CONNS) for as long as it lives.
const (
	PoolConns = 4
	JobConns  = 2
)

// DefaultPostgresURL is used when TEST_DATABASE_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresURL is the server tests connect to for creating throwaway databases.
func PostgresURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// Postgres creates a migrated database of the test's own on the server of
// PostgresURL and drops it when the test ends. Each test gets its own
// database so tests can run in parallel and never see each other's rows.
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
	return postgresFrom(t, kind, fill, PoolConns+JobConns)
}

// PostgresConns is Postgres for a test that runs whole servers on its
// database (serve processes, a cluster): it reserves conns connections of
// the budget instead of one pool's, and the test must size what it starts
// to fit (DB_MAX_CONNS).
func PostgresConns(t testing.TB, conns int) *bun.DB {
	t.Helper()
	return postgresFrom(t, "migrated", nil, conns)
}

func postgresFrom(t testing.TB, kind string, fill func(ctx context.Context, db *bun.DB) error, conns int) *bun.DB {
	t.Helper()
	ctx := context.Background()
	reserve(t, conns)
	admin, err := adminDB()
	if err != nil {
		t.Fatalf("open %s: %v", PostgresURL(), err)
	}
	tmpl, err := templates.get(kind, func() (string, error) {
		name := dbName("t" + kind)
		return name, buildTemplate(ctx, admin, name, fill)
	})
	if err != nil {
		t.Fatalf("template database %s at %s: %v", kind, PostgresURL(), err)
	}

	name := dbName(randomHex())
	// The names are made here from a checked prefix and hex digits, so
	// quoting is enough.
	if err := createFrom(ctx, admin, name, tmpl); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresURL(), err)
	}
	u.Path = "/" + name
	// A test's statements may wait long on a machine running other suites
	// (50 requests queued on one row lock, say): past the product's query
	// timeout they would end as a 503 the test never meant to provoke.
	db, err := openPatient(u.String())
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	db.SetMaxOpenConns(PoolConns)
	db.SetMaxIdleConns(PoolConns)
	// Cleanups run last-in first-out: close our pool, then end any
	// connection the test left behind; the database is dropped when the
	// process ends (spentDatabases).
	t.Cleanup(func() {
		db.Close()
		if err := spentDatabases.add(admin, name); err != nil {
			t.Errorf("database %s: %v", name, err)
		}
	})
	urls.Store(db, u.String())
	t.Cleanup(func() { urls.Delete(db) })
	return db
}

// budget bounds the PostgreSQL connections this test process may hold at
// once: TEST_PG_CONNS (default 14) less the admin connection. The Makefile
// runs two test processes, so the suite stays under 30 connections, and a
// server shared with other programs is not driven to max_connections.
// A test waits for its share before its database is made.
var budget = sync.OnceValue(func() *semaphore.Weighted {
	return semaphore.NewWeighted(int64(budgetSize()))
})

// reserve takes conns connections of the budget until the test ends (its
// cleanup is registered first so it runs after the database is dropped).
// Subtests of one test that each make a database take shares of their own,
// so a test never waits for a share while holding another.
func reserve(t testing.TB, conns int) {
	if int64(conns) > int64(budgetSize()) {
		t.Fatalf("a test needs %d PostgreSQL connections, more than TEST_PG_CONNS allows", conns)
	}
	if err := budget().Acquire(context.Background(), int64(conns)); err != nil {
		t.Fatalf("wait for PostgreSQL connections: %v", err)
	}
	t.Cleanup(func() { budget().Release(int64(conns)) })
}

func budgetSize() int {
	n, err := strconv.Atoi(os.Getenv("TEST_PG_CONNS"))
	if err != nil || n < PoolConns+JobConns+1 {
		n = 14
	}
	return n - 1
}

// adminDB is the process's one connection for creating and dropping
// databases (each test had its own two, idle most of the time).
var adminDB = sync.OnceValues(func() (*bun.DB, error) {
	db, err := openPatient(PostgresURL())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
})

// openPatient opens dsn for a machine running other suites: no breaker,
// connections PostgreSQL refuses for now retried (store.DBOptions.Patient),
// and long timeouts, since creating and dropping a database waits for a
// checkpoint and a test's 50 requests may queue on one row lock. The
// product's defaults (made to answer a dead database fast) would turn those
// waits into failures.
func openPatient(dsn string) (*bun.DB, error) {
	return store.OpenWith(dsn, store.DBOptions{ConnectTimeout: 2 * time.Minute, QueryTimeout: 5 * time.Minute, Patient: true})
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

// Database names: <prefix>_p<pid>_<unix seconds>_<what>. The prefix is
// TEST_DB_PREFIX (letters, digits and underscores; default "mqtest"), so
// runners sharing one server can tell their databases apart; the process id
// and creation time say whose a database is and how old, so a process drops
// only its own templates (Cleanup) and those of any runner that are more
// than a day old (a run that was killed).
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,19}_p[0-9]+_([0-9]{10})_[a-z0-9]+$`)

var prefix = sync.OnceValue(func() string {
	p := strings.ToLower(os.Getenv("TEST_DB_PREFIX"))
	if !regexp.MustCompile(`^[a-z][a-z0-9_]{0,19}$`).MatchString(p) {
		p = "mqtest"
	}
	return fmt.Sprintf("%s_p%d", p, os.Getpid())
})

func dbName(what string) string {
	return fmt.Sprintf("%s_%d_%s", prefix(), time.Now().Unix(), strings.ToLower(what))
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
var templates = &templateSet{built: map[string]*templateBuild{}}

type templateSet struct {
	mu    sync.Mutex
	built map[string]*templateBuild
}

type templateBuild struct {
	mu   sync.Mutex
	name string
	done bool
}

// get answers the template named kind, made by build on first use. A build
// that fails is not remembered: the next test tries again (a moment of
// too many clients must not fail every later test of the process), and
// each failure reports its own cause.
func (ts *templateSet) get(kind string, build func() (string, error)) (string, error) {
	ts.mu.Lock()
	b := ts.built[kind]
	if b == nil {
		b = &templateBuild{}
		ts.built[kind] = b
	}
	ts.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return b.name, nil
	}
	name, err := build()
	if err != nil {
		return "", err
	}
	b.name, b.done = name, true
	return name, nil
}

// names lists the templates built so far.
func (ts *templateSet) names() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []string
	for _, b := range ts.built {
		b.mu.Lock()
		if b.done {
			out = append(out, b.name)
		}
		b.mu.Unlock()
	}
	return out
}

func buildTemplate(ctx context.Context, admin *bun.DB, name string, fill func(context.Context, *bun.DB) error) error {
	if err := dropStale(ctx, admin); err != nil {
		return err
	}
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	err := fillTemplate(ctx, name, fill)
	if err != nil {
		// Half-built: gone, so the next attempt starts clean.
		_, _ = admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
	}
	return err
}

func fillTemplate(ctx context.Context, name string, fill func(context.Context, *bun.DB) error) error {
	u, err := url.Parse(PostgresURL())
	if err != nil {
		return err
	}
	u.Path = "/" + name
	if err := store.Migrate(ctx, patient(u.String()), migrations.Migrations, store.MigrateOptions{}); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if fill == nil {
		return nil
	}
	db, err := openPatient(u.String())
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	// Copies need the template without connections: close before returning.
	defer db.Close()
	db.SetMaxOpenConns(PoolConns)
	if err := fill(ctx, db); err != nil {
		return fmt.Errorf("fill %s: %w", name, err)
	}
	return nil
}

// dropStale drops the test databases of any runner that are more than a day
// old: a run that was killed leaves its templates behind. Databases of
// other runners younger than that may be in use and are never touched.
func dropStale(ctx context.Context, admin *bun.DB) error {
	var names []string
	if err := admin.NewSelect().TableExpr("pg_database").Column("datname").Scan(ctx, &names); err != nil {
		return fmt.Errorf("list databases: %w", err)
	}
	for _, name := range names {
		m := namePattern.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		created, _ := strconv.ParseInt(m[1], 10, 64)
		if time.Since(time.Unix(created, 0)) < 24*time.Hour {
			continue
		}
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			return fmt.Errorf("drop stale %s: %w", name, err)
		}
	}
	return nil
}

// spentDatabases are the databases of tests that have ended, kept until
// the process ends (or until spentKeep of them wait) and then dropped in
// one go. Dropping each when its test ended made creating the next ones the
// suite's largest cost: a database is some 700 files, and on ext4 without
// a journal (as on the machines this suite runs on) the kernel skips every
// inode freed in the last 30 s when it allocates one (ialloc.c,
// recently_deleted), so with drops going on, each file PostgreSQL created
// scanned thousands of freed inodes: 70% of PostgreSQL's CPU in a profile
// of the server tests, whose run took 174 s and 229 CPU seconds against
// 112 s and 160 now.
var spentDatabases = &spentSet{}

// spentKeep bounds the disk the spent databases hold (a seeded demo is
// about 12 MB, so some 4 GB).
const spentKeep = 300

type spentSet struct {
	mu    sync.Mutex
	names []string
}

// add ends every connection a test left to name (a server it started, a
// job queue's pool), so the connection budget holds, and keeps the name
// for drop; past spentKeep names it drops them all now.
func (s *spentSet) add(admin *bun.DB, name string) error {
	if _, err := admin.ExecContext(context.Background(),
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?`, name); err != nil {
		return fmt.Errorf("end its connections: %w", err)
	}
	// pg_terminate_backend only signals: the next test's connections would
	// count against the budget beside those still exiting. A pool that
	// outlived its test and connects again is not waited for past the
	// limit (the drop ends it, with FORCE).
	if err := waitForNoBackends(admin, name, 10*time.Second); err != nil {
		return err
	}
	s.mu.Lock()
	s.names = append(s.names, name)
	full := len(s.names) >= spentKeep
	s.mu.Unlock()
	if full {
		return dropAll(admin, s.take())
	}
	return nil
}

// waitForNoBackends waits until no session is connected to name, or limit.
func waitForNoBackends(admin *bun.DB, name string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var n int
		if err := admin.NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE datname = ?`, name).
			Scan(context.Background(), &n); err != nil {
			return fmt.Errorf("count its connections: %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// take answers the spent databases and forgets them.
func (s *spentSet) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := s.names
	s.names = nil
	return names
}

func dropAll(admin *bun.DB, names []string) error {
	var errs []error
	for _, name := range names {
		if _, err := admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			errs = append(errs, fmt.Errorf("drop %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Cleanup drops this process's spent databases and templates; a package's
// TestMain calls it after m.Run (Main does both).
func Cleanup() {
	sqliteCleanup()
	names := append(spentDatabases.take(), templates.names()...)
	if len(names) == 0 {
		return
	}
	admin, err := adminDB()
	if err != nil {
		fmt.Fprintf(os.Stderr, "storetest: drop databases: %v\n", err)
		return
	}
	if err := dropAll(admin, names); err != nil {
		fmt.Fprintf(os.Stderr, "storetest: %v\n", err)
	}
	admin.Close()
}

// Main runs a package's tests and then drops the templates they made:
// `func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }`.
func Main(m *testing.M) int {
	code := m.Run()
	Cleanup()
	return code
}

// processRunning reports whether a process of this machine is alive (for
// SQLite template folders, which are this machine's own).
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

// sqliteCleanup removes this process's SQLite templates.
func sqliteCleanup() {
	if sqliteTemplates.names() == nil {
		return
	}
	if dir, err := sqliteDirOnce(); err == nil {
		os.RemoveAll(dir)
	}
}

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
	return EmptyPostgresConns(t, PoolConns+JobConns)
}

// EmptyPostgresConns is EmptyPostgres for a test that starts whole servers
// on it, reserving conns connections of the budget (see PostgresConns).
func EmptyPostgresConns(t testing.TB, conns int) string {
	t.Helper()
	ctx := context.Background()
	reserve(t, conns)
	admin, err := adminDB()
	if err != nil {
		t.Fatalf("open %s: %v", PostgresURL(), err)
	}
	name := dbName(randomHex())
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := spentDatabases.add(admin, name); err != nil {
			t.Errorf("database %s: %v", name, err)
		}
	})
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresURL(), err)
	}
	u.Path = "/" + name
	return u.String()
}
