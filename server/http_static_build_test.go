package server

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"

	"marquee/render"
)

// The build output (islands runtime, chunks, stylesheet) is sent in brotli
// or gzip compressed once at the best level, byte for byte the file once
// decoded, with its type, a year's cache, Vary and a per-encoding ETag; the
// level-1 gzip every other response gets made the runtime 80 KB instead of
// about 62 KB on a phone's link (Lighthouse, issue 27).
func TestStaticBuildPrecompressed(t *testing.T) {
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	ts := newTestServer(t, demoDB(t))
	m := ts.renderer.Manifest()
	for _, file := range []struct{ url, disk, ctype string }{
		{m.Runtime, filepath.Join("public", strings.TrimPrefix(m.Runtime, "/static/")), "text/javascript"},
		{"/static/build/" + filepath.Base(m.CSS), m.CSS, "text/css"},
	} {
		want, err := os.ReadFile(filepath.Join(root, file.disk))
		if err != nil {
			t.Fatal(err)
		}
		level1 := gzipBytes(want, gzip.BestSpeed)
		etags := map[string]bool{}
		for _, tc := range []struct{ accept, enc string }{{"gzip, deflate, br, zstd", "br"}, {"gzip", "gzip"}, {"", ""}, {"br;q=0, gzip", "gzip"}} {
			r := ts.do(t, "GET", file.url, nil, map[string]string{"Accept-Encoding": tc.accept})
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s (%q): %d", file.url, tc.accept, r.Status)
			}
			if got := r.Header.Get("Content-Encoding"); got != tc.enc {
				t.Fatalf("GET %s (%q): Content-Encoding %q, want %q", file.url, tc.accept, got, tc.enc)
			}
			var body []byte
			switch tc.enc {
			case "br":
				body, err = io.ReadAll(brotli.NewReader(strings.NewReader(r.Body)))
			case "gzip":
				var zr *gzip.Reader
				if zr, err = gzip.NewReader(strings.NewReader(r.Body)); err == nil {
					body, err = io.ReadAll(zr)
				}
			default:
				body = []byte(r.Body)
			}
			if err != nil || !bytes.Equal(body, want) {
				t.Fatalf("GET %s (%q): decoded body differs from the file (%v)", file.url, tc.accept, err)
			}
			if tc.enc != "" && len(r.Body) >= len(level1) {
				t.Errorf("GET %s (%s): %d bytes, no smaller than per-request gzip level 1 (%d)", file.url, tc.enc, len(r.Body), len(level1))
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, file.ctype) {
				t.Errorf("GET %s: Content-Type %q", file.url, ct)
			}
			if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
				t.Errorf("GET %s: Cache-Control %q", file.url, cc)
			}
			if v := r.Header.Get("Vary"); !strings.Contains(v, "Accept-Encoding") {
				t.Errorf("GET %s: Vary %q", file.url, v)
			}
			etag := r.Header.Get("ETag")
			if etag == "" {
				t.Fatalf("GET %s: no ETag", file.url)
			}
			etags[etag] = true
			again := ts.do(t, "GET", file.url, nil, map[string]string{"Accept-Encoding": tc.accept, "If-None-Match": etag})
			if again.Status != http.StatusNotModified || again.Body != "" {
				t.Errorf("GET %s with its ETag: %d, %d bytes", file.url, again.Status, len(again.Body))
			}
		}
		if len(etags) != 3 {
			t.Errorf("%s: ETags %v, want one per encoding", file.url, etags)
		}
	}
	if r := ts.do(t, "GET", "/static/build/missing-XXXX.js", nil, nil); r.Status != http.StatusNotFound {
		t.Errorf("missing build file: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/static/build/../../go.mod", nil, nil); r.Status == http.StatusOK && strings.Contains(r.Body, "module marquee") {
		t.Error("a path outside public/build was served")
	}
}
