package server

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
)

// Responses compressed per request (JSON, uncached pages, bundles) use
// stateless gzip: a writer keeps no window or hash tables between writes,
// so it holds about 5 KB instead of the standard library's 1.2 MB. With
// up to 128 requests in flight, echo's gzip middleware (standard writers,
// pooled) kept about 150 MB of compressors live, most of the server's
// heap under the 500 req/s API load (docs/BENCHMARKS.md). Writes go
// through an 8 KB buffer so small writes still compress as one block;
// a page or a JSON answer is one write and compresses as well as level 1
// did (Landing props 7,008 bytes against 7,065) for a sixth of the CPU.
const gzipBufferSize = 8 << 10

type gzipWriters struct{ pool sync.Pool }

func (p *gzipWriters) get(w http.ResponseWriter) *gzipState {
	s, _ := p.pool.Get().(*gzipState)
	if s == nil {
		z, _ := gzip.NewWriterLevel(nil, gzip.StatelessCompression)
		s = &gzipState{z: z}
		s.buf = bufio.NewWriterSize(s.z, gzipBufferSize)
	}
	s.z.Reset(w)
	s.buf.Reset(s.z)
	return s
}

func (p *gzipWriters) put(s *gzipState) {
	s.z.Reset(nil)
	s.buf.Reset(nil)
	p.pool.Put(s)
}

type gzipState struct {
	z   *gzip.Writer
	buf *bufio.Writer
}

// compress gzips answers for clients that accept it, unless skip says
// otherwise or the handler set its own Content-Encoding (precompressed
// bytes). Nothing is compressed when no body is written (304, 204,
// redirects).
func compress(skip func(echo.Context) bool) echo.MiddlewareFunc {
	writers := &gzipWriters{}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if skip(c) {
				return next(c)
			}
			res := c.Response()
			res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
			if !strings.Contains(c.Request().Header.Get(echo.HeaderAcceptEncoding), "gzip") {
				return next(c)
			}
			rw := res.Writer
			g := &gzipResponseWriter{ResponseWriter: rw, writers: writers}
			res.Writer = g
			defer func() {
				res.Writer = rw
				g.finish()
			}()
			return next(c)
		}
	}
}

// gzipResponseWriter decides at the first body write: compressed unless
// the handler already encoded the body.
type gzipResponseWriter struct {
	http.ResponseWriter
	writers     *gzipWriters
	state       *gzipState // set once compressing
	code        int
	wroteHeader bool // the handler called WriteHeader (held until the first write)
	started     bool // the status went out
	plain       bool // written as is
}

func (w *gzipResponseWriter) WriteHeader(code int) {
	if w.started || w.wroteHeader {
		return
	}
	w.Header().Del(echo.HeaderContentLength)
	w.code, w.wroteHeader = code, true
}

// start sends the status and picks the encoding, once.
func (w *gzipResponseWriter) start() {
	if w.started {
		return
	}
	w.started = true
	h := w.Header()
	if h.Get(echo.HeaderContentEncoding) != "" {
		w.plain = true
	} else {
		h.Set(echo.HeaderContentEncoding, "gzip")
		h.Del(echo.HeaderContentLength)
		w.state = w.writers.get(w.ResponseWriter)
	}
	if w.wroteHeader {
		w.ResponseWriter.WriteHeader(w.code)
	}
}

func (w *gzipResponseWriter) Write(b []byte) (int, error) {
	if !w.started {
		if w.Header().Get(echo.HeaderContentType) == "" {
			w.Header().Set(echo.HeaderContentType, http.DetectContentType(b))
		}
		w.start()
	}
	if w.plain {
		return w.ResponseWriter.Write(b)
	}
	return w.state.buf.Write(b)
}

// finish ends the gzip stream, or sends the held status of an answer
// without a body.
func (w *gzipResponseWriter) finish() {
	if !w.started {
		if w.wroteHeader {
			w.ResponseWriter.WriteHeader(w.code)
		}
		return
	}
	if w.state != nil {
		_ = w.state.buf.Flush()
		_ = w.state.z.Close()
		w.writers.put(w.state)
		w.state = nil
	}
}

func (w *gzipResponseWriter) Flush() {
	w.start()
	if w.state != nil {
		_ = w.state.buf.Flush()
		_ = w.state.z.Flush()
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *gzipResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *gzipResponseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}
