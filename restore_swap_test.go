package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/assemble"
	"marquee/store"
	"marquee/store/storetest"
)

// TestRestoreForgetsWhatWasCached: two instances of one deployment share a
// Redis on PostgreSQL. After a backup, a member signs in and the app's bio
// changes (both cached in Redis); then `marquee restore` puts the backup
// back under the running instances. Every instance, and one started after
// the restore, refuses the session the restored database does not hold,
// and never shows the bio of the database before, even once a write moves
// the app to the version that bio was cached at.
func TestRestoreForgetsWhatWasCached(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	redisURL := os.Getenv("TEST_REDIS_URL")
	if redisURL == "" {
		redisURL = storetest.DefaultRedisURL
	}
	t.Setenv("DATABASE_URL", storetest.EmptyPostgres(t))
	t.Setenv("REDIS_URL", redisURL)
	t.Setenv("MEDIA_DIR", filepath.Join(t.TempDir(), "media"))
	t.Setenv("S3_ENDPOINT", "")
	if err := run(ctx, []string{"seed-demo"}, logger); err != nil {
		t.Fatal(err)
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	open := func() *assemble.App {
		t.Helper()
		a, err := assemble.FromEnv(ctx, logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		go a.Storage.WatchPageVersions(watchCtx)
		go a.Storage.WatchDatabase(watchCtx, 20*time.Millisecond)
		return a
	}
	a, b := open(), open()
	before := a.Storage.CurrentNamespace()
	if before != b.Storage.CurrentNamespace() {
		t.Fatalf("two instances of one database have namespaces %q and %q", before, b.Storage.CurrentNamespace())
	}

	file := filepath.Join(t.TempDir(), "backup.dump")
	if err := run(ctx, []string{"backup", file}, logger); err != nil {
		t.Fatalf("backup: %v", err)
	}
	member, err := a.Storage.UserByLogin(ctx, "follower@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	token, err := a.Storage.CreateSession(ctx, member.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	const stale, fresh = "Written after the backup 5512", "Written after the restore 5512"
	if err := a.Storage.SetAppField(ctx, "demo", "bio", stale); err != nil {
		t.Fatal(err)
	}
	landing := func(x *assemble.App) string {
		t.Helper()
		view, err := x.Storage.Landing(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(view)
		return string(out)
	}
	for _, x := range []*assemble.App{a, b} {
		if _, err := x.Storage.SessionUser(ctx, token); err != nil {
			t.Fatalf("the session before the restore: %v", err)
		}
		if !strings.Contains(landing(x), stale) {
			t.Fatal("the bio written after the backup is not shown before the restore")
		}
	}

	if err := run(ctx, []string{"restore", file}, logger); err != nil {
		t.Fatalf("restore: %v", err)
	}
	for _, x := range []*assemble.App{a, b} {
		for deadline := time.Now().Add(time.Minute); x.Storage.CurrentNamespace() == before; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("a running instance did not notice the restore")
			}
		}
	}
	c := open() // started after the restore
	if c.Storage.CurrentNamespace() == before {
		t.Error("the restored database kept the namespace of the one before")
	}
	for i, x := range []*assemble.App{a, b, c} {
		if _, err := x.Storage.SessionUser(ctx, token); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("instance %d: a session the restored database does not hold answered %v", i, err)
		}
		if strings.Contains(landing(x), stale) {
			t.Errorf("instance %d shows what the database before the restore held", i)
		}
	}
	// The write moves the app to the version the stale landing data was
	// cached at in Redis.
	if err := a.Storage.SetAppField(ctx, "demo", "bio", fresh); err != nil {
		t.Fatal(err)
	}
	for i, x := range []*assemble.App{a, b, c} {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			got := landing(x)
			if strings.Contains(got, stale) {
				t.Fatalf("instance %d shows what the database before the restore held", i)
			}
			if strings.Contains(got, fresh) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("instance %d never showed the write after the restore", i)
			}
		}
	}
}
