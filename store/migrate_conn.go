package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// openMigrationDB opens dsn on one connection whose transactions nest:
// Migrate wraps each migration in BEGIN ... COMMIT on that connection, and
// a migration that opens its own transaction (db.RunInTx) gets a savepoint
// inside it instead of committing the outer one early. So a migration and
// the row recording it commit together or not at all.
func openMigrationDB(dsn string) (*bun.DB, error) {
	var (
		base driver.Connector
		db   *bun.DB
	)
	if isPostgresURL(dsn) {
		// No read deadline: a migration's statement may rightly run longer
		// than a query's 10 s (an index built on a large table, a busy
		// server); the migration lock bounds the wait for another migrator.
		base = pgdriver.NewConnector(pgdriver.WithDSN(dsn), pgdriver.WithReadTimeout(0))
	} else {
		name, err := sqliteDSN(dsn, DefaultQueryTimeout)
		if err != nil {
			return nil, err
		}
		probe, err := sql.Open(sqliteshim.ShimName, name)
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		base = dsnConnector{drv: probe.Driver(), name: name}
		probe.Close()
	}
	sqldb := sql.OpenDB(nestingConnector{base})
	sqldb.SetMaxOpenConns(1)
	sqldb.SetMaxIdleConns(1)
	if isPostgresURL(dsn) {
		db = bun.NewDB(sqldb, pgdialect.New())
	} else {
		db = bun.NewDB(sqldb, sqlitedialect.New())
	}
	return db, nil
}

type dsnConnector struct {
	drv  driver.Driver
	name string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.name) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

type nestingConnector struct{ base driver.Connector }

func (c nestingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &nestingConn{Conn: conn}, nil
}
func (c nestingConnector) Driver() driver.Driver { return c.base.Driver() }

// nestingConn forwards to the driver's connection; it notices a BEGIN sent
// as a statement and turns transactions begun inside it into savepoints.
type nestingConn struct {
	driver.Conn
	inTx  bool // a BEGIN statement is open
	depth int  // savepoints open
}

func (c *nestingConn) track(query string) {
	switch q := strings.ToUpper(strings.TrimSpace(query)); {
	case strings.HasPrefix(q, "BEGIN"):
		c.inTx = true
	case q == "COMMIT" || q == "ROLLBACK":
		c.inTx, c.depth = false, 0
	}
}

func (c *nestingConn) exec(ctx context.Context, query string) error {
	_, err := c.ExecContext(ctx, query, nil)
	return err
}

func (c *nestingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.inTx {
		c.depth++
		sp := fmt.Sprintf("marquee_nested_%d", c.depth)
		if err := c.exec(ctx, "SAVEPOINT "+sp); err != nil {
			c.depth--
			return nil, err
		}
		return &savepointTx{c: c, name: sp}, nil
	}
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	//lint:ignore SA1019 a driver without ConnBeginTx has no other way to begin
	return c.Conn.Begin()
}

func (c *nestingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

type savepointTx struct {
	c    *nestingConn
	name string
}

func (t *savepointTx) Commit() error {
	t.c.depth--
	return t.c.exec(context.Background(), "RELEASE SAVEPOINT "+t.name)
}

func (t *savepointTx) Rollback() error {
	t.c.depth--
	return t.c.exec(context.Background(), "ROLLBACK TO SAVEPOINT "+t.name)
}

func (c *nestingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := e.ExecContext(ctx, query, args)
	if err == nil {
		c.track(query)
	}
	return res, err
}

func (c *nestingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *nestingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *nestingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *nestingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *nestingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *nestingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}
