package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A path with a trailing slash is redirected to the path without it, on
// both sites; no path, however written, may turn that redirect into one to
// another site: browsers read "/\evil.example" and "/<tab>/evil.example" as
// "//evil.example".
func TestTrailingSlashRedirectStaysOnSite(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	for _, site := range []http.Handler{ts.Main(), ts.Auth()} {
		for _, path := range []string{"/\\evil.example/", "/\tevil.example/", "/\t/evil.example/", "//evil.example/", "///evil.example//",
			"/\\/evil.example/", "/%5Cevil.example/", "/\\\\evil.example/"} {
			req := httptest.NewRequest("GET", "/", nil)
			req.URL.Path, req.URL.RawPath = path, ""
			rec := httptest.NewRecorder()
			site.ServeHTTP(rec, req)
			loc := rec.Header().Get("Location")
			if rec.Code != http.StatusMovedPermanently {
				t.Errorf("GET %q: %d, want 301", path, rec.Code)
				continue
			}
			if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.ContainsAny(loc, "\\\t\r\n") {
				t.Errorf("GET %q redirects to %q", path, loc)
			}
		}
	}
	res := ts.do(t, "GET", "/apps/demo/?tab=1", nil, nil)
	if res.Status != http.StatusMovedPermanently || res.Header.Get("Location") != "/apps/demo?tab=1" {
		t.Errorf("a plain trailing slash: %d %q", res.Status, res.Header.Get("Location"))
	}
}
