package jobs

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"
)

type sqliteDriver struct {
	db     *sql.DB
	client *river.Client[*sql.Tx]
}

func newSQLiteDriver(db *bun.DB, cfg *river.Config) (*sqliteDriver, error) {
	client, err := river.NewClient(riversqlite.New(db.DB), cfg)
	if err != nil {
		return nil, fmt.Errorf("job queue client: %w", err)
	}
	return &sqliteDriver{db: db.DB, client: client}, nil
}

func (d *sqliteDriver) start(ctx context.Context) error { return d.client.Start(ctx) }
func (d *sqliteDriver) stop(ctx context.Context) error  { return d.client.Stop(ctx) }
func (d *sqliteDriver) close()                          {}

// moveOutbox: SQLite has one writer at a time, so the transaction alone
// keeps two movers from taking the same row.
func (d *sqliteDriver) moveOutbox(ctx context.Context, limit int) (int, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck
	rows, err := tx.QueryContext(ctx, `DELETE FROM job_outbox WHERE id IN (
		SELECT id FROM job_outbox ORDER BY id LIMIT ?) RETURNING kind, args`, limit)
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
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit outbox move: %w", err)
	}
	return len(params), nil
}

func (d *sqliteDriver) jobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error) {
	return d.client.JobList(ctx, params)
}

func (d *sqliteDriver) jobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return d.client.JobRetry(ctx, id)
}
