package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The main site's connections are read first by a front that answers a
// visitor's cached page itself and hands every other connection to
// net/http. Measured on two cores (wrk -t1 -c64, loopback): the smallest
// net/http handler writing a fixed 6.7 KB answer serves 36,700 requests a
// second, a loop reading request heads and writing the same bytes 87,000,
// nginx 75,000; Marquee's hit was at net/http's figure, two thirds of its
// CPU in net/http's per-request work (the response's header map sorted
// and written key by key, the request's context and background read,
// its header map, the chunk writer). A cached page needs none of it: its
// status line and headers are known, and the request decides only which
// encoding and whether it is a 304.
//
// The front answers only what it is sure of and leaves the rest to
// net/http with every byte the client sent: a GET or HEAD of HTTP/1.1
// with a path net/http would not decode (no %), a host of the main site
// (custom domains are rewritten by routeHosts), no cookie, no body, no
// Upgrade or Connection other than keep-alive, a head that fits its 4 KB
// buffer with CRLF line ends; and then only when answerVisitorHit answers
// (a page the chain already served to visitors, current or within the
// staleness bound). Anything else, and every request after it on the same
// connection, is net/http's: the connection is handed over with the bytes
// read so far, so a member's browser reaches net/http at its first
// request with a cookie and stays there.
//
// What net/http would do for such a request the front does too: the
// timeouts (ReadHeaderTimeout for a head, IdleTimeout between requests),
// the Date header, no body for HEAD or 304 (nor Content-Type and
// Content-Length on a 304), and on shutdown closing the connections that
// wait for a request (RegisterOnShutdown). While the server drains, every
// request is handed over, so net/http answers it with Connection: close.

// frontAnswer appends the head of the answer to a parsed request to b, and
// answers it with the body to send after it, or reports false having
// appended nothing (net/http is to answer).
type frontAnswer func(b []byte, r *http.Request) (frontReply, bool)

// frontReply is an answer's bytes: the head (in the connection's buffer),
// the body (not copied), and whether the connection closes after it.
type frontReply struct {
	head, body []byte
	close      bool
}

// frontHeadLimit is the front's read buffer: a head that does not fit is
// net/http's (which takes up to 1 MB).
const frontHeadLimit = 4 << 10

type front struct {
	ln        net.Listener
	answer    frontAnswer
	handed    chan net.Conn // connections for net/http's Accept
	closed    chan struct{}
	closing   sync.Once
	acceptErr atomic.Pointer[error]

	readHeaderTimeout, idleTimeout time.Duration

	mu       sync.Mutex
	conns    map[*frontState]struct{} // the connections the front reads
	shutting atomic.Bool
}

// frontState says whether a connection waits for a request (idle), which
// shutdown closes, or is answering one, which closes after its answer.
type frontState struct {
	c     net.Conn
	state atomic.Int32
}

const (
	frontActive int32 = iota
	frontIdle
	frontClosed
)

// ServeMain serves the main site on ln as `marquee serve` does: the front
// answers visitors' cached pages, net/http with srv everything else.
func (s *Server) ServeMain(srv *http.Server, ln net.Listener) error {
	return Serve(srv, newFront(ln, s.answerAtTheFront, srv))
}

// answerAtTheFront is answerVisitorHit for the requests routeHosts passes
// on unchanged (the main site's hosts, and no app that moved to its own
// domain), while the server is not draining.
func (s *Server) answerAtTheFront(b []byte, r *http.Request) (frontReply, bool) {
	if s.draining.Load() || !s.siteHost(hostOf(r.Host)) {
		return frontReply{}, false
	}
	if name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/apps/"), "/"); strings.HasPrefix(r.URL.Path, "/apps/") &&
		s.domains.get(r.Context()).byName[name] != "" {
		return frontReply{}, false
	}
	hit, ok := s.findVisitorHit(r)
	if !ok {
		// A page the chain has answered visitors from the cache, not a
		// hit this time (a new version, a render due, counts past the
		// staleness bound): the chain answers it here, as net/http would
		// have it answer, so that the connection stays with the front. A
		// crawler's or a load balancer's connection would otherwise go to
		// net/http at the first like on the page and stay there.
		if _, known := s.pages.visitorRoutes.lookup(r); !known && !renderedAheadPath(r.URL.Path) {
			return frontReply{}, false
		}
		return s.runChainAtTheFront(b, r)
	}
	id := s.requestIDOf(r)
	head, body, status := s.appendVisitorHit(b, r, hit, id)
	size := len(body)
	if r.Method == http.MethodHead {
		body = nil // net/http counts a HEAD's body as written, and sends none
	}
	s.answeredHit(r, hit, id, status, size)
	return frontReply{head: head, body: body}, true
}

// runChainAtTheFront has the main site's handler answer r into a buffer
// and appends the answer as net/http would write it. Only for page routes
// the cache serves (whole answers, never streamed). A panic closes the
// connection, as net/http's recovery does.
func (s *Server) runChainAtTheFront(b []byte, r *http.Request) (reply frontReply, ok bool) {
	w := &frontWriter{header: make(http.Header, 16)}
	defer func() {
		if v := recover(); v != nil {
			s.logger.Error("panic serving a page at the front", "path", r.URL.Path, "panic", v)
			reply, ok = frontReply{head: b[:0], close: true}, true
		}
	}()
	s.mainHandler.ServeHTTP(w, r)
	return w.appendResponse(b, r.Method == http.MethodHead), true
}

func newFront(ln net.Listener, answer frontAnswer, srv *http.Server) *front {
	f := &front{ln: ln, answer: answer, handed: make(chan net.Conn), closed: make(chan struct{}),
		readHeaderTimeout: srv.ReadHeaderTimeout, idleTimeout: srv.IdleTimeout, conns: map[*frontState]struct{}{}}
	if f.idleTimeout == 0 {
		f.idleTimeout = srv.ReadTimeout
	}
	srv.RegisterOnShutdown(f.shutdown)
	go f.acceptLoop()
	return f
}

// Accept is net/http's: the connections the front hands over.
func (f *front) Accept() (net.Conn, error) {
	select {
	case c := <-f.handed:
		return c, nil
	case <-f.closed:
		if err := f.acceptErr.Load(); err != nil {
			return nil, *err
		}
		return nil, net.ErrClosed
	}
}

func (f *front) Close() error {
	var err error
	f.closing.Do(func() {
		err = f.ln.Close()
		close(f.closed)
	})
	return err
}

func (f *front) Addr() net.Addr { return f.ln.Addr() }

// acceptLoop accepts as net/http does: a temporary error (too many open
// files) waits and tries again, anything else ends the listener.
func (f *front) acceptLoop() {
	var delay time.Duration
	for {
		c, err := f.ln.Accept()
		if err != nil {
			select {
			case <-f.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			f.acceptErr.Store(&err)
			_ = f.Close()
			return
		}
		delay = 0
		go f.serve(c)
	}
}

// shutdown closes the connections that wait for a request, as
// http.Server.Shutdown closes net/http's idle ones; the others close after
// the answer under way.
func (f *front) shutdown() {
	f.shutting.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	for st := range f.conns {
		if st.state.CompareAndSwap(frontIdle, frontClosed) {
			_ = st.c.Close()
		}
	}
}

func (f *front) track(st *frontState, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if on {
		f.conns[st] = struct{}{}
	} else {
		delete(f.conns, st)
	}
}

var frontReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, frontHeadLimit) }}

func (f *front) serve(c net.Conn) {
	st := &frontState{c: c}
	f.track(st, true)
	defer f.track(st, false)
	br := frontReaders.Get().(*bufio.Reader)
	fio := newFrontIO(c)
	br.Reset(fio)
	fc := &frontConn{remote: c.RemoteAddr().String()}
	first := true
	var dl readDeadline
	for {
		wait := f.idleTimeout
		if first || wait == 0 {
			wait = f.readHeaderTimeout
		}
		st.state.Store(frontIdle)
		if f.shutting.Load() {
			f.drop(c, br)
			return
		}
		dl.extend(c, wait)
		_, err := br.Peek(1)
		if !st.state.CompareAndSwap(frontIdle, frontActive) || err != nil {
			f.drop(c, br)
			return
		}
		head, complete, err := readHead(br, func() { dl.set(c, f.readHeaderTimeout) })
		if err != nil {
			// The client left, or sent too slowly (ReadHeaderTimeout):
			// net/http closes such a connection too.
			f.drop(c, br)
			return
		}
		if !complete {
			f.handOver(c, br)
			return
		}
		r, ok := fc.request(head)
		var reply frontReply
		if ok {
			reply, ok = f.answer(fc.out[:0], r)
		}
		if !ok {
			f.handOver(c, br)
			return
		}
		_, _ = br.Discard(len(head))
		first = false
		fc.out = reply.head
		// One writev: the head from the connection's buffer, the body
		// from the cache, not copied.
		// (writeAll consumes the slice: it is made again from the
		// connection's array each time.)
		fc.bufs = append(fc.iov[:0], reply.head, reply.body)
		err = fio.writeAll(fc.bufs)
		if cap(fc.out) > 64<<10 {
			fc.out = nil // a large answer's buffer does not stay with an idle connection
		}
		if err != nil || reply.close {
			f.drop(c, br)
			return
		}
	}
}

// readDeadline is a connection's read deadline as last set.
type readDeadline struct{ at time.Time }

func (dl *readDeadline) set(c net.Conn, d time.Duration) {
	dl.at = time.Time{}
	if d > 0 {
		dl.at = time.Now().Add(d)
	}
	_ = c.SetReadDeadline(dl.at)
}

// extend sets the deadline d from now unless the one set is at least
// 15/16 of d away: between requests on a busy connection the deadline is
// moved every d/16, not at every request (each move takes the
// connection's lock and the runtime's timer; 2% of a hit), and the idle
// timeout holds to within a sixteenth.
func (dl *readDeadline) extend(c net.Conn, d time.Duration) {
	if d > 0 && !dl.at.IsZero() && time.Until(dl.at) >= d-d/16 {
		return
	}
	dl.set(c, d)
}

func (f *front) drop(c net.Conn, br *bufio.Reader) {
	_ = c.Close()
	br.Reset(nil)
	frontReaders.Put(br)
}

// handOver gives c to net/http, the bytes read so far first.
func (f *front) handOver(c net.Conn, br *bufio.Reader) {
	_ = c.SetDeadline(time.Time{})
	hc := &handedConn{Conn: c, br: br}
	select {
	case f.handed <- hc:
	case <-f.closed:
		_ = c.Close()
	}
}

// readHead peeks at a request's head (up to its empty line) without
// consuming it. complete is false when the head does not fit the buffer or
// is not made of CRLF lines. reading is called before the first read past
// what is buffered (the head's deadline: most heads arrive whole).
func readHead(br *bufio.Reader, reading func()) (head []byte, complete bool, err error) {
	for {
		buf, _ := br.Peek(br.Buffered())
		for i := 0; ; {
			j := bytes.IndexByte(buf[i:], '\n')
			if j < 0 {
				break
			}
			line := buf[i : i+j+1]
			if len(line) < 2 || line[len(line)-2] != '\r' {
				return buf, false, nil // a bare LF: net/http's to judge
			}
			if len(line) == 2 {
				return buf[:i+j+1], true, nil
			}
			i += j + 1
		}
		if br.Buffered() >= frontHeadLimit {
			return buf, false, nil
		}
		if reading != nil {
			reading()
			reading = nil
		}
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			buf, _ = br.Peek(br.Buffered())
			return buf, false, err
		}
	}
}

// handedConn is a connection net/http takes over from the front: it reads
// what the front read and did not answer, then the connection.
type handedConn struct {
	net.Conn
	br *bufio.Reader
}

func (c *handedConn) Read(p []byte) (int, error) {
	if c.br != nil {
		if c.br.Buffered() > 0 {
			return c.br.Read(p)
		}
		c.br.Reset(nil)
		frontReaders.Put(c.br)
		c.br = nil
	}
	return c.Conn.Read(p)
}

// ReadFrom keeps the kernel's sendfile (net/http asks for it).
func (c *handedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}

// CloseWrite half-closes (net/http's lingering close).
func (c *handedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// frontConn is one connection's request and answer, reused from one
// request to the next (nothing keeps either past its answer).
type frontConn struct {
	remote string
	req    http.Request
	url    url.URL
	header http.Header
	out    []byte
	iov    [2][]byte
	bufs   [][]byte
}

// request parses head into the connection's request, or reports false
// for anything the front leaves to net/http.
func (fc *frontConn) request(head []byte) (*http.Request, bool) {
	line, rest, _ := bytes.Cut(head, crlf)
	method, line, ok1 := bytes.Cut(line, space)
	target, proto, ok2 := bytes.Cut(line, space)
	if !ok1 || !ok2 || string(proto) != "HTTP/1.1" || len(target) == 0 || target[0] != '/' ||
		bytes.IndexByte(target, '%') >= 0 || bytes.IndexByte(target, '#') >= 0 {
		return nil, false
	}
	var m string
	switch string(method) {
	case http.MethodGet:
		m = http.MethodGet
	case http.MethodHead:
		m = http.MethodHead
	default:
		return nil, false
	}
	for _, b := range target {
		if b <= ' ' || b >= 0x7f {
			return nil, false
		}
	}
	if fc.header == nil {
		fc.header = make(http.Header, 8)
	}
	clear(fc.header)
	host, hosts := "", 0
	for len(rest) > 2 {
		var hl []byte
		hl, rest, _ = bytes.Cut(rest, crlf)
		name, value, ok := bytes.Cut(hl, colon)
		if !ok || !httpguts.ValidHeaderFieldName(string(name)) {
			return nil, false // obs-fold, a space before the colon, no colon
		}
		value = bytes.TrimSpace(value)
		if !httpguts.ValidHeaderFieldValue(string(value)) {
			return nil, false // net/http answers 400
		}
		key := canonicalHeaderKey(name)
		switch key {
		case "Host":
			host, hosts = string(value), hosts+1
			continue
		case "Cookie", "Transfer-Encoding", "Expect", "Upgrade", "Authorization":
			return nil, false
		case "Content-Length":
			if string(value) != "0" {
				return nil, false
			}
		case "Connection":
			if !strings.EqualFold(string(value), "keep-alive") {
				return nil, false
			}
		}
		fc.header[key] = append(fc.header[key], string(value))
	}
	if hosts != 1 {
		return nil, false
	}
	path, query, _ := bytes.Cut(target, question)
	fc.url = url.URL{Path: string(path), RawQuery: string(query)}
	fc.req = http.Request{Method: m, URL: &fc.url, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: fc.header, Host: host, RemoteAddr: fc.remote, RequestURI: string(target), Body: http.NoBody}
	// No context of its own: Context() answers Background (WithContext
	// would copy the request).
	return &fc.req, true
}

var (
	crlf     = []byte("\r\n")
	space    = []byte(" ")
	colon    = []byte(":")
	question = []byte("?")
)

// commonHeaderKeys spares the usual headers an allocation each.
var commonHeaderKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Host", "Accept", "Accept-Encoding", "Accept-Language", "User-Agent", "Connection",
		"Cookie", "If-None-Match", "X-Request-Id", "X-Forwarded-For", "X-Forwarded-Proto", "X-Real-Ip",
		"Cache-Control", "Pragma", "Referer", "Upgrade-Insecure-Requests", "Sec-Fetch-Site", "Sec-Fetch-Mode",
		"Sec-Fetch-Dest", "Sec-Fetch-User", "Sec-Ch-Ua", "Sec-Ch-Ua-Mobile", "Sec-Ch-Ua-Platform", "Priority",
		"Content-Length", "Transfer-Encoding", "Expect", "Upgrade", "Authorization", "Dnt", "Te", "Via"} {
		m[k] = k
		m[strings.ToLower(k)] = k
	}
	return m
}()

func canonicalHeaderKey(name []byte) string {
	if k, ok := commonHeaderKeys[string(name)]; ok {
		return k
	}
	return http.CanonicalHeaderKey(string(name))
}

// firstValue is h.Get(key) for a key already in canonical form (as net/http
// and the front store them): Get canonicalises its key on every call, a
// cost paid three times on every cached page.
func firstValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// appendVisitorHit appends the head of the answer answerVisitorHit gives
// (the same status and headers) as net/http would write it, and answers
// its body (the cache's bytes, not to be written into) and status.
func (s *Server) appendVisitorHit(b []byte, r *http.Request, hit visitorHit, id string) ([]byte, []byte, int) {
	p := hit.page
	a := p.answerTo(r)
	status := p.status
	if a.notModified {
		status = http.StatusNotModified
	}
	b = appendStatusLine(b, status)
	b = appendHeader(b, "Date", dateValue(hit.start))
	b = appendHeader(b, "X-Page-Cache", pageCacheStates[hit.state]...)
	b = appendHeader(b, "X-Request-Id", id)
	if !a.notModified {
		// The rest is the same at every hit of this page and encoding.
		block := p.frontHeaders[a.index].Load()
		if block == nil {
			block = new([]byte)
			*block = s.appendPageHeaders(nil, p, a)
			p.frontHeaders[a.index].Store(block)
		}
		return append(b, *block...), a.body, status
	}
	return s.appendPageHeaders(b, p, a), nil, status
}

// appendPageHeaders appends the headers of a cached page's answer but the
// date, the cache state and the request id, and the empty line.
func (s *Server) appendPageHeaders(b []byte, p *cachedPage, a pageAnswer) []byte {
	for k, vs := range p.header {
		switch {
		case setByTheHit[k]: // replaced below, as writeCachedPage does
		case a.notModified && (k == "Content-Type" || k == "Content-Length" || k == "Transfer-Encoding"):
			// net/http drops what describes a body from a 304.
		default:
			b = appendHeader(b, k, vs...)
		}
	}
	b = appendHeader(b, "Vary", varyCookie...)
	b = appendHeader(b, "Cache-Control", cacheControlShared...)
	b = appendHeader(b, "Etag", a.sent.etag...)
	for i, name := range securityHeaderNames {
		b = appendHeader(b, name, s.securityHeaderValues[i]...)
	}
	if a.notModified {
		return append(b, "\r\n"...)
	}
	if a.encoding != "" {
		b = appendHeader(b, "Content-Encoding", a.encoding)
	}
	b = appendHeader(b, "Content-Length", a.sent.length...)
	return append(b, "\r\n"...)
}

// setByTheHit are the headers answerVisitorHit and writeCachedPage set
// over the cached page's own.
var setByTheHit = map[string]bool{"X-Page-Cache": true, "Vary": true, "Cache-Control": true, "Etag": true,
	"X-Request-Id": true, "Content-Encoding": true, "Content-Length": true,
	securityHeaderNames[0]: true, securityHeaderNames[1]: true, securityHeaderNames[2]: true, securityHeaderNames[3]: true}

// appendHeader writes a header line per value, CR and LF as spaces, as
// net/http does.
func appendHeader(b []byte, name string, values ...string) []byte {
	for _, v := range values {
		b = append(b, name...)
		b = append(b, ": "...)
		if strings.IndexByte(v, '\r') < 0 && strings.IndexByte(v, '\n') < 0 {
			b = append(b, v...)
		} else {
			b = append(b, strings.NewReplacer("\r", " ", "\n", " ").Replace(v)...)
		}
		b = append(b, "\r\n"...)
	}
	return b
}

// frontWriter is the http.ResponseWriter of a request the front has the
// chain answer: it holds the whole answer.
type frontWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *frontWriter) Header() http.Header { return w.header }

func (w *frontWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
}

func (w *frontWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

// Flush does nothing: the answer is sent whole.
func (w *frontWriter) Flush() {}

func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified && status >= 200
}

// appendResponse appends the answer as net/http writes a handler's answer
// that did not flush: the Date unless set, the type sniffed when none was
// set, Content-Length from the body when the handler set none, nothing of
// a body for a 204 or 304, no body for HEAD.
func (w *frontWriter) appendResponse(b []byte, head bool) frontReply {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	h := w.header
	allowed := bodyAllowed(status)
	if allowed {
		if _, typed := h["Content-Type"]; !typed && len(w.body) > 0 && h.Get("Content-Encoding") == "" {
			h.Set("Content-Type", http.DetectContentType(w.body))
		}
		if h.Get("Content-Length") == "" && (len(w.body) > 0 || !head) {
			h.Set("Content-Length", strconv.Itoa(len(w.body)))
		}
		h.Del("Transfer-Encoding")
	} else {
		h.Del("Content-Type")
		h.Del("Content-Length")
		h.Del("Transfer-Encoding")
	}
	b = appendStatusLine(b, status)
	if _, dated := h["Date"]; !dated {
		b = appendHeader(b, "Date", dateValue(time.Now()))
	}
	for k, vs := range h {
		b = appendHeader(b, k, vs...)
	}
	b = append(b, "\r\n"...)
	reply := frontReply{head: b, close: httpguts.HeaderValuesContainsToken(h["Connection"], "close")}
	if allowed && !head {
		reply.body = w.body
	}
	return reply
}

// appendStatusLine appends "HTTP/1.1 200 OK" and its line end.
func appendStatusLine(b []byte, status int) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	return append(b, "\r\n"...)
}

// The Date header's value changes once a second: formatted then, not per
// answer.
var frontDate atomic.Pointer[dateStamp]

type dateStamp struct {
	second int64
	value  string
}

func dateValue(now time.Time) string {
	d := frontDate.Load()
	if d == nil || d.second != now.Unix() {
		d = &dateStamp{second: now.Unix(), value: now.UTC().Format(http.TimeFormat)}
		frontDate.Store(d)
	}
	return d.value
}
