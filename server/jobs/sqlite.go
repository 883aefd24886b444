package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
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
	var params []river.InsertManyParams
	for rows.Next() {
		var kind, args string
		if err := rows.Scan(&kind, &args); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read outbox row: %w", err)
		}
		params = append(params, river.InsertManyParams{Args: storedArgs{kind: kind, args: json.RawMessage(args)}})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read outbox: %w", err)
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
