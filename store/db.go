package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// MaxPostgresConns bounds one process's connections to PostgreSQL; with
// river's own small pool it leaves room for several instances.
const MaxPostgresConns = 20

// SQLiteIdleConns is how many SQLite connections a process keeps open
// between requests, and the most it opens. Opening one reads the whole schema and the planner's
// statistics: with 64 visitors on cold pages of many apps, connections
// opened past the idle ones and closed again were a fifth of the server's
// CPU (a profile of scripts/bench apps). Each costs about 1.7 MB with
// SQLiteCacheKB.
const SQLiteIdleConns = 32

// SQLiteCacheKB is each SQLite connection's page cache. SQLite's default
// (2 MB) filled on a database of many apps made a connection 4.6 MB, 75 MB
// for sixteen kept open, outside Go's heap and its memory limit; the file's
// pages stay in the kernel's page cache anyway, and in WAL mode a write
// by any connection empties the other connections' caches.
const SQLiteCacheKB = 512

// DBOptions tune the connections.
type DBOptions struct {
	// ConnectTimeout bounds opening a PostgreSQL connection, TCP and
	// handshake (default DefaultConnectTimeout); QueryTimeout bounds waiting
	// for an answer (default DefaultQueryTimeout), on SQLite for another
	// writer's lock (busy_timeout).
	ConnectTimeout time.Duration
	QueryTimeout   time.Duration
	// MaxIdleTime closes a connection that has waited unused this long
	// (default DefaultMaxIdleTime): an idle instance gives its
	// connections back to PostgreSQL, whose max_connections every instance
	// and tool shares.
	MaxIdleTime time.Duration
	// Patient is for tests and tools that share a busy server: no breaker,
	// and a connection PostgreSQL refuses for now (too many clients, still
	// starting) is retried until ConnectTimeout, then fails with
	// PostgreSQL's own message.
	Patient bool
}

const (
	DefaultMaxIdleTime    = time.Minute
	DefaultConnectTimeout = 3 * time.Second
	DefaultQueryTimeout   = 10 * time.Second
)

// Open is OpenWith with the default timeouts.
func Open(dsn string) (*bun.DB, error) { return OpenWith(dsn, DBOptions{}) }

// OpenWith connects to PostgreSQL when dsn is a postgres:// URL and otherwise
// treats dsn as a SQLite file path (the embedded default).
func OpenWith(dsn string, o DBOptions) (*bun.DB, error) {
	if isPostgresURL(dsn) {
		if o.ConnectTimeout <= 0 {
			o.ConnectTimeout = DefaultConnectTimeout
		}
		if o.QueryTimeout <= 0 {
			o.QueryTimeout = DefaultQueryTimeout
		}
		pg := pgdriver.NewConnector(pgdriver.WithDSN(dsn), pgdriver.WithDialTimeout(o.ConnectTimeout),
			pgdriver.WithReadTimeout(o.QueryTimeout), pgdriver.WithWriteTimeout(o.QueryTimeout))
		var connector driver.Connector = &guardedConnector{Connector: pg, timeout: o.ConnectTimeout, cooldown: time.Second}
		if o.Patient {
			connector = &patientConnector{Connector: pg, timeout: o.ConnectTimeout}
		}
		sqldb := sql.OpenDB(connector)
		// A burst of requests waits for a connection instead of opening one
		// each: PostgreSQL refuses clients past max_connections (100 by
		// default), which would turn a busy minute into 503s.
		sqldb.SetMaxOpenConns(MaxPostgresConns)
		sqldb.SetMaxIdleConns(MaxPostgresConns)
		if o.MaxIdleTime <= 0 {
			o.MaxIdleTime = DefaultMaxIdleTime
		}
		sqldb.SetConnMaxIdleTime(o.MaxIdleTime)
		return bun.NewDB(sqldb, pgdialect.New()), nil
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	path, err := sqliteDSN(dsn, o.QueryTimeout)
	if err != nil {
		return nil, err
	}
	sqldb, err := sql.Open(sqliteshim.ShimName, path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", dsn, err)
	}
	// Connections are kept: database/sql keeps two idle by default, so
	// each burst of concurrent reads opened connections and closed them
	// again, and opening one (its pragmas parsed and run, WAL checked) was
	// a fifth of a member page's cost under writes (scripts/bench).
	sqldb.SetMaxIdleConns(SQLiteIdleConns)
	// And no more are opened: past this, a burst waits for one. Each is
	// memory outside Go's heap, and two cores gain nothing from more
	// concurrent readers (sixty-four visitors of cold pages of a thousand
	// apps had up to seventy open, scripts/bench apps).
	sqldb.SetMaxOpenConns(SQLiteIdleConns)
	return bun.NewDB(sqldb, sqlitedialect.New()), nil
}

func isPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// sqliteDSN is the driver's name for the SQLite file dsn, with the
// connection settings every connection gets; a writer waits up to busy
// for another's lock (the query timeout: waiting for the lock is waiting
// for an answer).
func sqliteDSN(dsn string, busy time.Duration) (string, error) {
	path := strings.TrimPrefix(dsn, "sqlite://")
	if path != ":memory:" && !strings.HasPrefix(path, "file:") {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("create database folder: %w", err)
		}
		path = "file:" + path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	// WAL and a busy timeout let the server's concurrent requests share one
	// file; foreign keys are off by default in SQLite.
	// Transactions begin IMMEDIATE: a deferred one that reads and then
	// writes must upgrade its lock, and SQLite answers SQLITE_BUSY at once to
	// an upgrade while another writer (a background job) holds the lock,
	// without waiting out busy_timeout. Taking the write lock at BEGIN makes
	// concurrent writers queue instead.
	return path + sep + fmt.Sprintf("_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(%d)&_pragma=cache_size(-%d)&_txlock=immediate", busy.Milliseconds(), SQLiteCacheKB), nil
}

// Ping reports whether the database answers.
func Ping(ctx context.Context, db *bun.DB) error {
	var one int
	if err := db.NewSelect().ColumnExpr("1").Scan(ctx, &one); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// guardedConnector opens PostgreSQL connections under a deadline that covers
// the handshake too (pgdriver's dial timeout covers only TCP: a server that
// accepts and never answers held a request for its read timeout, twice),
// and is a breaker: after a connection failed, new ones are refused at once
// (ErrUnavailable, so 503) for cooldown, then one attempt probes while the
// others keep being refused.
type guardedConnector struct {
	driver.Connector
	timeout, cooldown time.Duration

	mu        sync.Mutex
	downUntil time.Time
	probing   bool
}

// ErrDatabaseDown is what a new connection answers while the breaker is open.
var ErrDatabaseDown = fmt.Errorf("database unreachable, not retried for a moment: %w", ErrUnavailable)

func (c *guardedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c.mu.Lock()
	now := time.Now()
	if now.Before(c.downUntil) || (!c.downUntil.IsZero() && c.probing) {
		c.mu.Unlock()
		return nil, ErrDatabaseDown
	}
	probe := !c.downUntil.IsZero()
	if probe {
		c.probing = true
	}
	c.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// A refusal for now (too many clients) is retried within the
	// request's budget: the database answers, it is full for a moment,
	// and opening the breaker made the instance answer 503 to everything
	// for a second.
	conn, err := connectRetrying(cctx, c.Connector)
	c.mu.Lock()
	defer c.mu.Unlock()
	if probe {
		c.probing = false
	}
	switch {
	case err == nil:
		c.downUntil = time.Time{}
	case ctx.Err() == nil && !RefusedForNow(err):
		// Not the caller giving up, nor a full server: the database did
		// not answer in time or refused for good.
		c.downUntil = time.Now().Add(c.cooldown)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return budgetedConn{conn}, nil
}

// queryBudgetKey carries the longest one database call may wait for its
// answer (WithQueryBudget).
type queryBudgetKey struct{}

// WithQueryBudget bounds each PostgreSQL call made with ctx (or a context
// derived from it) to d from its start, whatever DB_QUERY_TIMEOUT says: a
// web request must not wait 10 s on a connection that stalled after it was
// opened (the README promises 3 s). Background jobs and the CLI keep the
// longer query timeout. d <= 0 leaves ctx as it is.
func WithQueryBudget(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, queryBudgetKey{}, d)
}

// budgeted answers ctx with a deadline at most its query budget away; the
// driver sets the socket's deadlines from it (pgdriver takes the earlier of
// its read timeout and the context's deadline). Only Deadline changes:
// database/sql still watches the caller's context.
func budgeted(ctx context.Context) context.Context {
	d, ok := ctx.Value(queryBudgetKey{}).(time.Duration)
	if !ok {
		return ctx
	}
	at := time.Now().Add(d)
	if dl, has := ctx.Deadline(); has && dl.Before(at) {
		return ctx
	}
	return deadlineContext{Context: ctx, at: at}
}

type deadlineContext struct {
	context.Context
	at time.Time
}

func (c deadlineContext) Deadline() (time.Time, bool) { return c.at, true }

// budgetedConn is a PostgreSQL connection whose calls honour the query
// budget of their context. It offers what pgdriver's connection offers to
// database/sql.
type budgetedConn struct{ driver.Conn }

func (c budgetedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(budgeted(ctx), query)
}

func (c budgetedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(budgeted(ctx), opts)
}

func (c budgetedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(budgeted(ctx), query, args)
}

func (c budgetedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(budgeted(ctx), query, args)
}

func (c budgetedConn) Ping(ctx context.Context) error {
	return c.Conn.(driver.Pinger).Ping(budgeted(ctx))
}

func (c budgetedConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c budgetedConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

// patientConnector retries what PostgreSQL refuses only for now, with a
// growing pause, until timeout: on a server other programs share, a moment
// at max_connections is not a failure of the caller.
type patientConnector struct {
	driver.Connector
	timeout time.Duration
}

func (c *patientConnector) Connect(ctx context.Context) (driver.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := connectRetrying(ctx, c.Connector)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return budgetedConn{conn}, nil
}

// connectRetrying opens a connection, retrying what PostgreSQL refuses only
// for now (RefusedForNow) with a growing pause until ctx ends; it answers
// the last error.
func connectRetrying(ctx context.Context, c driver.Connector) (driver.Conn, error) {
	pause := 20 * time.Millisecond
	for {
		conn, err := c.Connect(ctx)
		if err == nil {
			return conn, nil
		}
		if !RefusedForNow(err) || ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// RefusedForNow reports whether err is PostgreSQL refusing a connection for
// a reason that passes: too many clients (53300), or the server starting
// up or shutting down (57P03).
func RefusedForNow(err error) bool {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		code := pgErr.Field('C')
		return code == "53300" || code == "57P03"
	}
	return false
}

// SQLiteFile answers the path of the SQLite file dsn opens, false for
// PostgreSQL and a database in memory.
func SQLiteFile(dsn string) (string, bool) {
	if isPostgresURL(dsn) {
		return "", false
	}
	path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite://"), "file:")
	path, query, _ := strings.Cut(path, "?")
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.Contains(query, "mode=memory") {
		return "", false
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, true
}

// DescribeDatabase names the database dsn opens, for the start-up log,
// without its password: "postgres host:port/name" or "sqlite /abs/path".
func DescribeDatabase(dsn string) string {
	if isPostgresURL(dsn) {
		if u, err := url.Parse(dsn); err == nil {
			return "postgres " + u.Host + u.Path
		}
		return "postgres (unparsable URL)"
	}
	path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite://"), "file:")
	path, _, _ = strings.Cut(path, "?")
	if abs, err := filepath.Abs(path); err == nil && path != ":memory:" {
		path = abs
	}
	return "sqlite " + path
}
