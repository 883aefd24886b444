package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// frontUnderTest serves ts's main site on a loopback port as ServeMain
// does, counting the answers the front wrote itself.
type frontUnderTest struct {
	addr     string
	srv      *http.Server
	answered atomic.Int64
}

func startFront(t *testing.T, ts *testServer, configure func(*http.Server)) *frontUnderTest {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fu := &frontUnderTest{addr: ln.Addr().String()}
	fu.srv = &http.Server{Handler: ts.closeWhenDraining(ts.mainHandler), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	if configure != nil {
		configure(fu.srv)
	}
	f := newFront(ln, func(b []byte, r *http.Request) (frontReply, bool) {
		reply, ok := ts.answerAtTheFront(b, r)
		if ok {
			fu.answered.Add(1)
		}
		return reply, ok
	}, fu.srv)
	served := make(chan error, 1)
	go func() { served <- Serve(fu.srv, f) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = fu.srv.Shutdown(ctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return fu
}

// conn is a raw client connection: requests written as given, answers
// read with net/http's parser.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (fu *frontUnderTest) dial(t *testing.T) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", fu.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) send(raw string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, raw); err != nil {
		rc.t.Fatal(err)
	}
}

// answer reads one answer to a request of method.
func (rc *rawConn) answer(method string) (*http.Response, []byte) {
	rc.t.Helper()
	res, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("reading an answer: %v", err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		rc.t.Fatalf("reading a body: %v", err)
	}
	return res, body
}

func get(path string, headers ...string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + strings.Join(headers, "") + "\r\n"
}

// warm has the chain answer path twice, so the cache holds the page and
// knows the request.
func (fu *frontUnderTest) warm(t *testing.T, path string) {
	t.Helper()
	for range 2 {
		rc := fu.dial(t)
		rc.send(get(path, "Accept-Encoding: gzip\r\n"))
		if res, _ := rc.answer("GET"); res.StatusCode != 200 {
			t.Fatalf("warming %s: %d", path, res.StatusCode)
		}
		rc.c.Close()
	}
	fu.answered.Store(0) // the front answers the pages rendered ahead too: counted from here
}

// The front answers a visitor's cached page with what net/http answers
// through answerVisitorHit: the same status, headers (but the date and the
// request id) and bytes, for every encoding, HEAD, a 304, a query, and
// requests sent back to back on one connection.
func TestFrontAnswersAsNetHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	fu := startFront(t, ts, nil)
	fu.warm(t, "/apps/demo")
	fu.warm(t, "/apps/demo/community")
	fu.warm(t, "/apps/demo/community?sort=top")
	etag := func() string {
		rc := fu.dial(t)
		rc.send(get("/apps/demo"))
		res, _ := rc.answer("GET")
		return res.Header.Get("Etag")
	}()
	if etag == "" {
		t.Fatal("no ETag on the landing")
	}
	cases := []struct{ name, method, path, headers string }{
		{"gzip", "GET", "/apps/demo", "Accept-Encoding: gzip\r\n"},
		{"brotli", "GET", "/apps/demo", "Accept-Encoding: gzip, deflate, br\r\n"},
		{"identity", "GET", "/apps/demo", ""},
		{"refused gzip", "GET", "/apps/demo", "Accept-Encoding: gzip;q=0\r\n"},
		{"HEAD", "HEAD", "/apps/demo", "Accept-Encoding: gzip\r\n"},
		{"304", "GET", "/apps/demo", "Accept-Encoding: gzip\r\nIf-None-Match: " + etag + "\r\n"},
		{"community", "GET", "/apps/demo/community", "Accept-Encoding: gzip\r\nUser-Agent: test\r\nAccept: text/html\r\n"},
		{"query", "GET", "/apps/demo/community?sort=top", "Accept-Encoding: br\r\n"},
		{"proxy's id", "GET", "/apps/demo", "X-Request-Id: from-the-proxy-1234\r\n"},
	}
	for _, tc := range cases {
		raw := strings.Replace(get(tc.path, tc.headers), "GET", tc.method, 1)
		before := fu.answered.Load()
		front := fu.dial(t)
		front.send(raw)
		got, gotBody := front.answer(tc.method)
		if fu.answered.Load() != before+1 {
			t.Fatalf("%s: not answered by the front", tc.name)
		}
		// A connection whose first request is net/http's stays net/http's.
		chain := fu.dial(t)
		chain.send(get("/healthz") + raw)
		chain.answer("GET")
		want, wantBody := chain.answer(tc.method)
		if fu.answered.Load() != before+1 {
			t.Fatalf("%s: the front answered on a connection handed to net/http", tc.name)
		}
		if got.StatusCode != want.StatusCode || !bytes.Equal(gotBody, wantBody) || got.ContentLength != want.ContentLength {
			t.Errorf("%s: front %d (%d bytes, length %d), net/http %d (%d bytes, length %d)", tc.name,
				got.StatusCode, len(gotBody), got.ContentLength, want.StatusCode, len(wantBody), want.ContentLength)
		}
		for _, h := range []http.Header{got.Header, want.Header} {
			if h.Get("Date") == "" || h.Get("X-Request-Id") == "" {
				t.Errorf("%s: no Date or X-Request-Id in %v", tc.name, h)
			}
		}
		if tc.name == "proxy's id" && got.Header.Get("X-Request-Id") != "from-the-proxy-1234" {
			t.Errorf("the proxy's request id became %q", got.Header.Get("X-Request-Id"))
		}
		for _, h := range []http.Header{got.Header, want.Header} {
			h.Del("Date")
			h.Del("X-Request-Id")
		}
		if len(got.Header) != len(want.Header) {
			t.Errorf("%s: front headers %v\nnet/http's %v", tc.name, got.Header, want.Header)
		}
		for k, vs := range want.Header {
			if strings.Join(got.Header[k], "\n") != strings.Join(vs, "\n") {
				t.Errorf("%s: %s is %q at the front, %q from net/http", tc.name, k, got.Header[k], vs)
			}
		}
	}

	// Back to back on one connection, in one write: answered in order.
	before := fu.answered.Load()
	rc := fu.dial(t)
	rc.send(get("/apps/demo/community") + strings.Replace(get("/apps/demo"), "GET", "HEAD", 1) + get("/apps/demo"))
	if res, body := rc.answer("GET"); res.StatusCode != 200 || !bytes.Contains(body, []byte("<!doctype html>")) || !bytes.Contains(body, []byte("community")) {
		t.Fatalf("first of three: %d %.80q", res.StatusCode, body)
	}
	if res, body := rc.answer("HEAD"); res.StatusCode != 200 || len(body) != 0 || res.ContentLength <= 0 {
		t.Fatalf("second of three (HEAD): %d, %d bytes, length %d", res.StatusCode, len(body), res.ContentLength)
	}
	if res, body := rc.answer("GET"); res.StatusCode != 200 || int64(len(body)) != res.ContentLength {
		t.Fatalf("third of three: %d, %d bytes, length %d", res.StatusCode, len(body), res.ContentLength)
	}
	if n := fu.answered.Load() - before; n != 3 {
		t.Fatalf("the front answered %d of three requests sent together", n)
	}
}

// Whatever the front is not sure of goes to net/http with every byte the
// client sent, and the connection stays net/http's: a cookie, a body, a
// page the chain has not answered, HTTP/1.0, bare LF line ends, a head
// longer than the front's buffer, an escaped path, Connection: close,
// another host. The answers are net/http's own.
func TestFrontLeavesTheRestToNetHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	fu := startFront(t, ts, nil)
	fu.warm(t, "/apps/demo")
	long := "X-Padding: " + strings.Repeat("a", 5000) + "\r\n"
	cases := []struct {
		name, raw string
		status    int
		cache     string // X-Page-Cache wanted, "" for any
	}{
		{"a cookie", get("/apps/demo", "Cookie: marquee_pref=1\r\n"), 200, ""},
		{"a body", "GET /apps/demo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc", 200, "hit"},
		{"chunked", "GET /apps/demo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200, "hit"},
		{"not yet answered by the chain", get("/apps/demo/store"), 200, ""},
		{"HTTP/1.0", "GET /apps/demo HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", 200, "hit"},
		{"bare LF", "GET /apps/demo HTTP/1.1\nHost: 127.0.0.1\n\n", 200, "hit"},
		{"a long head", get("/apps/demo", long), 200, "hit"},
		{"an escaped path", get("/apps/%64emo"), 404, ""}, // echo routes the path as sent
		{"Connection: close", get("/apps/demo", "Connection: close\r\n"), 200, "hit"},
		{"an unknown host", "GET /apps/demo HTTP/1.1\r\nHost: elsewhere.test\r\n\r\n", 404, ""},
		{"no host", "GET /apps/demo HTTP/1.1\r\n\r\n", 400, ""},
		{"two hosts", "GET /apps/demo HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.2\r\n\r\n", 400, ""},
		{"a control character in a value", get("/apps/demo", "Accept-Encoding: gz\x01ip\r\n"), 400, ""},
		{"a space before the colon", "GET /apps/demo HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n", 400, ""},
		{"a POST", "POST /apps/demo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", 0, ""},
	}
	for _, tc := range cases {
		rc := fu.dial(t)
		rc.send(tc.raw)
		res, _ := rc.answer("GET")
		if fu.answered.Load() != 0 {
			t.Fatalf("%s: answered by the front", tc.name)
		}
		if tc.status != 0 && res.StatusCode != tc.status || tc.status == 0 && res.StatusCode < 400 {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.status)
		}
		if tc.cache != "" && res.Header.Get("X-Page-Cache") != tc.cache {
			t.Errorf("%s: X-Page-Cache %q, want %q", tc.name, res.Header.Get("X-Page-Cache"), tc.cache)
		}
		if res.Close || tc.status >= 400 {
			continue
		}
		// The connection stays net/http's, whatever comes next.
		rc.send(get("/apps/demo", "Accept-Encoding: gzip\r\n"))
		if res, _ := rc.answer("GET"); res.StatusCode != 200 || res.Header.Get("X-Page-Cache") != "hit" {
			t.Errorf("%s: the next request on the connection: %d %s", tc.name, res.StatusCode, res.Header.Get("X-Page-Cache"))
		}
		if fu.answered.Load() != 0 {
			t.Fatalf("%s: the front answered on a connection it handed over", tc.name)
		}
	}

	// A request the front answers, then one with a body on the same
	// connection: net/http reads the body (and the request after it).
	rc := fu.dial(t)
	rc.send(get("/apps/demo"))
	rc.answer("GET")
	if fu.answered.Load() != 1 {
		t.Fatal("the landing was not answered by the front")
	}
	form := "email=nobody%40demo.test&password=wrong-password-1"
	rc.send("POST /apps/demo/community HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
		strconv.Itoa(len(form)) + "\r\n\r\n" + form + get("/apps/demo"))
	if res, _ := rc.answer("POST"); res.StatusCode == 0 {
		t.Fatal("no answer to the POST")
	}
	if res, _ := rc.answer("GET"); res.StatusCode != 200 {
		t.Fatalf("the request after a handed-over POST: %d", res.StatusCode)
	}
	if fu.answered.Load() != 1 {
		t.Fatal("the front answered after handing the connection over")
	}
}

// The front keeps net/http's timeouts and shutdown: a head sent too slowly
// and a connection idle too long are closed, a draining server's requests
// are net/http's (Connection: close), and Shutdown closes the connections
// waiting for a request and returns.
func TestFrontTimeoutsAndShutdown(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	fu := startFront(t, ts, func(srv *http.Server) {
		srv.ReadHeaderTimeout = 300 * time.Millisecond
		srv.IdleTimeout = 300 * time.Millisecond
	})
	fu.warm(t, "/apps/demo")
	closed := func(rc *rawConn) bool {
		_ = rc.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err := rc.br.ReadByte()
		return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
	}
	slow := fu.dial(t)
	slow.send("GET /apps/demo HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	if !closed(slow) {
		t.Error("a head never finished was not closed")
	}
	idle := fu.dial(t)
	idle.send(get("/apps/demo"))
	idle.answer("GET")
	if fu.answered.Load() != 1 {
		t.Fatal("not answered by the front")
	}
	if !closed(idle) {
		t.Error("an idle connection was not closed")
	}

	ts.draining.Store(true)
	rc := fu.dial(t)
	rc.send(get("/apps/demo"))
	if res, _ := rc.answer("GET"); res.StatusCode != 200 || !res.Close || fu.answered.Load() != 1 {
		t.Errorf("while draining: %d, close %v, answered by the front %v", res.StatusCode, res.Close, fu.answered.Load() != 1)
	}
	ts.draining.Store(false)

	waiting := fu.dial(t)
	waiting.send(get("/apps/demo"))
	waiting.answer("GET")
	if fu.answered.Load() != 2 {
		t.Fatal("not answered by the front")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := fu.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if !closed(waiting) {
		t.Error("shutdown left a connection waiting for a request open")
	}
	if _, err := net.DialTimeout("tcp", fu.addr, time.Second); err == nil {
		t.Error("the listener still accepts after shutdown")
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// A page the front knows that is not a hit this time (a new version after
// a write) is answered at the front by the chain, as net/http has it
// answered, so a visitor's connection stays with the front: the next hit on
// it is the front's again.
func TestFrontKeepsItsConnectionsAcrossNewVersions(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	fu := startFront(t, ts, nil)
	fu.warm(t, "/apps/demo")
	rc := fu.dial(t)
	rc.send(get("/apps/demo", "Accept-Encoding: gzip\r\n"))
	if res, _ := rc.answer("GET"); res.Header.Get("X-Page-Cache") != "hit" || fu.answered.Load() != 1 {
		t.Fatalf("first: %s, answered at the front %d", res.Header.Get("X-Page-Cache"), fu.answered.Load())
	}
	for round := range 3 {
		ts.store.InvalidateApp(ctx, demo.ID)
		rc.send(get("/apps/demo", "Accept-Encoding: gzip\r\n"))
		res, body := rc.answer("GET")
		if res.StatusCode != 200 || res.Header.Get("X-Page-Cache") != "miss" || int64(len(body)) != res.ContentLength ||
			res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Date") == "" {
			t.Fatalf("round %d, after a new version: %d %s, %d bytes of %d, %v", round, res.StatusCode, res.Header.Get("X-Page-Cache"), len(body), res.ContentLength, res.Header)
		}
		// net/http's answer on its own connection is the same page, now a hit.
		other := fu.dial(t)
		other.send(get("/healthz") + get("/apps/demo", "Accept-Encoding: gzip\r\n"))
		other.answer("GET")
		want, wantBody := other.answer("GET")
		if want.Header.Get("X-Page-Cache") != "hit" || !bytes.Equal(body, wantBody) || want.Header.Get("Etag") != res.Header.Get("Etag") {
			t.Fatalf("round %d: net/http answered %s, %d bytes (the front's miss: %d bytes)", round, want.Header.Get("X-Page-Cache"), len(wantBody), len(body))
		}
		rc.send(get("/apps/demo", "Accept-Encoding: gzip\r\n"))
		if res, _ := rc.answer("GET"); res.Header.Get("X-Page-Cache") != "hit" {
			t.Fatalf("round %d, the next request: %s", round, res.Header.Get("X-Page-Cache"))
		}
		if want := int64(1 + 2*(round+1)); fu.answered.Load() != want {
			t.Fatalf("round %d: %d answers at the front, want %d (the connection went to net/http)", round, fu.answered.Load(), want)
		}
	}
}

// The pages rendered ahead (an app's landing and community) are answered
// at the front through the chain even before any visitor read them, so a
// crawler's connection that opens with a cold page stays with the front.
// A page past its expiry is answered stale by the front itself while it is
// being renewed or every refresh slot is taken; with a slot free, the
// chain renews it.
func TestFrontAnswersFirstViewsAndStalePages(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	fu := startFront(t, ts, nil)
	rc := fu.dial(t)
	for i, path := range []string{"/apps/acme/community", "/apps/acme", "/apps/acme/community"} {
		rc.send(get(path, "Accept-Encoding: gzip\r\n"))
		res, _ := rc.answer("GET")
		want := []string{"miss", "miss", "hit"}[i]
		if res.StatusCode != 200 || res.Header.Get("X-Page-Cache") != want {
			t.Fatalf("%s: %d %s, want 200 %s", path, res.StatusCode, res.Header.Get("X-Page-Cache"), want)
		}
	}
	if n := fu.answered.Load(); n != 3 {
		t.Fatalf("the front answered %d of three, want all", n)
	}

	// Expire the landing in memory.
	ctx := context.Background()
	acme, err := ts.store.AppByIDOrName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	key := visitorKey(t, ts, acme.ID, "/apps/acme")
	p := ts.pages.get(key, time.Now())
	if p == nil {
		t.Fatal("the landing is not cached")
	}
	ts.pages.mu.Lock()
	p.expires = time.Now().Add(-time.Second)
	ts.pages.mu.Unlock()

	// Every refresh slot taken: the front answers the stale page.
	release := takeRefreshSlots(ts)
	before := fu.answered.Load()
	rc.send(get("/apps/acme", "Accept-Encoding: gzip\r\n"))
	if res, _ := rc.answer("GET"); res.StatusCode != 200 || res.Header.Get("X-Page-Cache") != "stale" {
		t.Fatalf("an expired page with every slot taken: %d %s, want 200 stale", res.StatusCode, res.Header.Get("X-Page-Cache"))
	}
	if hit, ok := ts.findVisitorHit(newRequest("GET", "/apps/acme", nil)); !ok || hit.state != "stale" {
		t.Errorf("the stale page was not answered before the router: %v %q", ok, hit.state)
	}
	// A slot free: the request goes through the chain, which renews it.
	release()
	if _, ok := ts.findVisitorHit(newRequest("GET", "/apps/acme", nil)); ok {
		t.Error("an expired page was answered before the router with a refresh slot free")
	}
	rc.send(get("/apps/acme", "Accept-Encoding: gzip\r\n"))
	if res, _ := rc.answer("GET"); res.StatusCode != 200 || res.Header.Get("X-Page-Cache") != "refresh" {
		t.Fatalf("an expired page with a slot free: %d %s, want 200 refresh", res.StatusCode, res.Header.Get("X-Page-Cache"))
	}
	if n := fu.answered.Load() - before; n != 2 {
		t.Errorf("the front answered %d of the two, want both (the connection stays its own)", n)
	}

	// Older counts past the staleness bound: the same, stale at the front
	// while no refresh could start, through the chain when one can.
	ts.pages.staleFor = 0
	ts.store.NoteEngagement(ctx, acme.ID)
	release = takeRefreshSlots(ts)
	if hit, ok := ts.findVisitorHit(newRequest("GET", "/apps/acme", nil)); !ok || hit.state != "stale" {
		t.Errorf("older counts with every slot taken: answered before the router %v, %q; want stale", ok, hit.state)
	}
	release()
	if _, ok := ts.findVisitorHit(newRequest("GET", "/apps/acme", nil)); ok {
		t.Error("older counts past the bound were answered before the router with a refresh slot free")
	}
}

// takeRefreshSlots takes every refresh slot (waiting for one resting after
// a refresh) until release.
func takeRefreshSlots(ts *testServer) (release func()) {
	for range cap(ts.pages.refreshing) {
		ts.pages.refreshing <- struct{}{}
	}
	return func() {
		for range cap(ts.pages.refreshing) {
			<-ts.pages.refreshing
		}
	}
}
