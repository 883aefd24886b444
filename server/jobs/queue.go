// Package jobs runs background work (order expiry, notification fan-out,
// push delivery, renewals) as durable jobs on riverqueue/river.
//
// A request never talks to river directly. It calls Enqueue inside its own
// bun transaction, which writes a row to job_outbox; the job exists exactly
// when the write that caused it commits. The queue moves outbox rows into
// river in one transaction of river's own driver (pgx on PostgreSQL,
// database/sql on SQLite), so a crash between the two loses nothing and
// duplicates nothing. This is the outbox pattern: river's database/sql
// driver for PostgreSQL, which would let river share bun's transaction, is
// not published for the river version that has the SQLite driver.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"marquee/store"
)

// Enqueue records args as a job inside db, which should be the transaction
// of the write that causes the job. It needs no running queue: the server,
// the CLI and tests all enqueue the same way.
func Enqueue(ctx context.Context, db bun.IDB, args river.JobArgs) error {
	body, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("encode %s job: %w", args.Kind(), err)
	}
	row := &store.JobOutbox{Kind: args.Kind(), Args: string(body), CreatedAt: time.Now().UTC()}
	if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
		return fmt.Errorf("enqueue %s job: %w", args.Kind(), err)
	}
	return nil
}

// storedArgs hands an outbox row to river unchanged.
type storedArgs struct {
	kind string
	args json.RawMessage
}

func (a storedArgs) Kind() string                 { return a.kind }
func (a storedArgs) MarshalJSON() ([]byte, error) { return a.args, nil }

// outboxRows is what both drivers' query results offer (pgx.Rows, *sql.Rows).
type outboxRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// outboxParams reads taken outbox rows (kind, args) as river inserts.
func outboxParams(rows outboxRows) ([]river.InsertManyParams, error) {
	var params []river.InsertManyParams
	for rows.Next() {
		var kind, args string
		if err := rows.Scan(&kind, &args); err != nil {
			return nil, fmt.Errorf("read outbox row: %w", err)
		}
		params = append(params, river.InsertManyParams{Args: storedArgs{kind: kind, args: json.RawMessage(args)}})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	return params, nil
}

// Work is what a queue runs: the workers and the jobs that repeat.
type Work struct {
	Workers  *river.Workers
	Periodic []*river.PeriodicJob
}

// Options configure a queue. DatabaseURL is the PostgreSQL URL river
// connects to with its own pool; it is ignored on SQLite, where river uses
// bun's *sql.DB.
type Options struct {
	DB          *bun.DB
	DatabaseURL string
	Work        Work
	Logger      *slog.Logger
	// MaxWorkers bounds concurrent jobs in this process (default 10).
	MaxWorkers int
	// PollInterval is how often the outbox is checked (default 200 ms).
	PollInterval time.Duration
	// JobRetention is how long river keeps finished jobs (completed,
	// cancelled) before its cleaner deletes them (JOB_RETENTION, default
	// 24h); discarded (failed) jobs are kept four times as long, for
	// `marquee jobs failed`.
	JobRetention time.Duration
	// MaxConns bounds the queue's own PostgreSQL pool (default 4): river
	// keeps one connection listening and works through the others.
	MaxConns int
	// Failures counts failed job attempts by kind (the server's
	// marquee_job_failures_total); nil counts nothing.
	Failures *prometheus.CounterVec
}

// driver is what differs between PostgreSQL and SQLite.
type driver interface {
	start(ctx context.Context) error
	stop(ctx context.Context) error
	// moveOutbox hands up to limit outbox rows to river in one transaction
	// and answers how many it moved.
	moveOutbox(ctx context.Context, limit int) (int, error)
	// jobList and jobRetry are river's JobList and JobRetry (jobs_admin.go).
	jobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	jobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	close()
}

// Queue works jobs until Stop.
type Queue struct {
	driver driver
	logger *slog.Logger
	poll   time.Duration

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// New connects river (it does not start working yet).
func New(ctx context.Context, o Options) (*Queue, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxWorkers == 0 {
		o.MaxWorkers = 10
	}
	if o.PollInterval == 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	cfg := &river.Config{
		Queues:       map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.MaxWorkers}},
		Workers:      o.Work.Workers,
		PeriodicJobs: o.Work.Periodic,
		// river logs every leadership change at info; ours are warnings up.
		Logger:            riverLogger(o.Logger),
		FetchPollInterval: 500 * time.Millisecond,
		FetchCooldown:     50 * time.Millisecond,
		// A row whose kind no worker knows is inserted and fails visibly in
		// river_job instead of blocking the outbox behind it.
		SkipUnknownJobCheck: true,
		// A job that hangs (a push service that never answers) is
		// cancelled instead of holding a worker; the fan-out jobs set
		// their own (Timeout methods).
		JobTimeout: DefaultJobTimeout,
		// Every failed attempt (a mail the SMTP server refused) is logged
		// with its kind and error, and counted.
		ErrorHandler: &failureHandler{logger: o.Logger, failures: o.Failures},
	}
	if o.JobRetention > 0 {
		cfg.CompletedJobRetentionPeriod = o.JobRetention
		cfg.CancelledJobRetentionPeriod = o.JobRetention
		cfg.DiscardedJobRetentionPeriod = 4 * o.JobRetention
	}
	var d driver
	var err error
	if isSQLite(o.DB) {
		// SQLite has no LISTEN: river's SQLite listener emulates it by
		// querying a notification table every 50 ms, which was most of an
		// idle embedded server's CPU (4% of a core doing nothing). Polled
		// instead at the outbox's pace: our jobs reach river through the
		// outbox, so one waits at most two polls (river's own periodic
		// jobs one).
		cfg.PollOnly = true
		cfg.FetchPollInterval = o.PollInterval
		d, err = newSQLiteDriver(o.DB, cfg)
	} else {
		d, err = newPostgresDriver(ctx, o.DatabaseURL, o.MaxConns, cfg)
	}
	if err != nil {
		return nil, err
	}
	return &Queue{driver: d, logger: o.Logger, poll: o.PollInterval}, nil
}

// Start begins working jobs and moving the outbox into river.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.driver.start(ctx); err != nil {
		return fmt.Errorf("start job queue: %w", err)
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel = cancel
	q.done.Add(1)
	go q.moveLoop(loopCtx)
	return nil
}

// Stop lets running jobs finish (up to ctx's deadline) and closes river's
// connections. Jobs not yet started stay in the database for the next start.
func (q *Queue) Stop(ctx context.Context) error {
	if q.cancel != nil {
		q.cancel()
		q.done.Wait()
	}
	err := q.driver.stop(ctx)
	q.driver.close()
	return err
}

// moveLoop polls the outbox. Losing this goroutine loses nothing: the rows
// stay in job_outbox until the next start moves them.
func (q *Queue) moveLoop(ctx context.Context) {
	defer q.done.Done()
	ticker := time.NewTicker(q.poll)
	defer ticker.Stop()
	for {
		for {
			n, err := q.driver.moveOutbox(ctx, 100)
			if err != nil {
				if ctx.Err() == nil {
					q.logger.Warn("move job outbox", "err", err)
				}
				break
			}
			if n < 100 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func isSQLite(db *bun.DB) bool { return db.Dialect().Name().String() == "sqlite" }

func riverLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelFloor{Handler: l.Handler(), min: slog.LevelWarn})
}

// levelFloor drops records below min.
type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
func (h levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{Handler: h.Handler.WithAttrs(a), min: h.min}
}
func (h levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{Handler: h.Handler.WithGroup(n), min: h.min}
}

var errNoURL = errors.New("jobs: PostgreSQL needs DatabaseURL for river's pool")

// failureHandler logs and counts every failed job attempt; river then
// retries or discards the job as it would.
type failureHandler struct {
	logger   *slog.Logger
	failures *prometheus.CounterVec
}

func (h *failureHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	h.record(ctx, job, "err", err)
	return nil
}

func (h *failureHandler) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	h.record(ctx, job, "panic", fmt.Sprint(panicVal), "trace", trace)
	return nil
}

func (h *failureHandler) record(ctx context.Context, job *rivertype.JobRow, attrs ...any) {
	level := slog.LevelWarn
	if job.Attempt >= job.MaxAttempts {
		level = slog.LevelError // the last attempt: the job is discarded
	}
	h.logger.Log(ctx, level, "job failed", append([]any{"kind", job.Kind, "job", job.ID, "attempt", job.Attempt,
		"max_attempts", job.MaxAttempts}, attrs...)...)
	if h.failures != nil {
		h.failures.WithLabelValues(job.Kind).Inc()
	}
}

// NewFailureCounter is the counter Options.Failures takes.
func NewFailureCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_job_failures_total",
		Help: "Failed job attempts by kind (each is logged as \"job failed\")."}, []string{"kind"})
}
