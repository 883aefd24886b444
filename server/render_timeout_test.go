package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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
