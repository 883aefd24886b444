package server

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/render"
	"marquee/store/storetest"
)

// Under heavy load a render can run out of time; the visitor then gets the
// content-less fallback page, which must never be cached: the next visitor
// gets the real page.
func TestTimedOutRenderIsNotCached(t *testing.T) {
	ts := newTestServer(t, storetest.Postgres(t))
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	healthy := ts.renderer
	slow, err := render.New(render.Options{ManifestPath: filepath.Join(root, "public/build/manifest.json"), Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}

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
