package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// selectOne runs a query for one row into the query's model: ErrNotFound
// when there is none, other failures wrapped with what was being loaded.
func selectOne(ctx context.Context, q *bun.SelectQuery, what string) error {
	err := q.Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", what, err)
	}
	return nil
}
