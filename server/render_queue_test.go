package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee/render"
)

// pathGate holds the renders of one path until release; every other
// render goes through at once. It counts the renders of each path and
// names the app each render was scheduled for (render.ForApp).
type pathGate struct {
	Renderer
	path    string
	release chan struct{}
	mu      sync.Mutex
	counts  map[string]int
	held    atomic.Int32
}

func (g *pathGate) Render(ctx context.Context, page string, props any) (render.Result, error) {
	path := props.(PageProps).Path
	g.mu.Lock()
	g.counts[path]++
	g.mu.Unlock()
	if path == g.path {
		g.held.Add(1)
		select {
		case <-g.release:
		case <-ctx.Done():
			return render.Result{}, fmt.Errorf("render %s: %w", page, ctx.Err())
		}
	}
	return g.Renderer.Render(ctx, page, props)
}

func (g *pathGate) count(path string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.counts[path]
}

// A cold page never waits behind a burst of visitors of another cold page:
// forty visitors opening the landing at once cause one render (they wait
// for it together), and while that render is held a visitor opening the
// community, also cold, gets it rendered and answered. When the landing's
// render comes, all forty get it.
func TestColdPageDoesNotWaitBehindABurst(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	gate := &pathGate{Renderer: ts.renderer, path: "/apps/demo", release: make(chan struct{}), counts: map[string]int{}}
	ts.renderer = gate
	const burst = 40
	statuses := make(chan string, burst)
	for i := 0; i < burst; i++ {
		go func() {
			r := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"Accept-Encoding": "gzip"})
			statuses <- fmt.Sprint(r.Status, " ", r.Header.Get("X-Page-Cache"))
		}()
	}
	// Until one renders and the others wait for it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ts.pages.mu.Lock()
		waiting := 0
		for _, f := range ts.pages.fill {
			waiting += int(f.waiting.Load())
		}
		ts.pages.mu.Unlock()
		if gate.held.Load() == 1 && waiting == burst-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the burst did not line up: %d renders held, %d waiting", gate.held.Load(), waiting)
		}
		runtime.Gosched()
	}
	other := ts.do(t, "GET", "/apps/demo/community", nil, nil)
	if other.Status != http.StatusOK || other.Header.Get("X-Page-Cache") != "miss" {
		t.Errorf("the other cold page while the burst waits: %d %q, want 200 miss", other.Status, other.Header.Get("X-Page-Cache"))
	}
	close(gate.release)
	got := map[string]int{}
	for i := 0; i < burst; i++ {
		got[<-statuses]++
	}
	if got["200 miss"] != burst {
		t.Errorf("the burst's answers %v, want %d × 200 miss (one render, shared)", got, burst)
	}
	if n := gate.count("/apps/demo"); n != 1 {
		t.Errorf("%d renders of the landing for %d visitors, want 1", n, burst)
	}
}

// busyRenderer answers as the real one does when its queue is full.
type busyRenderer struct{ Renderer }

func (busyRenderer) Render(_ context.Context, page string, _ any) (render.Result, error) {
	return render.Result{}, fmt.Errorf("render %s: %w", page, render.ErrBusy)
}

// The render queue's bound is a clear answer, not a pile-up: a cold page
// finding the queue full is a 503 with Retry-After at once (never cached),
// and a page that has a copy, expired, is served that copy.
func TestFullRenderQueueAnswersAtOnce(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	healthy := ts.renderer
	ts.visit(t, "/apps/demo", "miss")
	ts.renderer = busyRenderer{healthy}
	cold := ts.do(t, "GET", "/apps/demo/community", nil, nil)
	if cold.Status != http.StatusServiceUnavailable || cold.Header.Get("Retry-After") == "" || cold.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("cold page, queue full: %d, Retry-After %q, Cache-Control %q; want 503, a Retry-After, no-store",
			cold.Status, cold.Header.Get("Retry-After"), cold.Header.Get("Cache-Control"))
	}
	ts.pages.mu.Lock()
	for _, el := range ts.pages.entries.slots {
		// Expired, and only a render renews it (not its relative times).
		el.Value.(*pageSlot).page.expires, el.Value.(*pageSlot).page.clock = time.Now().Add(-time.Second), nil
	}
	ts.pages.mu.Unlock()
	stale := ts.do(t, "GET", "/apps/demo", nil, nil)
	if stale.Status != http.StatusOK || stale.Header.Get("X-Page-Cache") != "stale" {
		t.Errorf("expired page, queue full: %d %q, want 200 stale", stale.Status, stale.Header.Get("X-Page-Cache"))
	}
	ts.renderer = healthy
	if r := ts.do(t, "GET", "/apps/demo/community", nil, nil); r.Status != http.StatusOK {
		t.Errorf("once the queue has room: %d", r.Status)
	}
}

// Refreshes take at most half the render runtimes: with a pool of two,
// while one expired page renders again (its render held), a second expired
// page is served stale at once without being rendered or its data loaded,
// and a cold page still renders as a first view. Once the refresh is done
// its slot rests (refreshRest times the refresh's time: the second page is
// still served stale, not rendered), and then a read of the second page
// refreshes it.
func TestRefreshesLeaveRuntimesToFirstViews(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	ts.pages.setRenderPool(2)
	ts.visit(t, "/apps/demo", "miss")
	ts.visit(t, "/apps/demo/community", "miss")
	gate := &pathGate{Renderer: ts.renderer, path: "/apps/demo", release: make(chan struct{}), counts: map[string]int{}}
	ts.renderer = gate
	ts.pages.mu.Lock()
	for _, el := range ts.pages.entries.slots {
		// Expired, and only a render renews them (not their relative times).
		el.Value.(*pageSlot).page.expires, el.Value.(*pageSlot).page.clock = time.Now().Add(-time.Second), nil
	}
	ts.pages.mu.Unlock()

	refreshed := make(chan string, 1)
	go func() {
		r := ts.do(t, "GET", "/apps/demo", nil, nil)
		refreshed <- fmt.Sprint(r.Status, " ", r.Header.Get("X-Page-Cache"))
	}()
	for deadline := time.Now().Add(60 * time.Second); gate.held.Load() != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the landing's refresh never reached the renderer")
		}
	}

	if r := ts.do(t, "GET", "/apps/demo/community", nil, nil); r.Status != http.StatusOK || r.Header.Get("X-Page-Cache") != "stale" {
		t.Errorf("second expired page while the refresh slot is taken: %d %q, want 200 stale", r.Status, r.Header.Get("X-Page-Cache"))
	}
	if n := gate.count("/apps/demo/community"); n != 0 {
		t.Errorf("the second expired page was rendered %d times while no refresh slot was free, want 0", n)
	}
	if r := ts.do(t, "GET", "/apps/demo/events", nil, nil); r.Status != http.StatusOK || r.Header.Get("X-Page-Cache") != "miss" {
		t.Errorf("a cold page during the refresh: %d %q, want 200 miss", r.Status, r.Header.Get("X-Page-Cache"))
	}
	close(gate.release)
	if got := <-refreshed; got != "200 refresh" {
		t.Errorf("the landing's refresh answered %q, want 200 refresh", got)
	}
	if r := ts.do(t, "GET", "/apps/demo/community", nil, nil); r.Status != http.StatusOK || r.Header.Get("X-Page-Cache") != "stale" {
		t.Errorf("second expired page while the slot rests: %d %q, want 200 stale", r.Status, r.Header.Get("X-Page-Cache"))
	}
	if n := gate.count("/apps/demo/community"); n != 0 {
		t.Errorf("the second page rendered %d times while the slot rested, want 0", n)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := ts.do(t, "GET", "/apps/demo/community", nil, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("second expired page: %d", r.Status)
		}
		if r.Header.Get("X-Page-Cache") == "refresh" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second expired page was never refreshed once the slot had rested")
		}
	}
	if n := gate.count("/apps/demo/community"); n != 1 {
		t.Errorf("the second page rendered %d times after the slot was freed, want 1", n)
	}
}
