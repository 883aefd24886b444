package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"marquee/server/media"
	"marquee/store"
	"marquee/store/storetest"
)

// TestLandingServedStaleWhileDatabaseDown: without Redis, a visitor's
// landing page that was cached is served (the same bytes) while PostgreSQL
// is unreachable, rather than a 503; a page never cached still answers 503
// (the database really is down), and a member's page too.
func TestLandingServedStaleWhileDatabaseDown(t *testing.T) {
	t.Parallel()
	db, proxy := storetest.PostgresBehindProxy(t)
	ts := newTestServer(t, db)
	warm := ts.do(t, "GET", "/apps/demo", nil, nil)
	if warm.Status != http.StatusOK {
		t.Fatalf("warm: %d", warm.Status)
	}
	token := sessionFor(t, ts, "follower@demo.test")
	proxy.Cut()
	// The versions this process knew are forgotten (as when they age):
	// the next request must ask the database, which cannot answer.
	ts.store.InvalidateAllApps(context.Background())
	for i := 0; i < 3; i++ {
		res := ts.do(t, "GET", "/apps/demo", nil, nil)
		if res.Status != http.StatusOK || res.Body != warm.Body {
			t.Fatalf("landing with the database down: %d (same bytes: %v) %.300s", res.Status, res.Body == warm.Body, res.Body)
		}
		if res.Header.Get("X-Page-Cache") != "stale" {
			t.Errorf("X-Page-Cache %q, want stale", res.Header.Get("X-Page-Cache"))
		}
	}
	if res := ts.do(t, "GET", "/apps/demo/events", nil, nil); res.Status != http.StatusServiceUnavailable {
		t.Errorf("a page never cached, with the database down: %d, want 503", res.Status)
	}
	if res := ts.do(t, "GET", "/apps/demo", nil, withSession(token)); res.Status != http.StatusServiceUnavailable {
		t.Errorf("a member's landing with the database down: %d, want 503", res.Status)
	}
	proxy.Resume(t)
	waitFor(t, func() bool {
		res := ts.do(t, "GET", "/apps/demo", nil, nil)
		return res.Status == http.StatusOK && res.Header.Get("X-Page-Cache") != "stale"
	})
}

// blackHole accepts TCP connections and never answers on them: a database
// behind a dead network path or a hung host.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestBlackHoledDatabaseAnswers503Quickly: PostgreSQL accepts connections
// and never answers. A page and a JSON call answer 503 within seconds (the
// connect timeout covers the handshake; pgdriver alone waited its read
// timeout, and a request made several queries), and while it stays so the
// next requests answer 503 at once (the breaker).
func TestBlackHoledDatabaseAnswers503Quickly(t *testing.T) {
	t.Parallel()
	db, err := store.Open("postgres://postgres@" + blackHole(t) + "/test?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	files := &media.Local{Dir: t.TempDir(), BaseURL: "http://main.test", Key: []byte("test-key")}
	st := store.New(store.Options{DB: db, Media: media.Signer{Storage: files}, MediaURL: "http://main.test", Logger: logger})
	srv := New(Deps{Config: Config{PublicURL: "http://main.test", AuthURL: "http://auth.test", InFlightWait: time.Minute,
		RenderTimeout: time.Minute}, Store: st, Renderer: testEngine(t), Files: files, Logger: logger})
	fast := 0
	for i, target := range []string{"/apps/demo", "/api/app/demo/landing", "/apps/demo", "/api/app/demo/landing"} {
		start := time.Now()
		rec := httptest.NewRecorder()
		srv.Main().ServeHTTP(rec, newRequest("GET", target, nil))
		took := time.Since(start)
		t.Logf("GET %s: %d in %s", target, rec.Code, took)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("GET %s: %d, want 503: %.200s", target, rec.Code, rec.Body)
		}
		if took > 10*time.Second {
			t.Errorf("GET %s took %s: a black-holed database must not hold a request for long", target, took)
		}
		if i > 0 && took < time.Second {
			fast++
		}
	}
	// Behind the first, the breaker answers without waiting (one probe a
	// second may wait its connect timeout).
	if fast == 0 {
		t.Error("no request after the first was answered at once: no breaker")
	}
}

// TestStalledDatabaseHoldsARequestForItsBudget: PostgreSQL's connections,
// already open, stop answering. A call that needs the database answers
// within DB_REQUEST_TIMEOUT (not DB_QUERY_TIMEOUT's 10 s, twice), and
// /healthz stays up meanwhile while /readyz says the database is down
// (issue 41 item 12).
func TestStalledDatabaseHoldsARequestForItsBudget(t *testing.T) {
	t.Parallel()
	db, proxy := storetest.PostgresBehindProxy(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	files := &media.Local{Dir: t.TempDir(), BaseURL: "http://main.test", Key: []byte("test-key")}
	st := store.New(store.Options{DB: db, Media: media.Signer{Storage: files}, MediaURL: "http://main.test", Logger: logger})
	srv := New(Deps{Config: Config{PublicURL: "http://main.test", AuthURL: "http://auth.test", InFlightWait: time.Minute,
		RenderTimeout: time.Minute, DBRequestTimeout: time.Second}, Store: st, Renderer: testEngine(t), Files: files, Logger: logger})
	get := func(target string) (int, time.Duration) {
		start := time.Now()
		rec := httptest.NewRecorder()
		srv.Main().ServeHTTP(rec, newRequest("GET", target, nil))
		return rec.Code, time.Since(start)
	}
	if code, _ := get("/api/app/no-such-app/landing"); code != http.StatusNotFound {
		t.Fatalf("before the stall: %d", code)
	}
	proxy.Stall()
	defer proxy.Unstall()
	code, took := get("/api/app/no-such-app/landing")
	t.Logf("stalled: %d in %s", code, took)
	if code < 500 || took > 2500*time.Millisecond {
		t.Errorf("a stalled database held the call %s (%d); the budget is 1 s", took, code)
	}
	if code, took := get("/healthz"); code != http.StatusOK || took > time.Second {
		t.Errorf("/healthz while the database stalls: %d in %s", code, took)
	}
	if code, took := get("/readyz"); code != http.StatusServiceUnavailable || took > 5*time.Second {
		t.Errorf("/readyz while the database stalls: %d in %s", code, took)
	}
}
