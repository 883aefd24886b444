package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"

	"marquee/server/jobs"
	"marquee/store/storetest"
)

type failArgs struct{}

func (failArgs) Kind() string { return "test_fail" }

type failWorker struct {
	river.WorkerDefaults[failArgs]
}

func (failWorker) Work(context.Context, *river.Job[failArgs]) error {
	return errors.New("smtp: 554 relay refused")
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A job that fails (a mail the SMTP server refused) is logged with its
// kind and error and counted in marquee_job_failures_total (issue 41 item
// 7): it was neither.
func TestFailedJobsAreLoggedAndCounted(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db, storetest.URL(db), quiet()); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	failures := jobs.NewFailureCounter()
	workers := river.NewWorkers()
	river.AddWorker(workers, failWorker{})
	q, err := jobs.New(ctx, jobs.Options{DB: db, DatabaseURL: storetest.URL(db), MaxConns: storetest.JobConns, Work: jobs.Work{Workers: workers},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Failures: failures})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopQueue(t, q) })
	if err := jobs.Enqueue(ctx, db, failArgs{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failure counted", func() bool { return testutil.ToFloat64(failures.WithLabelValues("test_fail")) >= 1 })
	if out := logs.String(); !strings.Contains(out, `msg="job failed"`) || !strings.Contains(out, "kind=test_fail") ||
		!strings.Contains(out, "relay refused") {
		t.Errorf("log: %s", out)
	}
}
