package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

// MigrateOptions are the choices of a caller of Migrate.
type MigrateOptions struct {
	// LockTimeout is how long to wait for another process's migrations
	// (MIGRATION_LOCK_TIMEOUT); 0 means DefaultMigrationLockTimeout.
	LockTimeout time.Duration
	Logger      *slog.Logger
	// Pending reports whether schema owned by someone else (river's tables)
	// is missing; Then creates it while the migration lock is held.
	Pending func(ctx context.Context) (bool, error)
	Then    func(ctx context.Context) error
	// AllowNewerSchema starts on a database that holds migrations this
	// binary does not know (ALLOW_NEWER_SCHEMA, for a rollback the
	// operator has checked): without it Migrate answers ErrNewerSchema.
	AllowNewerSchema bool
}

// ErrNewerSchema: the database was migrated by a newer binary.
var ErrNewerSchema = errors.New("the database schema is newer than this binary")

// DefaultMigrationLockTimeout is how long a start waits for another
// process's migrations before it gives up with a message saying why.
const DefaultMigrationLockTimeout = 5 * time.Minute

// ErrMigrationLockTimeout is returned when another session kept the
// migration lock past LockTimeout.
var ErrMigrationLockTimeout = errors.New("timed out waiting for the migration lock")

// The advisory lock's two keys: "marq" and the schema's number 1. Every
// marquee process migrating the same database takes this one lock.
const (
	migrationLockClass = 0x6D617271
	migrationLockObj   = 1
)

// Migrate brings the database at dsn up to date, safely with other
// processes starting at the same time and after a migrator that died:
//
//   - A database already up to date is left alone without taking any lock,
//     so CLI commands never queue behind each other or behind a start.
//   - Otherwise it waits (up to LockTimeout) for a PostgreSQL advisory lock.
//     The lock belongs to the migrator's session: a process killed
//     mid-way loses it with its connection, nothing is left to clean up.
//   - Each migration runs in its own transaction together with the row
//     that records it, so a migration is recorded only when all of it
//     happened, and one cut short leaves no trace and runs again next time.
//
// On SQLite (one file, no advisory locks) every migration's transaction
// begins IMMEDIATE, which serialises processes on the file's write lock,
// and rereads what is applied inside it.
func Migrate(ctx context.Context, dsn string, ms *migrate.Migrations, opts MigrateOptions) error {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultMigrationLockTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	// One connection: the advisory lock and each BEGIN ... COMMIT below
	// belong to the session, and the migration functions (which receive a
	// *bun.DB) run their statements on it, inside the open transaction.
	db, err := openMigrationDB(dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	pending, unknown, err := migrationsPending(ctx, db, ms)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		// An older binary on a newer schema: its queries may not match the
		// tables (a column it does not write, a constraint it breaks).
		sorted := ms.Sorted()
		known := "none"
		if len(sorted) > 0 {
			known = sorted[len(sorted)-1].Name
		}
		if !opts.AllowNewerSchema {
			return fmt.Errorf("%w: the database has migration %s (and %d more unknown here), this binary knows up to %s; "+
				"run the newer binary, or restore the backup taken before the upgrade, or set ALLOW_NEWER_SCHEMA=true to start anyway",
				ErrNewerSchema, unknown[len(unknown)-1], len(unknown)-1, known)
		}
		opts.Logger.Warn("starting on a newer database schema (ALLOW_NEWER_SCHEMA)", "database_newest", unknown[len(unknown)-1],
			"binary_newest", known, "unknown_migrations", len(unknown))
	}
	if !pending && opts.Pending != nil {
		if pending, err = opts.Pending(ctx); err != nil {
			return err
		}
	}
	if !pending {
		return nil
	}
	sqlite := db.Dialect().Name() == dialect.SQLite
	if !sqlite {
		unlock, err := lockMigrations(ctx, db, opts.LockTimeout, opts.Logger)
		if err != nil {
			return err
		}
		defer unlock()
	}
	m := migrate.NewMigrator(db, ms)
	if err := inTx(ctx, db, sqlite, func() error { return m.Init(ctx) }); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	for _, mig := range ms.Sorted() {
		start := time.Now()
		applied, err := applyOne(ctx, db, m, sqlite, mig)
		if err != nil {
			return err
		}
		if applied {
			opts.Logger.Info("applied migration", "migration", mig.Name, "took", time.Since(start).Round(time.Millisecond))
		}
	}
	if opts.Then != nil {
		if err := opts.Then(ctx); err != nil {
			return err
		}
	}
	return nil
}

// migrationsPending reads, without a lock, whether any migration of ms is
// not recorded, and which recorded ones ms does not know (sorted). A
// missing table (an empty database) is pending.
func migrationsPending(ctx context.Context, db *bun.DB, ms *migrate.Migrations) (bool, []string, error) {
	var names []string
	if err := db.NewSelect().TableExpr("bun_migrations").Column("name").Order("name").Scan(ctx, &names); err != nil {
		if isMissingTable(err) {
			return true, nil, nil
		}
		return false, nil, fmt.Errorf("read applied migrations: %w", err)
	}
	applied := make(map[string]bool, len(names))
	for _, n := range names {
		applied[n] = true
	}
	known := map[string]bool{}
	pending := false
	for _, mig := range ms.Sorted() {
		known[mig.Name] = true
		if !applied[mig.Name] {
			pending = true
		}
	}
	var unknown []string
	for _, n := range names {
		if !known[n] {
			unknown = append(unknown, n)
		}
	}
	return pending, unknown, nil
}

func isMissingTable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "does not exist") || strings.Contains(msg, "no such table") || strings.Contains(msg, "42P01")
}

// lockMigrations waits for the advisory lock, telling the operator once
// that it waits and for whom, and gives up after timeout with a message
// that says which session holds it.
func lockMigrations(ctx context.Context, db *bun.DB, timeout time.Duration, logger *slog.Logger) (func(), error) {
	deadline := time.Now().Add(timeout)
	told := false
	for {
		var got bool
		if err := db.NewRaw("SELECT pg_try_advisory_lock(?, ?)", migrationLockClass, migrationLockObj).Scan(ctx, &got); err != nil {
			return nil, fmt.Errorf("take the migration lock: %w", err)
		}
		if got {
			return func() {
				// A session that ends releases the lock anyway; unlocking
				// keeps it short when the process goes on serving.
				_, _ = db.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?, ?)", migrationLockClass, migrationLockObj)
			}, nil
		}
		holder := migrationLockHolder(ctx, db)
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("migrations: %w: %s has held it for over %s; if no marquee process is migrating, end that session (SELECT pg_terminate_backend(pid)) or raise MIGRATION_LOCK_TIMEOUT",
				ErrMigrationLockTimeout, holder, timeout)
		}
		if !told {
			logger.Info("waiting for another process to finish migrating", "holder", holder, "timeout", timeout.String())
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the migration lock: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func migrationLockHolder(ctx context.Context, db *bun.DB) string {
	var row struct {
		PID   int    `bun:"pid"`
		App   string `bun:"app"`
		Addr  string `bun:"addr"`
		Since string `bun:"since"`
	}
	err := db.NewRaw(`SELECT a.pid, coalesce(a.application_name, '') AS app, coalesce(host(a.client_addr), 'local') AS addr,
		coalesce(to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS'), '') AS since
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = ? AND l.objid = ? AND l.objsubid = 2`,
		migrationLockClass, migrationLockObj).Scan(ctx, &row)
	if err != nil {
		return "another session"
	}
	return fmt.Sprintf("PostgreSQL session pid %d (from %s, connected %s)", row.PID, row.Addr, row.Since)
}

// applyOne runs one migration and records it in one transaction, unless
// it is already recorded (by another process, on SQLite).
// applyOne runs one migration unless it is recorded, and says whether it
// ran.
func applyOne(ctx context.Context, db *bun.DB, m *migrate.Migrator, sqlite bool, mig migrate.Migration) (bool, error) {
	ran := false
	err := inTx(ctx, db, sqlite, func() error {
		n, err := db.NewSelect().TableExpr("bun_migrations").Where("name = ?", mig.Name).Count(ctx)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", mig.Name, err)
		}
		if n > 0 {
			return nil
		}
		ran = true
		var group int64
		if err := db.NewSelect().TableExpr("bun_migrations").ColumnExpr("coalesce(max(group_id), 0) + 1").Scan(ctx, &group); err != nil {
			return fmt.Errorf("read migration groups: %w", err)
		}
		mig.GroupID = group
		if mig.Up != nil {
			if err := mig.Up(ctx, m, &mig); err != nil {
				return fmt.Errorf("migration %s failed and was rolled back (nothing recorded): %w", mig.Name, err)
			}
		}
		if err := m.MarkApplied(ctx, &mig); err != nil {
			return fmt.Errorf("record migration %s: %w", mig.Name, err)
		}
		return nil
	})
	return ran && err == nil, err
}

// inTx runs fn between BEGIN and COMMIT on db's single connection.
func inTx(ctx context.Context, db *bun.DB, sqlite bool, fn func() error) error {
	begin := "BEGIN"
	if sqlite {
		begin = "BEGIN IMMEDIATE"
	}
	if _, err := db.ExecContext(ctx, begin); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(); err != nil {
		_, _ = db.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if _, err := db.ExecContext(ctx, "COMMIT"); err != nil {
		_, _ = db.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
