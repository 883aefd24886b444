package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"marquee/assemble"
	"marquee/server/auth"
	"marquee/store"
	"marquee/store/storetest"
)

type failingArgs struct{}

func (failingArgs) Kind() string { return "test_failing" }

// TestOperatorCommands runs the operator's commands against a SQLite file,
// as `bin/marquee user|sessions|jobs|app ...` would, and checks what they
// changed in the data, and that every misuse is an error (exit 1).
func TestOperatorCommands(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { operatorCommands(t, filepath.Join(t.TempDir(), "op.db"), "") })
	t.Run("postgres+redis", func(t *testing.T) {
		redisURL := os.Getenv("TEST_REDIS_URL")
		if redisURL == "" {
			redisURL = storetest.DefaultRedisURL
		}
		operatorCommands(t, storetest.URL(storetest.Postgres(t)), redisURL)
	})
}

func operatorCommands(t *testing.T, dbURL, redisURL string) {
	dir := t.TempDir()
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("MEDIA_DIR", filepath.Join(dir, "media"))
	t.Setenv("REDIS_URL", redisURL)
	t.Setenv("S3_ENDPOINT", "")
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(stdin string, args ...string) (string, error) {
		var out strings.Builder
		err := operate(ctx, args, strings.NewReader(stdin), &out, logger)
		return out.String(), err
	}
	mustRun := func(stdin string, args ...string) string {
		t.Helper()
		out, err := run(stdin, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}

	out := mustRun("", "user", "create", "Ann@Example.test", "ann")
	if !strings.Contains(out, "created user ann") || !strings.Contains(out, "password: ") {
		t.Errorf("user create said %q", out)
	}
	generated := strings.TrimSpace(out[strings.Index(out, "password: ")+len("password: "):])
	mustRun("", "user", "create", "owner@example.test", "owner")
	for _, bad := range [][]string{
		{"user", "create", "ann@example.test", "ann2"},          // e-mail taken
		{"user", "create", "other@example.test", "ann"},         // username taken
		{"user", "create", "nobody", "x"},                       // not an e-mail
		{"user", "create", "x@example.test", "y", "--password"}, // unknown flag
		{"user", "disable", "nobody@example.test"},              // no such user
		{"sessions", "revoke", "nobody@example.test"},           // no such user
		{"jobs", "retry", "abc"},                                // not a job id
		{"jobs", "retry", "999999"},                             // no such job
		{"jobs", "failed", "--limit", "0"},                      // bad limit
		{"user", "frobnicate", "ann"},                           // unknown command
	} {
		if _, err := run("", bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := run("short\n", "user", "reset-password", "ann", "--password-stdin"); err == nil {
		t.Error("a too short password was accepted")
	}

	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Storage
	ann, err := s.UserByLogin(ctx, "ann@example.test")
	if err != nil || !ann.EmailVerified {
		t.Fatalf("ann after create: %+v %v", ann, err)
	}
	if ok, _ := auth.VerifyPassword(ann.PasswordHash, generated); !ok {
		t.Error("the printed password does not sign in")
	}
	signedIn := func(n int) []string {
		var tokens []string
		for i := 0; i < n; i++ {
			tok, err := s.CreateSession(ctx, ann.ID, "test")
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, tok)
		}
		return tokens
	}
	alive := func(tokens []string) int {
		n := 0
		for _, tok := range tokens {
			if _, err := s.SessionUser(ctx, tok); err == nil {
				n++
			}
		}
		return n
	}

	// sessions revoke: every session ends.
	tokens := signedIn(2)
	if alive(tokens) != 2 {
		t.Fatal("sessions not alive")
	}
	if out := mustRun("", "sessions", "revoke", "ann"); !strings.Contains(out, "2 session(s) ended") {
		t.Errorf("sessions revoke said %q", out)
	}
	// (The command ran in its own process, as the CLI does: this one
	// learns of it from the database once its memo of a second ends, or at
	// once over Redis - TestSignOutReachesEveryInstance.)
	s2 := reopen(t, ctx, logger)
	if n := aliveIn(ctx, s2, tokens); n != 0 {
		t.Errorf("%d sessions alive after sessions revoke", n)
	}

	// reset-password: the new password works, the old does not, sessions end.
	tokens = signedIn(1)
	mustRun("a-new-password-42\n", "user", "reset-password", "ann@example.test", "--password-stdin")
	u, _ := s2.UserByID(ctx, ann.ID)
	if ok, _ := auth.VerifyPassword(u.PasswordHash, "a-new-password-42"); !ok {
		t.Error("the new password does not verify")
	}
	if ok, _ := auth.VerifyPassword(u.PasswordHash, generated); ok {
		t.Error("the old password still verifies")
	}
	if aliveIn(ctx, s2, tokens) != 0 {
		t.Error("a session outlived the password reset")
	}

	// disable: no sign-in, no session, even one made after; enable undoes.
	tokens = signedIn(1)
	if out := mustRun("", "user", "disable", "ann"); !strings.Contains(out, "disabled; 1 session(s) ended") {
		t.Errorf("user disable said %q", out)
	}
	if _, err := s2.UserByLogin(ctx, "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a disabled user signs in: %v", err)
	}
	if aliveIn(ctx, s2, tokens) != 0 {
		t.Error("a session outlived disabling")
	}
	late, _ := s2.CreateSession(ctx, ann.ID, "raced")
	if aliveIn(ctx, s2, []string{late}) != 0 {
		t.Error("a session of a disabled user is honoured")
	}
	mustRun("", "user", "enable", "ann")
	if _, err := s2.UserByLogin(ctx, "ann"); err != nil {
		t.Errorf("an enabled user cannot sign in: %v", err)
	}

	// apps: list, status checked, delete only with --yes.
	for _, args := range [][]string{
		{"app", "create", "shop", "--creator", "owner@example.test"},
		{"app", "create", "gone", "--creator", "owner@example.test"},
		{"app", "set", "shop", "status=suspended"},
		{"app", "list"},
		{"app", "delete", "gone", "--yes"},
	} {
		if err := manage(ctx, args, logger); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	err = manage(ctx, []string{"app", "set", "shop", "status=PAUSED"}, logger)
	if err == nil || !strings.Contains(err.Error(), "PUBLIC, SUSPENDED") {
		t.Errorf("app set status=PAUSED: %v", err)
	}
	for _, bad := range [][]string{{"app", "delete", "shop"}, {"app", "delete", "nowhere", "--yes"}, {"app", "list", "x"}} {
		if err := manage(ctx, bad, logger); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	apps, err := s2.ListApps(ctx)
	if err != nil || len(apps) != 1 || apps[0].Name != "shop" || apps[0].Status != store.AppSuspended || apps[0].CreatorEmail != "owner@example.test" {
		t.Errorf("apps after delete: %+v %v", apps, err)
	}

	// user delete: refused for an app's owner, done for ann.
	if _, err := run("", "user", "delete", "owner"); err == nil || !strings.Contains(err.Error(), "owns an app") {
		t.Errorf("deleting an owner: %v", err)
	}
	mustRun("", "user", "delete", "ann")
	if u, _ := s2.UserByID(ctx, ann.ID); u.DeletedAt == nil {
		t.Error("ann not deleted")
	}
	if _, err := run("", "user", "delete", "ann@example.test"); err == nil {
		t.Error("deleting twice: no error")
	}

	// jobs: a failed (cancelled) job is listed, and retry makes it available.
	jobID, jobState := cancelledJob(t, ctx, a, dbURL)
	if err := s2.RecordPushFailure(ctx, store.PushSubscription{ID: "sub1", AppID: "app1", UserID: "u1", Endpoint: "https://push.example.test/x"}, "n1", 500, "push service answered 500"); err != nil {
		t.Fatal(err)
	}
	out = mustRun("", "jobs", "failed")
	if !strings.Contains(out, "test_failing") || !strings.Contains(out, "cancelled") || !strings.Contains(out, "1 failed job(s)") ||
		!strings.Contains(out, "push.example.test") || !strings.Contains(out, "1 failed push") {
		t.Errorf("jobs failed said:\n%s", out)
	}
	out = mustRun("", "jobs", "retry", fmtID(jobID))
	if !strings.Contains(out, "available") {
		t.Errorf("jobs retry said %q", out)
	}
	if st := jobState(); st != rivertype.JobStateAvailable {
		t.Errorf("job after retry: %s", st)
	}
	a.Close()
}

// cancelledJob inserts a job and cancels it (a failed job for `jobs
// failed`), with river's client for the database; state reads it back.
func cancelledJob(t *testing.T, ctx context.Context, a *assemble.App, dbURL string) (int64, func() rivertype.JobState) {
	t.Helper()
	var insert func() (*rivertype.JobRow, error)
	var cancel func(id int64) error
	var get func(id int64) (*rivertype.JobRow, error)
	if strings.HasPrefix(dbURL, "postgres") {
		pool, err := pgxpool.New(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
		if err != nil {
			t.Fatal(err)
		}
		insert = func() (*rivertype.JobRow, error) {
			r, err := rc.Insert(ctx, failingArgs{}, nil)
			if err != nil {
				return nil, err
			}
			return r.Job, nil
		}
		cancel = func(id int64) error { _, err := rc.JobCancel(ctx, id); return err }
		get = func(id int64) (*rivertype.JobRow, error) { return rc.JobGet(ctx, id) }
	} else {
		rc, err := river.NewClient(riversqlite.New(a.DB.DB), &river.Config{})
		if err != nil {
			t.Fatal(err)
		}
		insert = func() (*rivertype.JobRow, error) {
			r, err := rc.Insert(ctx, failingArgs{}, nil)
			if err != nil {
				return nil, err
			}
			return r.Job, nil
		}
		cancel = func(id int64) error { _, err := rc.JobCancel(ctx, id); return err }
		get = func(id int64) (*rivertype.JobRow, error) { return rc.JobGet(ctx, id) }
	}
	job, err := insert()
	if err != nil {
		t.Fatal(err)
	}
	if err := cancel(job.ID); err != nil {
		t.Fatal(err)
	}
	return job.ID, func() rivertype.JobState {
		j, err := get(job.ID)
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
}

func fmtID(id int64) string { return strconv.FormatInt(id, 10) }

// reopen is the storage a separate process (the next CLI run, or a
// server) would have: no memo of this process's sessions.
func reopen(t *testing.T, ctx context.Context, logger *slog.Logger) *store.Storage {
	t.Helper()
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a.Storage
}

func aliveIn(ctx context.Context, s *store.Storage, tokens []string) int {
	n := 0
	for _, tok := range tokens {
		if _, err := s.SessionUser(ctx, tok); err == nil {
			n++
		}
	}
	return n
}
