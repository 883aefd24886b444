package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"marquee/render"
)

// Under heavy load a render can run out of time; the visitor then gets the
// content-less fallback page, which must never be cached: the next visitor
// gets the real page.
func TestTimedOutRenderIsNotCached(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	healthy := ts.renderer
	slow := timingOut{healthy}
	ts.renderer = slow
	for i := 0; i < 2; i++ {
		page := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"Accept-Encoding": "gzip"})
		if page.Status != http.StatusServiceUnavailable || page.Header.Get("Retry-After") == "" {
			t.Fatalf("timed-out render: %d, Retry-After %q", page.Status, page.Header.Get("Retry-After"))
		}
		if page.Header.Get("Cache-Control") != "no-store" || page.Header.Get("X-Page-Cache") != "bypass" || page.Header.Get("ETag") != "" {
			t.Errorf("a fallback page must not be cached: %v", page.Header)
		}
	}

	ts.renderer = healthy
	page := ts.do(t, "GET", "/apps/demo", nil, nil)
	if page.Status != http.StatusOK || page.Header.Get("X-Page-Cache") != "miss" || !strings.Contains(page.Body, "Upcoming Events") {
		t.Fatalf("after the timeouts: %d, %s", page.Status, page.Header.Get("X-Page-Cache"))
	}
	if again := ts.do(t, "GET", "/apps/demo", nil, nil); again.Header.Get("X-Page-Cache") != "hit" {
		t.Errorf("the real page is cached: %s", again.Header.Get("X-Page-Cache"))
	}
}

// timingOut is a renderer whose every render runs out of time, as a real
// one does under load: no timer races a render here.
type timingOut struct{ Renderer }

func (timingOut) Render(ctx context.Context, page string, _ any) (render.Result, error) {
	return render.Result{}, fmt.Errorf("render %s: %w", page, render.ErrTimeout)
}

// A render that others wait for is theirs too: the client that started it
// leaving (a closed tab, wrk ending its run) does not cancel it, and the
// page is cached for the next request.
func TestLeavingClientKeepsTheSharedRender(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	gate := &gatedRenderer{Renderer: ts.renderer, started: make(chan struct{}, 1), release: make(chan struct{})}
	ts.renderer = gate
	ctx, leave := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := newRequest("GET", "/apps/demo", nil).WithContext(ctx)
		ts.Main().ServeHTTP(httptest.NewRecorder(), req)
	}()
	<-gate.started
	leave()
	close(gate.release)
	<-done
	page := ts.do(t, "GET", "/apps/demo", nil, nil)
	if page.Status != http.StatusOK || page.Header.Get("X-Page-Cache") != "hit" {
		t.Fatalf("after the first client left: %d %s, want the page it started, cached", page.Status, page.Header.Get("X-Page-Cache"))
	}
	if n := gate.renders.Load(); n != 1 {
		t.Errorf("%d renders, want 1", n)
	}
}

// gatedRenderer holds each render until release, and gives up, as the real
// renderer does, when its context ends first.
type gatedRenderer struct {
	Renderer
	started chan struct{}
	release chan struct{}
	renders atomic.Int64
}

func (g *gatedRenderer) Render(ctx context.Context, page string, props any) (render.Result, error) {
	g.renders.Add(1)
	select {
	case g.started <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return render.Result{}, fmt.Errorf("render %s: %w", page, ctx.Err())
	}
	return g.Renderer.Render(ctx, page, props)
}

// When a render others wait for fails for want of time (overload), they
// get its answer (503, Retry-After) rather than each rendering the page for
// itself: thirty renders where one had just run out of time were what
// turned a slow machine into a stalled one.
func TestWaitersShareAFailedRender(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	gate := &gatedRenderer{Renderer: timingOut{ts.renderer}, started: make(chan struct{}, 1), release: make(chan struct{})}
	ts.renderer = gate
	const visitors = 30
	statuses := make(chan int, visitors)
	visit := func() { statuses <- ts.do(t, "GET", "/apps/demo", nil, nil).Status }
	go visit()
	<-gate.started
	for i := 1; i < visitors; i++ {
		go visit()
	}
	// Wait until the others wait for the render in progress.
	for {
		ts.pages.mu.Lock()
		n := 0
		for _, f := range ts.pages.fill {
			n += int(f.waiting.Load())
		}
		ts.pages.mu.Unlock()
		if n == visitors-1 {
			break
		}
		runtime.Gosched()
	}
	close(gate.release)
	for i := 0; i < visitors; i++ {
		if s := <-statuses; s != http.StatusServiceUnavailable {
			t.Errorf("visitor %d: %d, want 503", i, s)
		}
	}
	if n := gate.renders.Load(); n != 1 {
		t.Errorf("%d renders for %d visitors of a page whose render failed, want 1", n, visitors)
	}
}
