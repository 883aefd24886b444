package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// NewLogger builds the process's logger from LOG_LEVEL (debug, info, warn,
// error; default info) and LOG_FORMAT (json or text; default text, which
// the test harnesses read). Every line logged with a request's context
// carries its request_id.
func NewLogger(w io.Writer, getenv func(string) string) (*slog.Logger, error) {
	var level slog.Level
	switch v := strings.ToLower(strings.TrimSpace(getenv("LOG_LEVEL"))); v {
	case "", "info":
		level = slog.LevelInfo
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, fmt.Errorf("LOG_LEVEL: want debug, info, warn or error, got %q", v)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch v := strings.ToLower(strings.TrimSpace(getenv("LOG_FORMAT"))); v {
	case "", "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("LOG_FORMAT: want json or text, got %q", v)
	}
	return slog.New(requestIDHandler{h}), nil
}

type requestIDKey struct{}

// RequestID is the id of the request ctx belongs to, "" outside one.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestIDHandler adds request_id to every record logged with a request's
// context (logger.InfoContext(ctx, ...)).
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// WithRequestLogger makes logger add request_id from contexts, if it does
// not already (tests and scripts build their own loggers).
func WithRequestLogger(logger *slog.Logger) *slog.Logger {
	if _, ok := logger.Handler().(requestIDHandler); ok {
		return logger
	}
	return slog.New(requestIDHandler{logger.Handler()})
}

var incomingRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{8,64}$`)

// statusClientClosed is what the access log and the metrics say of a
// request whose client went away before the answer (nginx's 499): not a
// server error.
const statusClientClosed = 499

// observe is the outermost middleware of both sites: it gives the request
// an id (the proxy's X-Request-ID when it sends a sane one), answers it in
// X-Request-ID, and once the request is answered writes one access log
// line (method, route, status, duration, bytes) and counts it in the
// metrics.
func (s *Server) observe(site string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			req := c.Request()
			id := req.Header.Get("X-Request-ID")
			if !incomingRequestID.MatchString(id) {
				var b [8]byte
				_, _ = rand.Read(b[:])
				id = hex.EncodeToString(b[:])
			}
			ctx := context.WithValue(req.Context(), requestIDKey{}, id)
			c.SetRequest(req.WithContext(ctx))
			c.Response().Header().Set("X-Request-ID", id)
			if err := next(c); err != nil {
				c.Error(err)
			}
			status := c.Response().Status
			if ctx.Err() != nil && (status >= 500 || !c.Response().Committed) {
				status = statusClientClosed
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			d := time.Since(start)
			s.metrics.observeRequest(site, req.Method, route, status, d)
			level := slog.LevelInfo
			if route == "/healthz" || route == "/readyz" || route == "/metrics" || strings.HasPrefix(route, "/static") {
				level = slog.LevelDebug
			}
			s.logger.Log(ctx, level, "request", "site", site, "method", req.Method, "route", route, "path", req.URL.Path,
				"status", status, "duration_ms", float64(d.Microseconds())/1000, "bytes", c.Response().Size,
				"client", c.RealIP())
			return nil
		}
	}
}

// abandoned reports whether the client went away before its answer: the
// request's context was cancelled, and the error says so or comes of it.
func abandoned(c echo.Context, err error) bool {
	return c.Request().Context().Err() != nil || errors.Is(err, context.Canceled)
}

var _ = http.StatusOK
