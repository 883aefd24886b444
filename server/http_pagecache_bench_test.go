package server

import (
	"net/http"
	"testing"
)

// nullWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the server's own work on a cached page.
type nullWriter struct{ h http.Header }

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nullWriter) WriteHeader(int)             {}

// BenchmarkVisitorPageHit is a visitor's gzip request for the cached
// landing and community, through every middleware (no network):
//
//	go test ./server -run NONE -bench VisitorPageHit -benchmem -cpuprofile cpu.out
func BenchmarkVisitorPageHit(b *testing.B) {
	ts := newTestServer(b, demoSQLite(b))
	h := ts.Main()
	for _, path := range []string{"/apps/demo", "/apps/demo/community"} {
		b.Run(path, func(b *testing.B) {
			req, w := firstVisitorRequest(h, path)
			if w.h.Get("X-Page-Cache") == "" {
				b.Fatalf("%s is not served by the page cache", path)
			}
			h.ServeHTTP(w, req) // the chain's hit teaches the fast path
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.h = http.Header{}
				h.ServeHTTP(w, req)
			}
			if got := w.h.Get("X-Page-Cache"); got != "hit" {
				b.Fatalf("X-Page-Cache %q, want hit", got)
			}
		})
	}
}

// BenchmarkVisitorPageMiss is a visitor's first view of a page nothing
// holds: the data loaded, the page rendered under goja and compressed
// (the page cache purged before each request):
//
//	go test ./server -run NONE -bench VisitorPageMiss -benchmem -cpuprofile cpu.out
func BenchmarkVisitorPageMiss(b *testing.B) {
	ts := newTestServer(b, demoSQLite(b))
	h := ts.Main()
	for _, path := range []string{"/apps/demo", "/apps/demo/community"} {
		b.Run(path, func(b *testing.B) {
			req, w := firstVisitorRequest(h, path) // the runtimes' first render
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ts.Server.pages.purge()
				w.h = http.Header{}
				h.ServeHTTP(w, req)
			}
			if got := w.h.Get("X-Page-Cache"); got != "miss" {
				b.Fatalf("X-Page-Cache %q, want miss", got)
			}
		})
	}
}

// firstVisitorRequest makes a visitor's gzip request for path and serves it
// once, answering the request and its writer to serve again.
func firstVisitorRequest(h http.Handler, path string) (*http.Request, *nullWriter) {
	req := newRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	w := &nullWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	return req, w
}
