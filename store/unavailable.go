package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun/driver/pgdriver"
)

// ErrUnavailable marks a failure of a dependency (database, cache, object
// store, payment provider) rather than of the request: the caller answers
// 503 and the client may retry.
var ErrUnavailable = errors.New("service unavailable")

// IsUnavailable reports whether err comes from a dependency being down,
// unreachable or overloaded, as opposed to a bug or a bad request.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		// Connection exceptions, insufficient resources, operator
		// intervention (shutdown, restart) and cancelled statements.
		code := pgErr.Field('C')
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53") ||
			strings.HasPrefix(code, "57")
	}
	msg := err.Error()
	// database/sql and the SQLite driver expose these only as text.
	return strings.Contains(msg, "sql: database is closed") ||
		strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY")
}
