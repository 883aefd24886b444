package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/uptrace/bun"
)

// Migrate creates or upgrades river's tables (river_job and friends) with
// river's own migrator; bun's migrations own everything else. Safe at every
// start.
func Migrate(ctx context.Context, db *bun.DB, databaseURL string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	cfg := &rivermigrate.Config{Logger: riverLogger(logger)}
	if isSQLite(db) {
		m, err := rivermigrate.New(riversqlite.New(db.DB), cfg)
		if err != nil {
			return fmt.Errorf("job queue migrator: %w", err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("migrate job queue: %w", err)
		}
		return nil
	}
	if databaseURL == "" {
		return errNoURL
	}
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("job queue pool: %w", err)
	}
	defer pool.Close()
	m, err := rivermigrate.New(riverpgxv5.New(pool), cfg)
	if err != nil {
		return fmt.Errorf("job queue migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate job queue: %w", err)
	}
	return nil
}

// Pending reports whether river's tables lack a migration, without
// changing anything (a start on an up-to-date database takes no lock).
func Pending(ctx context.Context, db *bun.DB, databaseURL string, logger *slog.Logger) (bool, error) {
	if logger == nil {
		logger = slog.Default()
	}
	cfg := &rivermigrate.Config{Logger: riverLogger(logger)}
	var res *rivermigrate.ValidateResult
	if isSQLite(db) {
		m, err := rivermigrate.New(riversqlite.New(db.DB), cfg)
		if err != nil {
			return false, fmt.Errorf("job queue migrator: %w", err)
		}
		if res, err = m.Validate(ctx, nil); err != nil {
			return false, fmt.Errorf("check job queue schema: %w", err)
		}
		return !res.OK, nil
	}
	if databaseURL == "" {
		return false, errNoURL
	}
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return false, fmt.Errorf("job queue pool: %w", err)
	}
	defer pool.Close()
	m, err := rivermigrate.New(riverpgxv5.New(pool), cfg)
	if err != nil {
		return false, fmt.Errorf("job queue migrator: %w", err)
	}
	if res, err = m.Validate(ctx, nil); err != nil {
		return false, fmt.Errorf("check job queue schema: %w", err)
	}
	return !res.OK, nil
}
