package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
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
			req := newRequest("GET", "/", nil)
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
	res := ts.do(t, "GET", "/apps/demo/events/?tab=1", nil, nil)
	if res.Status != http.StatusMovedPermanently || res.Header.Get("Location") != "/apps/demo/events?tab=1" {
		t.Errorf("a plain trailing slash: %d %q", res.Status, res.Header.Get("Location"))
	}
}

// TestTrailingSlashRedirectOverTheWire sends the request lines a browser or
// an attacker's link would, over a real connection to both sites (Go's
// request parsing, not a hand-built URL): no answer may carry a Location a
// browser reads as another site.
func TestTrailingSlashRedirectOverTheWire(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	for _, site := range []http.Handler{ts.Main(), ts.Auth()} {
		srv := httptest.NewServer(site)
		for _, target := range []string{"/\\evil.example/", "/%09evil.example/", "/%09/evil.example/", "//evil.example/",
			"/\\/evil.example/", "/%5Cevil.example/", "/%5C%5Cevil.example/", "/%2F%2Fevil.example/", "/.%2F/evil.example/"} {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: main.test\r\nConnection: close\r\n\r\n", target)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("GET %s: %v", target, err)
			}
			res.Body.Close()
			conn.Close()
			loc := res.Header.Get("Location")
			if loc == "" {
				continue // not a redirect (400 or 404): nothing to follow
			}
			u, err := url.Parse(loc)
			if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") ||
				strings.ContainsAny(loc, "\\\t\r\n") {
				t.Errorf("GET %s: %d Location %q", target, res.StatusCode, loc)
			}
		}
		srv.Close()
	}
}
