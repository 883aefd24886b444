package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/store"
	"marquee/store/storetest"
)

// noteArgs is a job that records that it ran.
type noteArgs struct {
	Note string `json:"note"`
}

func (noteArgs) Kind() string { return "test_note" }

type noteWorker struct {
	river.WorkerDefaults[noteArgs]
	mu   sync.Mutex
	runs map[string]int
}

func (w *noteWorker) Work(_ context.Context, job *river.Job[noteArgs]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs[job.Args.Note]++
	return nil
}

func (w *noteWorker) count(note string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[note]
}

func (w *noteWorker) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.runs {
		n += c
	}
	return n
}

func startQueue(t *testing.T, db *bun.DB, w *noteWorker) *jobs.Queue {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db, storetest.URL(db), quiet()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	q, err := jobs.New(ctx, jobs.Options{DB: db, DatabaseURL: storetest.URL(db), MaxConns: storetest.JobConns, Work: jobs.Work{Workers: workers}, Logger: quiet()})
	if err != nil {
		t.Fatalf("new queue: %v", err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatalf("start queue: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stopQueue(t, q)
		}
	})
	return q
}

func stopQueue(t *testing.T, q *jobs.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Stop(ctx); err != nil {
		t.Errorf("stop queue: %v", err)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A job exists exactly when the transaction that enqueued it commits, and a
// job enqueued while no queue runs is worked by the next one to start.
func TestJobsFollowTheirTransactionAndSurviveRestart(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if err := jobs.Migrate(ctx, db, storetest.URL(db), quiet()); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		// Enqueued with no server running (as the CLI or a crashed server
		// would leave it).
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return jobs.Enqueue(ctx, tx, noteArgs{Note: "committed"})
		}); err != nil {
			t.Fatal(err)
		}
		errRollback := errors.New("roll back")
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := jobs.Enqueue(ctx, tx, noteArgs{Note: "rolled back"}); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("rollback: %v", err)
		}

		w := &noteWorker{runs: map[string]int{}}
		q := startQueue(t, db, w)
		waitFor(t, "the committed job", func() bool { return w.count("committed") == 1 })

		// Work enqueued while the queue runs, then a restart in between.
		stopQueue(t, q)
		if err := jobs.Enqueue(ctx, db, noteArgs{Note: "while stopped"}); err != nil {
			t.Fatal(err)
		}
		w2 := &noteWorker{runs: map[string]int{}}
		startQueue(t, db, w2)
		waitFor(t, "the job enqueued while stopped", func() bool { return w2.count("while stopped") == 1 })
		time.Sleep(700 * time.Millisecond) // long enough for a second run to show
		if got := w.count("rolled back") + w2.count("rolled back"); got != 0 {
			t.Errorf("a job of a rolled-back transaction ran %d times", got)
		}
		if got := w.count("committed") + w2.count("committed"); got != 1 {
			t.Errorf("committed job ran %d times, want 1", got)
		}
		var left int
		if err := db.NewSelect().Model((*store.JobOutbox)(nil)).ColumnExpr("count(*)").Scan(ctx, &left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Errorf("%d jobs left in the outbox", left)
		}
	})
}

// Two server instances share the work: 100 jobs run exactly once each.
func TestTwoInstancesRunEachJobOnce(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	ctx := context.Background()
	a := &noteWorker{runs: map[string]int{}}
	b := &noteWorker{runs: map[string]int{}}
	startQueue(t, db, a)
	startQueue(t, db, b)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := jobs.Enqueue(ctx, db, noteArgs{Note: fmt.Sprint(i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	waitFor(t, "100 jobs", func() bool { return a.total()+b.total() >= 100 })
	time.Sleep(700 * time.Millisecond)
	for i := range 100 {
		if n := a.count(fmt.Sprint(i)) + b.count(fmt.Sprint(i)); n != 1 {
			t.Errorf("job %d ran %d times", i, n)
		}
	}
}

func TestSweepUploadsRemovesOnlyStaleTempFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	local := &media.Local{Dir: dir}
	stale := filepath.Join(dir, "media", ".upload-123")
	fresh := filepath.Join(dir, "media", ".upload-456")
	kept := filepath.Join(dir, "media", "photo.jpg")
	for _, p := range []string{stale, fresh, kept} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(kept, old, old); err != nil {
		t.Fatal(err)
	}
	w := &jobs.SweepUploadsWorker{Files: local, Logger: quiet()}
	if err := w.Work(context.Background(), &river.Job[jobs.SweepUploadsArgs]{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file still there (%v)", err)
	}
	for _, p := range []string{fresh, kept} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}
