package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// With a limit of 3, 50 concurrent requests never run more than 3 handlers
// at once and all succeed; a request that cannot get a turn within the wait
// answers 503 with Retry-After, and /healthz never waits.
func TestInFlightLimit(t *testing.T) {
	t.Parallel()
	f := newInFlight(3, 5*time.Second)
	var running, peak atomic.Int64
	release := make(chan struct{})
	e := echo.New()
	e.Use(f.middleware)
	e.GET("/work", func(c echo.Context) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		running.Add(-1)
		return c.String(http.StatusOK, "done")
	})
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/media/i/x/original", func(c echo.Context) error { return c.String(http.StatusOK, "file") })

	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest("GET", "/work", nil))
			codes[i] = rec.Code
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for running.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("healthz waited behind the limit: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/media/i/x/original", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("a media file waited behind the limit: %d", rec.Code)
	}
	close(release)
	wg.Wait()
	if peak.Load() != 3 {
		t.Fatalf("peak handlers at once: %d, want 3", peak.Load())
	}
	for i, c := range codes {
		if c != http.StatusOK {
			t.Fatalf("request %d: %d", i, c)
		}
	}

	// Every turn taken: a request gives up after the wait with a 503.
	short := newInFlight(1, 50*time.Millisecond)
	if !short.sem.TryAcquire(1) {
		t.Fatal("fresh limiter is full")
	}
	e2 := echo.New()
	e2.HTTPErrorHandler = func(err error, c echo.Context) { // the server's handler maps *Error the same way
		var e *Error
		if errors.As(err, &e) {
			_ = c.NoContent(e.Status)
		}
	}
	e2.Use(short.middleware)
	e2.GET("/work", func(c echo.Context) error { return c.String(http.StatusOK, "done") })
	rec = httptest.NewRecorder()
	e2.ServeHTTP(rec, httptest.NewRequest("GET", "/work", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("busy: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	short.sem.Release(1)
	rec = httptest.NewRecorder()
	e2.ServeHTTP(rec, httptest.NewRequest("GET", "/work", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("after release: %d", rec.Code)
	}
}
