package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// MaxPostgresConns bounds one process's connections to PostgreSQL; with
// river's own small pool it leaves room for several instances.
const MaxPostgresConns = 20

// Open connects to PostgreSQL when dsn is a postgres:// URL and otherwise
// treats dsn as a SQLite file path (the embedded default).
func Open(dsn string) (*bun.DB, error) {
	if isPostgresURL(dsn) {
		sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
		// A burst of requests waits for a connection instead of opening one
		// each: PostgreSQL refuses clients past max_connections (100 by
		// default), which would turn a busy minute into 503s.
		sqldb.SetMaxOpenConns(MaxPostgresConns)
		sqldb.SetMaxIdleConns(MaxPostgresConns)
		return bun.NewDB(sqldb, pgdialect.New()), nil
	}
	path, err := sqliteDSN(dsn)
	if err != nil {
		return nil, err
	}
	sqldb, err := sql.Open(sqliteshim.ShimName, path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", dsn, err)
	}
	return bun.NewDB(sqldb, sqlitedialect.New()), nil
}

func isPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// sqliteDSN is the driver's name for the SQLite file dsn, with the
// connection settings every connection gets.
func sqliteDSN(dsn string) (string, error) {
	path := strings.TrimPrefix(dsn, "sqlite://")
	if path != ":memory:" && !strings.HasPrefix(path, "file:") {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("create database folder: %w", err)
		}
		path = "file:" + path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	// WAL and a busy timeout let the server's concurrent requests share one
	// file; foreign keys are off by default in SQLite.
	// Transactions begin IMMEDIATE: a deferred one that reads and then
	// writes must upgrade its lock, and SQLite answers SQLITE_BUSY at once to
	// an upgrade while another writer (a background job) holds the lock,
	// without waiting out busy_timeout. Taking the write lock at BEGIN makes
	// concurrent writers queue instead.
	return path + sep + "_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_txlock=immediate", nil
}

// Ping reports whether the database answers.
func Ping(ctx context.Context, db *bun.DB) error {
	var one int
	if err := db.NewSelect().ColumnExpr("1").Scan(ctx, &one); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}
