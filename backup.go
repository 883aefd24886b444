package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"marquee/server"
	"marquee/store"
)

// backup writes a consistent copy of the database to file while the
// server keeps running: SQLite's VACUUM INTO (an online backup, unlike
// copying a file that is being written, with its WAL beside it), or
// pg_dump's custom format for PostgreSQL. Media files are not in it: back
// up MEDIA_DIR or the S3 bucket on their own.
func backup(ctx context.Context, args []string, logger *slog.Logger) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: marquee backup FILE")
	}
	file, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("backup: %s exists; choose a new file", file)
	}
	cfg, err := server.LoadConfig(nil)
	if err != nil {
		return err
	}
	if strings.HasPrefix(cfg.DatabaseURL, "postgres://") || strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
		cmd := exec.CommandContext(ctx, "pg_dump", "--format=custom", "--no-owner", "--file="+file, "--dbname="+libpqURL(cfg.DatabaseURL))
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Remove(file)
			return fmt.Errorf("backup: pg_dump failed (is it installed, the same major version as the server?): %w: %s", err, firstLine(out))
		}
	} else {
		db, err := store.Open(cfg.DatabaseURL)
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, "VACUUM INTO ?", file); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	logger.Info("backup written", "file", file)
	return nil
}

// restore replaces the database with a backup. Stop every instance first:
// SQLite's file is replaced, PostgreSQL's tables are dropped and recreated
// from the dump in one transaction.
func restore(ctx context.Context, args []string, logger *slog.Logger) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: marquee restore FILE")
	}
	file := args[0]
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	cfg, err := server.LoadConfig(nil)
	if err != nil {
		return err
	}
	if strings.HasPrefix(cfg.DatabaseURL, "postgres://") || strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
		cmd := exec.CommandContext(ctx, "pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction",
			"--dbname="+libpqURL(cfg.DatabaseURL), file)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("restore: pg_restore failed: %w: %s", err, firstLine(out))
		}
	} else {
		path := strings.TrimPrefix(strings.TrimPrefix(cfg.DatabaseURL, "sqlite://"), "file:")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if err := copyFile(file, path+".restoring"); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		for _, side := range []string{path + "-wal", path + "-shm"} {
			if err := os.Remove(side); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("restore: %w", err)
			}
		}
		if err := os.Rename(path+".restoring", path); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	// A new generation: the restored database's namespace in Redis is a
	// new one, so no instance reads what was cached from the database
	// before (a deleted post, a session the backup does not hold), and
	// instances still running notice the swap and drop their own caches
	// (store/namespace.go).
	db, err := store.Open(cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer db.Close()
	if err := store.RenewGeneration(ctx, db); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	logger.Info("database restored; every instance drops what it cached from the one before", "file", file)
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// libpqURL keeps the parameters pg_dump understands (the Go driver takes
// some of its own, such as read_timeout, which libpq refuses).
func libpqURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := url.Values{}
	for k, v := range u.Query() {
		switch k {
		case "sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "application_name", "options":
			q[k] = v
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
