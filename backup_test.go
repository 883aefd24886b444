package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"marquee/assemble"
	"marquee/store"
	"marquee/store/storetest"
)

// backup, wipe, restore: the same data comes back, on SQLite (an online
// backup while the database is open) and on PostgreSQL (pg_dump).
func TestBackupAndRestore(t *testing.T) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "m.db") },
		"postgres": func(t *testing.T) string { return storetest.EmptyPostgres(t) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			t.Setenv("DATABASE_URL", dsn(t))
			t.Setenv("MEDIA_DIR", filepath.Join(t.TempDir(), "media"))
			t.Setenv("REDIS_URL", "")
			t.Setenv("S3_ENDPOINT", "")
			if err := run(ctx, []string{"seed-demo"}, logger); err != nil {
				t.Fatal(err)
			}
			count := func() (users, posts int) {
				a, err := assemble.FromEnv(ctx, logger)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				u, _ := a.DB.NewSelect().Model((*store.User)(nil)).Count(ctx)
				p, _ := a.DB.NewSelect().Model((*store.Message)(nil)).Count(ctx)
				return int(u), int(p)
			}
			users, posts := count()
			if users == 0 || posts == 0 {
				t.Fatalf("seeded %d users, %d posts", users, posts)
			}
			// Online: a process holds the database open during the backup.
			open, err := assemble.FromEnv(ctx, logger)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "backup.dump")
			if err := run(ctx, []string{"backup", file}, logger); err != nil {
				t.Fatalf("backup: %v", err)
			}
			if err := run(ctx, []string{"backup", file}, logger); err == nil {
				t.Error("a backup overwrote an existing file")
			}
			// Wipe: the whole database goes.
			if name == "postgres" {
				if _, err := open.DB.ExecContext(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public"); err != nil {
					t.Fatal(err)
				}
				open.Close()
			} else {
				open.Close()
				for _, f := range []string{"", "-wal", "-shm"} {
					os.Remove(os.Getenv("DATABASE_URL") + f)
				}
			}
			if _, p := count(); p != 0 {
				t.Fatalf("wipe left %d posts", p)
			}
			if err := run(ctx, []string{"restore", file}, logger); err != nil {
				t.Fatalf("restore: %v", err)
			}
			if u, p := count(); u != users || p != posts {
				t.Errorf("restored %d users and %d posts, backed up %d and %d", u, p, users, posts)
			}
		})
	}
}
