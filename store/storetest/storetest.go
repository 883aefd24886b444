// Package storetest gives tests a fresh, migrated database: a throwaway
// PostgreSQL database (dropped at cleanup) or a SQLite file in t.TempDir().
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/migrations"
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

// Postgres creates a database named seedtest_<random> on the server of
// PostgresURL, migrates it and drops it when the test ends. Each test gets its
// own database so tests can run in parallel and never see each other's rows.
func Postgres(t testing.TB) *bun.DB {
	t.Helper()
	ctx := context.Background()
	base := PostgresURL()
	admin, err := store.Open(base)
	if err != nil {
		t.Fatalf("open %s: %v", base, err)
	}
	t.Cleanup(func() { admin.Close() })

	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "seedtest_" + hex.EncodeToString(b[:])
	// The name is generated here from hex digits, so quoting it is enough.
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		t.Fatalf("create database %s (is PostgreSQL running at %s?): %v", name, base, err)
	}

	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", base, err)
	}
	u.Path = "/" + name
	db, err := store.Open(u.String())
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	// Cleanups run last-in first-out: close our pool before dropping, and
	// FORCE ends any connection a test left behind.
	t.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	if err := store.Migrate(ctx, db, migrations.Migrations); err != nil {
		t.Fatalf("migrate %s: %v", name, err)
	}
	urls.Store(db, u.String())
	t.Cleanup(func() { urls.Delete(db) })
	return db
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

// SQLite opens a migrated SQLite file in a temporary folder.
func SQLite(t testing.TB) *bun.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := store.Migrate(context.Background(), db, migrations.Migrations); err != nil {
		t.Fatalf("migrate sqlite: %v", err)
	}
	return db
}

// Both runs fn against PostgreSQL and SQLite as subtests, since the product
// runs on both and their SQL differs in small ways.
func Both(t *testing.T, fn func(t *testing.T, db *bun.DB)) {
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
}
