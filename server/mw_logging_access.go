package server

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The access line of the process's logger is appended here by hand, byte
// for byte as its slog handler writes it, when every value it holds is
// plain. A profile of `marquee serve` answering cached pages (perf, wrk
// -t1 -c64) put 13% of the process's CPU in slog formatting the access
// line: a record built, its attributes boxed and walked, quoting checked
// rune by rune. Here it is a few appends to a pooled buffer. Anything that
// would need quoting or escaping (a path with a space, a quote, a
// backslash, '=', or anything outside printable ASCII) goes through slog,
// which decides how.

// loggerOutput is where and how NewLogger's handler writes lines.
type loggerOutput struct {
	w      lineSink
	json   bool
	second atomic.Pointer[formattedSecond]
}

// outputHandler is NewLogger's handler, telling the access line its
// output. Its WithAttrs and WithGroup are the inner handler's (the access
// line appended by hand needs no derived handler).
type outputHandler struct {
	slog.Handler
	out *loggerOutput
}

// lineSink takes slog's lines (Write) and the access lines appended by
// hand (gather): each line whole, never interleaved with another.
type lineSink interface {
	io.Writer
	gather(line []byte)
}

// lockedWriter is the sink of a writer other than a LogOutput: every line
// written as it is made.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

func (lw *lockedWriter) gather(line []byte) { _, _ = lw.Write(line) }

var accessLineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeAccess writes the access line of a as slog would (at level, time
// now) and reports true, or false having written nothing when a value is
// not plain (slog is to write it).
func (o *loggerOutput) writeAccess(now time.Time, level slog.Level, a answeredRequest, d time.Duration) bool {
	for _, v := range [...]string{a.site, a.method, a.route, a.path, a.client, a.id} {
		if !plainLogValue(v) {
			return false
		}
	}
	ms := float64(d.Microseconds()) / 1000
	if ms < 0 || ms >= 1e9 {
		return false // JSON writes floats past these with an exponent
	}
	buf := accessLineBuffers.Get().(*[]byte)
	b := (*buf)[:0]
	now = now.Round(0)
	if o.json {
		b = append(b, `{"time":"`...)
		b = now.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"`...)
		b = append(b, level.String()...)
		b = append(b, `","msg":"request","site":"`...)
		b = append(b, a.site...)
		b = append(b, `","method":"`...)
		b = append(b, a.method...)
		b = append(b, `","route":"`...)
		b = append(b, a.route...)
		b = append(b, `","path":"`...)
		b = append(b, a.path...)
		b = append(b, `","status":`...)
		b = strconv.AppendInt(b, int64(a.status), 10)
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendFloat(b, ms, 'f', -1, 64)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, a.size, 10)
		b = append(b, `,"client":"`...)
		b = append(b, a.client...)
		b = append(b, `","request_id":"`...)
		b = append(b, a.id...)
		b = append(b, "\"}\n"...)
	} else {
		b = append(b, "time="...)
		b = o.appendRFC3339Millis(b, now)
		b = append(b, " level="...)
		b = append(b, level.String()...)
		b = append(b, " msg=request site="...)
		b = append(b, a.site...)
		b = append(b, " method="...)
		b = append(b, a.method...)
		b = append(b, " route="...)
		b = append(b, a.route...)
		b = append(b, " path="...)
		b = append(b, a.path...)
		b = append(b, " status="...)
		b = strconv.AppendInt(b, int64(a.status), 10)
		b = append(b, " duration_ms="...)
		b = strconv.AppendFloat(b, ms, 'g', -1, 64)
		b = append(b, " bytes="...)
		b = strconv.AppendInt(b, a.size, 10)
		b = append(b, " client="...)
		b = append(b, a.client...)
		b = append(b, " request_id="...)
		b = append(b, a.id...)
		b = append(b, '\n')
	}
	o.w.gather(b)
	*buf = b
	accessLineBuffers.Put(buf)
	return true
}

// plainLogValue says whether v is written as it is by slog's text handler
// (unquoted) and JSON handler (unescaped): not empty, printable ASCII, no
// space, '"', '\\' or '='.
func plainLogValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if b := v[i]; b <= ' ' || b >= 0x7f || b == '"' || b == '\\' || b == '=' {
			return false
		}
	}
	return true
}

// appendRFC3339Millis is slog's text time: RFC 3339 with exactly three
// digits of milliseconds, truncated. The date, time of day and zone are
// formatted once a second (time.Format was a tenth of a cached page's
// access line): within a second only the milliseconds change.
func (o *loggerOutput) appendRFC3339Millis(b []byte, t time.Time) []byte {
	sec, loc := t.Unix(), t.Location()
	c := o.second.Load()
	if c == nil || c.unix != sec || c.loc != loc {
		whole := time.Unix(sec, 0).In(loc)
		c = &formattedSecond{unix: sec, loc: loc, date: whole.Format("2006-01-02T15:04:05"), zone: whole.Format("Z07:00")}
		o.second.Store(c)
	}
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, c.date...)
	b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, c.zone...)
}

// formattedSecond is one second's date, time of day and zone, formatted.
type formattedSecond struct {
	unix       int64
	loc        *time.Location
	date, zone string
}
