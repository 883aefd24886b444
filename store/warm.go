package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// AppIDsByName answers the ids of up to limit apps by name, the most
// recently created first: what a starting server remembers before its
// first request (server.Run). Names never change.
func (s *Storage) AppIDsByName(ctx context.Context, limit int) (map[string]string, error) {
	var rows []struct {
		ID   string `bun:"id"`
		Name string `bun:"name"`
	}
	err := s.db.NewSelect().Model((*App)(nil)).Column("id", "name").OrderExpr("created_at DESC").Limit(int64(limit)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("app ids by name: %w", err)
	}
	ids := make(map[string]string, len(rows))
	for _, r := range rows {
		ids[r.Name] = r.ID
	}
	return ids, nil
}

// WarmConnections opens the SQLite connections a burst of requests will
// use before the burst comes: a new connection reads the whole schema as
// its pragmas run, and sixty-four visitors arriving at a server just
// started paid for a pool of them being opened at once (a seventh of the
// CPU of a thousand apps' first pass, scripts/bench apps). PostgreSQL's
// are opened as they are needed.
func (s *Storage) WarmConnections(ctx context.Context) error {
	if s.db.Dialect().Name() != dialect.SQLite {
		return nil
	}
	conns := make([]bun.Conn, 0, SQLiteIdleConns)
	defer func() {
		for _, c := range conns {
			_ = c.Close() // back to the pool, idle
		}
	}()
	for range SQLiteIdleConns {
		c, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("open database connection: %w", err)
		}
		conns = append(conns, c)
	}
	return nil
}
