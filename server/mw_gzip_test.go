package server

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
)

func gzipTestServer(t *testing.T, h echo.HandlerFunc) *httptest.Server {
	t.Helper()
	e := echo.New()
	e.Use(compress(func(c echo.Context) bool { return c.Request().URL.Path == "/skip" }))
	e.GET("/*", h)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

func getWithEncoding(t *testing.T, url, enc string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if enc != "" {
		req.Header.Set("Accept-Encoding", enc)
	}
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// A JSON answer, and one made of many small writes, reach a gzip client
// compressed and decode to the very bytes the handler wrote; a client that
// does not ask for gzip, and a skipped path, get them as they are.
func TestGzipCompressesWhatTheClientAccepts(t *testing.T) {
	t.Parallel()
	var items []map[string]any
	for i := 0; i < 300; i++ {
		items = append(items, map[string]any{"id": fmt.Sprintf("post-%d", i), "content": "Hello from the lighthouse keeper", "likes": i})
	}
	var small strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&small, "<li>row %d of the list</li>", i)
	}
	srv := gzipTestServer(t, func(c echo.Context) error {
		if c.Request().URL.Path == "/small" {
			c.Response().Header().Set(echo.HeaderContentType, "text/html; charset=utf-8")
			c.Response().WriteHeader(http.StatusCreated)
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(c.Response(), "<li>row %d of the list</li>", i)
			}
			return nil
		}
		return c.JSON(http.StatusOK, map[string]any{"data": items})
	})
	plain, _ := getWithEncoding(t, srv.URL+"/json", "")
	_, want := getWithEncoding(t, srv.URL+"/skip", "gzip")
	if plain.Header.Get("Content-Encoding") != "" {
		t.Fatalf("identity client got Content-Encoding %q", plain.Header.Get("Content-Encoding"))
	}
	for _, c := range []struct {
		path string
		want []byte
		code int
	}{{"/json", want, http.StatusOK}, {"/small", []byte(small.String()), http.StatusCreated}} {
		res, body := getWithEncoding(t, srv.URL+c.path, "gzip, br")
		if res.StatusCode != c.code || res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("%s: status %d, Content-Encoding %q, Vary %q", c.path, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if !bytes.Equal(got, c.want) {
			t.Fatalf("%s: decoded %d bytes, want the handler's %d", c.path, len(got), len(c.want))
		}
		// Small writes are buffered into blocks, so they still compress.
		if len(body)*3 > len(c.want) {
			t.Fatalf("%s: %d bytes compressed to %d, want under a third", c.path, len(c.want), len(body))
		}
	}
}

// An answer without a body keeps its status and gets no Content-Encoding;
// bytes the handler encoded itself pass through untouched.
func TestGzipLeavesBodilessAndEncodedAnswersAlone(t *testing.T) {
	t.Parallel()
	pre := []byte("already-compressed-bytes")
	srv := gzipTestServer(t, func(c echo.Context) error {
		switch c.Request().URL.Path {
		case "/304":
			return c.NoContent(http.StatusNotModified)
		case "/redirect":
			return c.Redirect(http.StatusFound, "/elsewhere")
		}
		c.Response().Header().Set(echo.HeaderContentEncoding, "br")
		return c.Blob(http.StatusOK, "text/html", pre)
	})
	for _, path := range []string{"/304", "/redirect"} {
		res, body := getWithEncoding(t, srv.URL+path, "gzip")
		if res.Header.Get("Content-Encoding") != "" || len(body) != 0 {
			t.Fatalf("%s: Content-Encoding %q, %d body bytes", path, res.Header.Get("Content-Encoding"), len(body))
		}
		if want := map[string]int{"/304": 304, "/redirect": 302}[path]; res.StatusCode != want {
			t.Fatalf("%s: status %d, want %d", path, res.StatusCode, want)
		}
	}
	res, body := getWithEncoding(t, srv.URL+"/br", "gzip, br")
	if res.Header.Get("Content-Encoding") != "br" || !bytes.Equal(body, pre) {
		t.Fatalf("precompressed: Content-Encoding %q, body %q", res.Header.Get("Content-Encoding"), body)
	}
}

// The reason for gzip.go: a hundred compressed answers in flight at once
// hold a few megabytes, not the 1.2 MB per writer of compress/gzip (about
// 120 MB here, most of the server's heap under the API bench).
func TestGzipWritersInFlightHoldLittleMemory(t *testing.T) {
	const inFlight = 100
	chunk := bytes.Repeat([]byte(`{"id":"abc","content":"hello lighthouse","likes":12},`), 400)
	var started sync.WaitGroup
	started.Add(inFlight)
	release := make(chan struct{})
	srv := gzipTestServer(t, func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, "application/json")
		c.Response().WriteHeader(http.StatusOK)
		_, _ = c.Response().Write(chunk)
		started.Done()
		<-release
		_, _ = c.Response().Write(chunk)
		return nil
	})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxConnsPerHost: inFlight * 2}}
	var done sync.WaitGroup
	errs := make(chan error, inFlight)
	for i := 0; i < inFlight; i++ {
		done.Add(1)
		go func() {
			defer done.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/hold", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			res, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			zr, err := gzip.NewReader(res.Body)
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(zr)
			if err == nil && len(b) != 2*len(chunk) {
				err = fmt.Errorf("decoded %d bytes, want %d", len(b), 2*len(chunk))
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	started.Wait()
	runtime.GC()
	var held runtime.MemStats
	runtime.ReadMemStats(&held)
	close(release)
	done.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	grown := int64(held.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d compressed answers in flight hold %d KB of heap", inFlight, grown/1024)
	if grown > 20<<20 {
		t.Fatalf("%d answers in flight hold %d MB of heap, want under 20 MB", inFlight, grown>>20)
	}
}
