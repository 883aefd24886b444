package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// The access line appended by hand is the line slog writes, byte for byte,
// in both formats; a value slog would quote or escape is left to slog.
func TestAccessLineAsSlogWritesIt(t *testing.T) {
	t.Parallel()
	base := answeredRequest{site: "main", id: "0123456789abcdef", method: "GET", route: "/apps/:name",
		path: "/apps/demo", status: 200, size: 6728, client: "127.0.0.1"}
	with := func(f func(*answeredRequest)) answeredRequest { a := base; f(&a); return a }
	plain := []answeredRequest{
		base,
		with(func(a *answeredRequest) {
			a.site, a.method, a.route, a.status, a.size = "auth", "HEAD", "unmatched", 404, 0
		}),
		with(func(a *answeredRequest) {
			a.path, a.client = "/apps/demo/store/items/7~x@y+(z)!$&'*,;:[]", "2001:db8::1"
		}),
		with(func(a *answeredRequest) { a.path = "/static/<b>%2F" }),
	}
	notPlain := []answeredRequest{
		with(func(a *answeredRequest) { a.path = "/apps/demo/a b" }),
		with(func(a *answeredRequest) { a.path = `/apps/"demo"` }),
		with(func(a *answeredRequest) { a.path = `/apps/back\slash` }),
		with(func(a *answeredRequest) { a.path = "/apps/demo?a=b" }),
		with(func(a *answeredRequest) { a.path = "/apps/café" }),
		with(func(a *answeredRequest) { a.path = "/apps/\x7f" }),
		with(func(a *answeredRequest) { a.client = "" }),
		with(func(a *answeredRequest) { a.route = "/apps/:name\n" }),
	}
	times := []time.Time{
		time.Date(2026, 11, 30, 17, 20, 5, 123456789, time.UTC),
		time.Date(2026, 11, 30, 17, 20, 5, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.FixedZone("CET", 3600)),
		time.Now(), // with a monotonic reading, as accessLog's
	}
	durations := []time.Duration{0, time.Microsecond, 50 * time.Microsecond, 123456 * time.Microsecond,
		1234567891 * time.Microsecond, 90 * time.Minute}
	for _, format := range []string{"text", "json"} {
		logger, err := NewLogger(new(bytes.Buffer), func(k string) string { return map[string]string{"LOG_FORMAT": format}[k] })
		if err != nil {
			t.Fatal(err)
		}
		oh := logger.Handler().(requestIDHandler).Handler.(outputHandler)
		for i, a := range append(plain, notPlain...) {
			for _, now := range times {
				for _, d := range durations {
					for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
						var got, want bytes.Buffer
						out := &loggerOutput{w: &lockedWriter{w: &got}, json: format == "json"}
						wrote := out.writeAccess(now, level, a, d)
						if wrote != (i < len(plain)) {
							t.Fatalf("%s %+v: appended by hand %v", format, a, wrote)
						}
						if !wrote {
							continue
						}
						var ref slog.Handler = slog.NewTextHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})
						if format == "json" {
							ref = slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})
						}
						ref = ref.WithAttrs([]slog.Attr{slog.String("site", a.site), slog.String("method", a.method), slog.String("route", a.route)})
						if err := ref.Handle(context.Background(), accessRecord(now, level, a, d)); err != nil {
							t.Fatal(err)
						}
						if got.String() != want.String() {
							t.Fatalf("%s line:\n got %q\nwant %q", format, got.String(), want.String())
						}
					}
				}
			}
		}
		if oh.out.json != (format == "json") {
			t.Errorf("%s: NewLogger's output says json=%v", format, oh.out.json)
		}
	}
}

// A server with NewLogger's logger writes its access lines whole beside
// other lines, from many goroutines, and a line that is not plain through
// slog.
func TestAccessLinesBesideOtherLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger, err := NewLogger(&buf, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{logger: logger}
	var wg sync.WaitGroup
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				path := fmt.Sprintf("/apps/app%d", g)
				if i%10 == 0 {
					path += " x" // through slog
				}
				s.accessLog(context.Background(), slog.LevelInfo, answeredRequest{site: "main", id: "0123456789abcdef",
					method: "GET", route: "/apps/:name", path: path, status: 200, size: 10, client: "127.0.0.1",
					start: time.Now()}, time.Millisecond)
				logger.Info("other", "n", i)
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2000 {
		t.Fatalf("%d lines, want 2000", len(lines))
	}
	access, quoted := 0, 0
	for _, l := range lines {
		switch {
		case strings.Contains(l, " msg=request site=main method=GET route=/apps/:name path="):
			access++
			if strings.Contains(l, ` path="/apps/app`) {
				quoted++
			}
			if !strings.HasSuffix(l, " status=200 duration_ms=1 bytes=10 client=127.0.0.1 request_id=0123456789abcdef") {
				t.Errorf("access line: %q", l)
			}
		case strings.Contains(l, " msg=other n="):
		default:
			t.Errorf("line: %q", l)
		}
	}
	if access != 1000 || quoted != 100 {
		t.Errorf("%d access lines, %d through slog; want 1000 and 100", access, quoted)
	}
}
