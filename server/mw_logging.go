package server

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// NewLogger builds the process's logger from LOG_LEVEL (debug, info, warn,
// error; default info) and LOG_FORMAT (json or text; default text, which
// the test harnesses read). Every line logged with a request's context
// carries its request_id. Written to a LogOutput, access lines are
// gathered and written together (LOG_FLUSH).
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
	out := &loggerOutput{}
	if lo, ok := w.(*LogOutput); ok {
		out.w = lo
	} else {
		out.w = &lockedWriter{w: w}
	}
	var h slog.Handler
	switch v := strings.ToLower(strings.TrimSpace(getenv("LOG_FORMAT"))); v {
	case "", "text":
		h = slog.NewTextHandler(out.w, opts)
	case "json":
		h, out.json = slog.NewJSONHandler(out.w, opts), true
	default:
		return nil, fmt.Errorf("LOG_FORMAT: want json or text, got %q", v)
	}
	return slog.New(requestIDHandler{outputHandler{h, out}}), nil
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
			id := s.requestIDOf(req)
			ctx := context.WithValue(req.Context(), requestIDKey{}, id)
			c.SetRequest(req.WithContext(ctx))
			c.Response().Header()["X-Request-Id"] = []string{id}
			if err := next(c); err != nil {
				c.Error(err)
			}
			status := c.Response().Status
			if ctx.Err() != nil && (status >= 500 || !c.Response().Committed) {
				status = statusClientClosed
			}
			if renderingAhead(ctx) {
				return nil // a job's, not a client's: not an access line nor a request counted
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			s.answered(ctx, answeredRequest{site: site, id: id, method: req.Method, route: route, path: req.URL.Path,
				status: status, start: start, size: c.Response().Size, client: c.RealIP()})
			return nil
		}
	}
}

// requestIDOf is the id a request is known by: the proxy's X-Request-ID
// when it sends a sane one, else a new one.
func (s *Server) requestIDOf(r *http.Request) string {
	if id := firstValue(r.Header, "X-Request-Id"); validRequestID(id) {
		return id
	}
	return s.requestIDs.next()
}

// answeredRequest is what the access line and the request metrics say of a request.
type answeredRequest struct {
	site, id, method, route, path string
	status                        int
	start                         time.Time
	size                          int64
	client                        string
}

// answered counts a request in the metrics and writes its access line:
// observe's end, and the visitor hits answered before the router.
func (s *Server) answered(ctx context.Context, a answeredRequest) {
	d := time.Since(a.start)
	s.metrics.observeRequest(a.site, a.method, a.route, a.status, d)
	level := slog.LevelInfo
	if a.route == "/healthz" || a.route == "/readyz" || a.route == "/metrics" || strings.HasPrefix(a.route, "/static") {
		level = slog.LevelDebug
	}
	s.accessLog(ctx, level, a, d)
}

// accessLog writes the access line. The record is built whole, with the
// request id among its attributes, and handed to the logger's handler
// below the one that would add the id again: key-value pairs boxed into
// interfaces, and a record grown twice past its inline attributes, were
// most of what a cached page cost (a CPU profile of BenchmarkVisitorPageHit).
// The site, method and route come first and take few values: they are
// formatted once per combination (the handler's WithAttrs), which gives
// the same line for a sixth of what formatting them per request cost
// (scripts/bench with the front: the access line was 15% of a hit). With
// NewLogger's handler, a line of plain values is appended by hand
// (loggerOutput.writeAccess), the same bytes for a tenth of the cost.
func (s *Server) accessLog(ctx context.Context, level slog.Level, a answeredRequest, d time.Duration) {
	h := s.logger.Handler()
	if inner, ok := h.(requestIDHandler); ok {
		h = inner.Handler
	}
	if !h.Enabled(ctx, level) {
		return
	}
	now := time.Now()
	if oh, ok := h.(outputHandler); ok && oh.out.writeAccess(now, level, a, d) {
		return
	}
	_ = s.accessHandlers.of(s.logger, h, a.site, a.method, a.route).Handle(ctx, accessRecord(now, level, a, d))
}

// accessRecord is the access line's record but the site, method and route
// (accessHandlers has them formatted).
func accessRecord(now time.Time, level slog.Level, a answeredRequest, d time.Duration) slog.Record {
	r := slog.NewRecord(now, level, "request", 0)
	r.AddAttrs(
		slog.String("path", a.path), slog.Int("status", a.status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int64("bytes", a.size),
		slog.String("client", a.client), slog.String("request_id", a.id),
	)
	return r
}

// accessHandlers are the access line's handlers with site, method and
// route formatted, per combination, for one logger (tests replace it;
// bounded: past the limit, lines are formatted whole).
type accessHandlers struct {
	mu       sync.RWMutex
	logger   *slog.Logger
	handlers map[accessKey]slog.Handler
}

type accessKey struct{ site, method, route string }

const accessHandlersKept = 4096

func (ah *accessHandlers) of(logger *slog.Logger, base slog.Handler, site, method, route string) slog.Handler {
	k := accessKey{site, method, route}
	ah.mu.RLock()
	h, ok := ah.handlers[k]
	same := ah.logger == logger
	ah.mu.RUnlock()
	if ok && same {
		return h
	}
	h = base.WithAttrs([]slog.Attr{slog.String("site", site), slog.String("method", method), slog.String("route", route)})
	ah.mu.Lock()
	defer ah.mu.Unlock()
	if ah.logger != logger || ah.handlers == nil {
		ah.logger, ah.handlers = logger, map[accessKey]slog.Handler{}
	}
	if len(ah.handlers) < accessHandlersKept {
		ah.handlers[k] = h
	}
	return h
}

// validRequestID says whether a proxy's X-Request-ID is kept: 8 to 64
// letters, digits, dots, underscores or hyphens (nothing that could break
// a log line).
func validRequestID(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// requestIDs makes the ids of requests that bring none: a random prefix
// per process and a counter, 16 hex digits like the random ids they
// replace. They name a request in the logs and are no secret; reading
// the system's random source for each was a tenth of a cached page.
type requestIDs struct {
	prefix [4]byte
	n      atomic.Uint32
}

func newRequestIDs() *requestIDs {
	ids := &requestIDs{}
	_, _ = rand.Read(ids.prefix[:])
	var start [4]byte
	_, _ = rand.Read(start[:])
	ids.n.Store(binary.BigEndian.Uint32(start[:]))
	return ids
}

func (ids *requestIDs) next() string {
	var b [8]byte
	copy(b[:4], ids.prefix[:])
	binary.BigEndian.PutUint32(b[4:], ids.n.Add(1))
	return hex.EncodeToString(b[:])
}

// abandoned reports whether the client went away before its answer: the
// request's context was cancelled, and the error says so or comes of it.
func abandoned(c echo.Context, err error) bool {
	return c.Request().Context().Err() != nil || errors.Is(err, context.Canceled)
}

var _ = http.StatusOK
