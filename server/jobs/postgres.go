package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

type postgresDriver struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
}

func newPostgresDriver(ctx context.Context, url string, maxConns int, cfg *river.Config) (*postgresDriver, error) {
	if url == "" {
		return nil, errNoURL
	}
	poolCfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("job queue pool: %w", err)
	}
	if maxConns > 0 {
		poolCfg.MaxConns = int32(maxConns)
	}
	// Idle connections go back to PostgreSQL as the request pool's do
	// (pgxpool keeps them 30 minutes by default).
	poolCfg.MaxConnIdleTime = time.Minute
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return nil, fmt.Errorf("job queue pool: %w", err)
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("job queue client: %w", err)
	}
	return &postgresDriver{pool: pool, client: client}, nil
}

func (d *postgresDriver) start(ctx context.Context) error { return d.client.Start(ctx) }
func (d *postgresDriver) stop(ctx context.Context) error  { return d.client.Stop(ctx) }
func (d *postgresDriver) close()                          { d.pool.Close() }

// moveOutbox deletes the rows and inserts them into river in one pgx
// transaction; SKIP LOCKED lets several server instances move in parallel
// without handing the same row over twice.
func (d *postgresDriver) moveOutbox(ctx context.Context, limit int) (int, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	rows, err := tx.Query(ctx, `DELETE FROM job_outbox WHERE id IN (
		SELECT id FROM job_outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING kind, args`, limit)
	if err != nil {
		return 0, fmt.Errorf("take outbox rows: %w", err)
	}
	params, err := outboxParams(rows)
	rows.Close()
	if err != nil {
		return 0, err
	}
	if len(params) == 0 {
		return 0, nil
	}
	if _, err := d.client.InsertManyTx(ctx, tx, params); err != nil {
		return 0, fmt.Errorf("insert jobs: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("commit outbox move: %w", err)
	}
	return len(params), nil
}

func (d *postgresDriver) jobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error) {
	return d.client.JobList(ctx, params)
}

func (d *postgresDriver) jobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return d.client.JobRetry(ctx, id)
}
