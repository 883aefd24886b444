package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"marquee/store"
	"marquee/store/migrations"
	"marquee/store/storetest"
)

// withExtra is the product's migrations plus one more, named after every
// real one, whose body is up.
func withExtra(name string, up func(ctx context.Context, db *bun.DB) error) *migrate.Migrations {
	ms := migrate.NewMigrations()
	for _, m := range migrations.Migrations.Sorted() {
		ms.Add(m)
	}
	ms.Add(migrate.Migration{Name: name, Comment: "extra",
		Up: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error { return up(ctx, m.DB()) }})
	return ms
}

// halfDone creates a table and a row in its own transaction (which
// Migrate turns into a savepoint of the migration's), then calls pause.
func halfDone(pause func()) func(ctx context.Context, db *bun.DB) error {
	return func(ctx context.Context, db *bun.DB) error {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE "half_done" ("id" INTEGER NOT NULL)`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO "half_done" VALUES (1)`)
			return err
		})
		if err != nil {
			return err
		}
		pause()
		return nil
	}
}

func appliedCount(t *testing.T, db *bun.DB, name string) int {
	t.Helper()
	n, err := db.NewSelect().TableExpr("bun_migrations").Where("name = ?", name).Count(context.Background())
	if err != nil {
		t.Fatalf("count applied %s: %v", name, err)
	}
	return int(n)
}

// Instances and CLI commands start together on an empty database: every
// one of them succeeds, each migration runs once and is recorded once.
func TestMigrateConcurrentStartsOnEmptyDatabase(t *testing.T) {
	t.Parallel()
	dsn := storetest.EmptyPostgres(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 13)
	for i := 0; i < 13; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- store.Migrate(ctx, dsn, migrations.Migrations, store.MigrateOptions{LockTimeout: time.Minute})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("migrate: %v", err)
		}
	}
	db, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []struct {
		Name string `bun:"name"`
		N    int    `bun:"n"`
	}
	if err := db.NewSelect().TableExpr("bun_migrations").ColumnExpr("name, count(*) AS n").Group("name").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(migrations.Migrations.Sorted()) {
		t.Errorf("%d migrations recorded, want %d", len(rows), len(migrations.Migrations.Sorted()))
	}
	for _, r := range rows {
		if r.N != 1 {
			t.Errorf("migration %s recorded %d times", r.Name, r.N)
		}
	}
}

// A database that is up to date is never locked: a command starting while
// another session holds the migration lock goes on at once. A pending
// migration waits, and past the timeout says who holds the lock.
func TestMigrateLockOnlyWhenSomethingIsPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.EmptyPostgres(t)
	if err := store.Migrate(ctx, dsn, migrations.Migrations, store.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	holder, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(1835102833, 1)"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := store.Migrate(ctx, dsn, migrations.Migrations, store.MigrateOptions{LockTimeout: 20 * time.Second}); err != nil {
		t.Fatalf("up to date, lock held elsewhere: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("an up-to-date migrate waited %s for the lock", d)
	}

	extra := withExtra("29991231000001", halfDone(func() {}))
	err = store.Migrate(ctx, dsn, extra, store.MigrateOptions{LockTimeout: 300 * time.Millisecond})
	if !errors.Is(err, store.ErrMigrationLockTimeout) {
		t.Fatalf("pending migration with the lock held: %v, want ErrMigrationLockTimeout", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "pid") || !strings.Contains(msg, "MIGRATION_LOCK_TIMEOUT") || strings.Contains(msg, "\n") {
		t.Errorf("timeout message %q: want one line naming the holder's pid and MIGRATION_LOCK_TIMEOUT", msg)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock(1835102833, 1)"); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, dsn, extra, store.MigrateOptions{LockTimeout: 20 * time.Second}); err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
	if n := appliedCount(t, holder, "29991231000001"); n != 1 {
		t.Errorf("extra migration recorded %d times", n)
	}
}

// A migration that fails leaves nothing behind, not even what it did
// before failing, and is not recorded; fixed, it runs on the next start.
func TestMigrateFailureRecordsNothing(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, dsn string) {
		ctx := context.Background()
		broken := withExtra("29991231000002", halfDone(func() {}))
		broken.Add(migrate.Migration{Name: "29991231000003", Comment: "broken",
			Up: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
				if _, err := m.DB().ExecContext(ctx, `CREATE TABLE "broken_half" ("id" INTEGER)`); err != nil {
					return err
				}
				return errors.New("boom")
			}})
		err := store.Migrate(ctx, dsn, broken, store.MigrateOptions{})
		if err == nil || !strings.Contains(err.Error(), "29991231000003") || !strings.Contains(err.Error(), "rolled back") {
			t.Fatalf("broken migration: %v", err)
		}
		db, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if n := appliedCount(t, db, "29991231000003"); n != 0 {
			t.Errorf("failed migration recorded %d times", n)
		}
		if _, err := db.ExecContext(ctx, `SELECT count(*) FROM "broken_half"`); err == nil {
			t.Errorf("the failed migration's table survived its rollback")
		}
		// The migrations before it were applied and recorded, once.
		if n := appliedCount(t, db, "29991231000002"); n != 1 {
			t.Errorf("earlier migration recorded %d times", n)
		}
		fixed := withExtra("29991231000002", halfDone(func() {}))
		fixed.Add(migrate.Migration{Name: "29991231000003", Comment: "fixed",
			Up: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
				_, err := m.DB().ExecContext(ctx, `CREATE TABLE "broken_half" ("id" INTEGER)`)
				return err
			}})
		if err := store.Migrate(ctx, dsn, fixed, store.MigrateOptions{}); err != nil {
			t.Fatalf("fixed migration: %v", err)
		}
		if n := appliedCount(t, db, "29991231000003"); n != 1 {
			t.Errorf("fixed migration recorded %d times", n)
		}
	}
	t.Run("postgres", func(t *testing.T) { run(t, storetest.EmptyPostgres(t)) })
	t.Run("sqlite", func(t *testing.T) { run(t, filepath.Join(t.TempDir(), "m.db")) })
}

// A migrator killed (SIGKILL) in the middle of a migration leaves neither
// a lock nor a record: the next start waits for nothing and runs the
// migration whole, once.
func TestMigrateKilledMidWayRecovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.EmptyPostgres(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrateHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MARQUEE_MIGRATE_HELPER="+dsn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	halfway := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "HALFWAY" {
				halfway <- true
			}
		}
		close(halfway)
	}()
	select {
	case ok := <-halfway:
		if !ok {
			t.Fatal("the helper ended before reaching the middle of its migration")
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the helper never reached the middle of its migration")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	var half int
	start := time.Now()
	extra := withExtra("29991231000001", halfDone(func() { half++ }))
	if err := store.Migrate(ctx, dsn, extra, store.MigrateOptions{LockTimeout: 30 * time.Second}); err != nil {
		t.Fatalf("start after the kill: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the start after the kill waited %s", d)
	}
	if half != 1 {
		t.Errorf("the killed migration ran %d times on the next start, want 1", half)
	}
	db, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.NewSelect().TableExpr("half_done").Count(ctx)
	if err != nil || rows != 1 {
		t.Errorf("half_done has %d rows (%v), want the one row of the complete run", rows, err)
	}
	if n := appliedCount(t, db, "29991231000001"); n != 1 {
		t.Errorf("migration recorded %d times", n)
	}
}

// TestMigrateHelperProcess is the migrator TestMigrateKilledMidWayRecovers
// kills: it migrates and stops in the middle of the last migration.
func TestMigrateHelperProcess(t *testing.T) {
	dsn := os.Getenv("MARQUEE_MIGRATE_HELPER")
	if dsn == "" {
		t.Skip("run by TestMigrateKilledMidWayRecovers")
	}
	extra := withExtra("29991231000001", halfDone(func() {
		fmt.Println("HALFWAY")
		time.Sleep(time.Minute)
	}))
	err := store.Migrate(context.Background(), dsn, extra, store.MigrateOptions{})
	t.Fatalf("the helper was meant to be killed, but migrate returned %v", err)
}

// The role history migration backfills every membership of the time as a
// join at the membership's created_at, on PostgreSQL and SQLite; the
// analytics then count those members from their join.
func TestMigrateBackfillsRoleHistory(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, dsn string) {
		ctx := context.Background()
		before := migrate.NewMigrations()
		for _, m := range migrations.Migrations.Sorted() {
			if m.Name < "20261126200002" {
				before.Add(m)
			}
		}
		if err := store.Migrate(ctx, dsn, before, store.MigrateOptions{}); err != nil {
			t.Fatal(err)
		}
		db, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		joined := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		for _, stmt := range []string{
			`INSERT INTO users (id, username, email, password_hash, created_at, updated_at) VALUES ('u1', 'ann', 'ann@x.test', 'x', ?0, ?0), ('u2', 'bob', 'bob@x.test', 'x', ?0, ?0)`,
			`INSERT INTO apps (id, name, status, version, creator_id, settings, created_at, updated_at) VALUES ('a1', 'old', 'PUBLIC', '1', 'u1', '{}', ?0, ?0)`,
			`INSERT INTO memberships (id, app_id, user_id, role, created_at) VALUES ('m1', 'a1', 'u1', 'CREATOR', ?0), ('m2', 'a1', 'u2', 'MODERATOR', ?1)`,
		} {
			if _, err := db.NewRaw(stmt, joined, joined.AddDate(0, 1, 0)).Exec(ctx); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		if err := store.Migrate(ctx, dsn, migrations.Migrations, store.MigrateOptions{}); err != nil {
			t.Fatal(err)
		}
		s := store.New(store.Options{DB: db})
		h, err := s.RoleHistory(ctx, "a1")
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2 || h[0].UserID != "u1" || h[0].Role != store.RoleCreator || h[0].Previous != "" || !h[0].CreatedAt.Equal(joined) ||
			h[1].UserID != "u2" || h[1].Role != store.RoleModerator || !h[1].CreatedAt.Equal(joined.AddDate(0, 1, 0)) {
			t.Fatalf("backfilled history: %+v", h)
		}
		a, err := s.AppAnalytics(ctx, "a1", store.AnalyticsRange{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Bucket: store.BucketMonth})
		if err != nil {
			t.Fatal(err)
		}
		want := []store.MembersRow{{Period: "2026-03", Creators: 1, NewMembers: 1}, {Period: "2026-04", Creators: 1, Moderators: 1, NewMembers: 1}}
		if fmt.Sprint(a.Members) != fmt.Sprint(want) {
			t.Errorf("members from the backfill: %+v, want %+v", a.Members, want)
		}
	}
	t.Run("postgres", func(t *testing.T) { run(t, storetest.EmptyPostgres(t)) })
	t.Run("sqlite", func(t *testing.T) { run(t, filepath.Join(t.TempDir(), "m.db")) })
}

// Migrate logs each migration it applies; an older binary (one that does
// not know a migration the database holds) refuses to start, naming both
// versions, unless AllowNewerSchema (issue 41 item 14).
func TestOlderBinaryRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "schema.db")
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	newer := withExtra("29991231000009", func(context.Context, *bun.DB) error { return nil })
	if err := store.Migrate(ctx, dsn, newer, store.MigrateOptions{Logger: logger}); err != nil {
		t.Fatal(err)
	}
	sorted := migrations.Migrations.Sorted()
	known := sorted[len(sorted)-1].Name
	for _, name := range []string{sorted[0].Name, known, "29991231000009"} {
		if !strings.Contains(logs.String(), `msg="applied migration" migration=`+name) {
			t.Errorf("no log line for migration %s:\n%s", name, logs.String())
		}
	}
	err := store.Migrate(ctx, dsn, migrations.Migrations, store.MigrateOptions{Logger: logger})
	if !errors.Is(err, store.ErrNewerSchema) || !strings.Contains(err.Error(), "29991231000009") || !strings.Contains(err.Error(), known) ||
		!strings.Contains(err.Error(), "ALLOW_NEWER_SCHEMA") {
		t.Fatalf("older binary on a newer schema: %v", err)
	}
	if err := store.Migrate(ctx, dsn, migrations.Migrations, store.MigrateOptions{Logger: logger, AllowNewerSchema: true}); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	if !strings.Contains(logs.String(), "newer database schema") {
		t.Errorf("no warning when allowed:\n%s", logs.String())
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Issue 41's data migrations, on PostgreSQL and SQLite: event update
// notices written before they named their event take it from their link
// (20261130110100, so hiding the event hides them), and bans on Gmail
// addresses are stored by mailbox (20261130110000).
func TestMigrateIssue41Backfills(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, dsn string) {
		ctx := context.Background()
		before := migrate.NewMigrations()
		for _, m := range migrations.Migrations.Sorted() {
			if m.Name < "20261130110000" {
				before.Add(m)
			}
		}
		if err := store.Migrate(ctx, dsn, before, store.MigrateOptions{}); err != nil {
			t.Fatal(err)
		}
		db, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		now := time.Now().UTC()
		for _, stmt := range []string{
			`INSERT INTO users (id, username, email, password_hash, created_at, updated_at) VALUES ('u1', 'ann', 'ann@x.test', 'x', ?0, ?0), ('u2', 'bob', 'j.doe+x@googlemail.com', 'x', ?0, ?0)`,
			`INSERT INTO apps (id, name, status, version, creator_id, settings, created_at, updated_at) VALUES ('a1', 'old', 'PUBLIC', '1', 'u1', '{}', ?0, ?0)`,
			`INSERT INTO events (id, app_id, creator_id, name, start_date, end_date, created_at, updated_at) VALUES ('e1', 'a1', 'u1', 'Picnic', ?0, ?0, ?0, ?0)`,
			`INSERT INTO notifications (id, app_id, user_id, content, kind, link, source, created_at) VALUES
				('n1', 'a1', 'u2', 'Event updated: Picnic', 'EVENT_UPDATE', '/apps/old/events/e1', '', ?0),
				('n2', 'a1', 'u2', 'Event cancelled: Gone', 'EVENT_UPDATE', '/apps/old/events', '', ?0),
				('n3', 'a1', 'u2', 'New post', 'NEW_POST', '/apps/old/posts/p1', 'message:p1', ?0)`,
			`INSERT INTO bans (id, app_id, user_id, email, kind, reason, created_by, created_at) VALUES
				('b1', 'a1', 'u2', 'j.doe+x@googlemail.com', 'BAN', '', 'u1', ?0), ('b2', 'a1', 'u3', 'jane.roe@example.com', 'BAN', '', 'u1', ?0)`,
		} {
			if _, err := db.NewRaw(stmt, now).Exec(ctx); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		if err := store.Migrate(ctx, dsn, migrations.Migrations, store.MigrateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		var rows []struct {
			ID     string `bun:"id"`
			Source string `bun:"source"`
		}
		if err := db.NewSelect().Table("notifications").Column("id", "source").Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			got[r.ID] = r.Source
		}
		var bans []struct {
			ID    string `bun:"id"`
			Email string `bun:"email"`
		}
		if err := db.NewSelect().Table("bans").Column("id", "email").Scan(ctx, &bans); err != nil {
			t.Fatal(err)
		}
		for _, b := range bans {
			got[b.ID] = b.Email
		}
		want := map[string]string{"n1": "event:e1", "n2": "", "n3": "message:p1", "b1": "jdoe@gmail.com", "b2": "jane.roe@example.com"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after the migrations: %v, want %v", got, want)
		}
	}
	t.Run("postgres", func(t *testing.T) { run(t, storetest.EmptyPostgres(t)) })
	t.Run("sqlite", func(t *testing.T) { run(t, filepath.Join(t.TempDir(), "m.db")) })
}
