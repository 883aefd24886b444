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

// recordingWriter keeps each Write apart; gate, when set, holds writes
// until it is closed.
type recordingWriter struct {
	mu     sync.Mutex
	writes []string
	gate   chan struct{}
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.gate != nil {
		<-w.gate
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *recordingWriter) read() (writes int, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes), strings.Join(w.writes, "")
}

func newLogOutputServer(t *testing.T, w *recordingWriter, flush string) (*LogOutput, *slog.Logger, *Server) {
	t.Helper()
	env := func(k string) string { return map[string]string{"LOG_FLUSH": flush}[k] }
	out, err := NewLogOutput(w, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	logger, err := NewLogger(out, env)
	if err != nil {
		t.Fatal(err)
	}
	return out, logger, &Server{logger: logger}
}

func logAccess(s *Server, path string) {
	s.accessLog(context.Background(), slog.LevelInfo, answeredRequest{site: "main", id: "0123456789abcdef",
		method: "GET", route: "/apps/:name", path: path, status: 200, size: 10, client: "127.0.0.1",
		start: time.Now()}, time.Millisecond)
}

// Access lines wait to be written together; any other line is written at
// once, after them; 200 goroutines' lines come out whole, in a few writes;
// Close writes the rest, and lines after it are written as they are made.
func TestLogOutputGathersAccessLines(t *testing.T) {
	t.Parallel()
	w := &recordingWriter{}
	out, logger, s := newLogOutputServer(t, w, "1m")
	for i := 0; i < 100; i++ {
		logAccess(s, fmt.Sprintf("/apps/first%d", i))
	}
	if n, _ := w.read(); n != 0 {
		t.Fatalf("%d writes for 100 access lines before any flush, want 0", n)
	}
	logger.Warn("disk nearly full")
	n, text := w.read()
	if n != 2 {
		t.Fatalf("%d writes after a warning, want 2 (the access lines, then the warning)", n)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 101 || !strings.Contains(lines[0], "path=/apps/first0 ") ||
		!strings.Contains(lines[99], "path=/apps/first99 ") || !strings.Contains(lines[100], "msg=\"disk nearly full\"") {
		t.Fatalf("lines out of order: first %q, last %q (%d lines)", lines[0], lines[len(lines)-1], len(lines))
	}

	// A path slog quotes goes through slog's handler: at once, in order.
	logAccess(s, "/apps/second")
	logAccess(s, "/apps/a b")
	if _, text = w.read(); !strings.HasSuffix(text, `path="/apps/a b" status=200 duration_ms=1 bytes=10 client=127.0.0.1 request_id=0123456789abcdef`+"\n") ||
		!strings.Contains(text, "path=/apps/second ") {
		t.Fatalf("the quoted line did not follow the gathered one:\n%s", text[len(text)-400:])
	}

	before, _ := w.read()
	var wg sync.WaitGroup
	for g := 0; g < 200; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				logAccess(s, fmt.Sprintf("/apps/g%d-%d", g, i))
			}
		}()
	}
	wg.Wait()
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	after, text := w.read()
	if writes := after - before; writes > 100 {
		t.Errorf("%d writes for 10,000 access lines, want them gathered (about 64 KB a write)", writes)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !strings.Contains(l, "path=/apps/g") {
			continue
		}
		path := l[strings.Index(l, "path=")+5 : strings.Index(l, " status=")]
		if seen[path] || !strings.HasSuffix(l, " status=200 duration_ms=1 bytes=10 client=127.0.0.1 request_id=0123456789abcdef") {
			t.Fatalf("line torn or twice: %q", l)
		}
		seen[path] = true
	}
	if len(seen) != 10000 {
		t.Fatalf("%d of 10,000 access lines written", len(seen))
	}

	logAccess(s, "/apps/closed")
	if n, text := w.read(); n != after+1 || !strings.Contains(text, "path=/apps/closed ") {
		t.Errorf("an access line after Close: %d writes (want %d), written: %v", n, after+1, strings.Contains(text, "/apps/closed"))
	}
}

// With LOG_FLUSH a short duration, a lone access line is written on its
// own within it; LOG_FLUSH=0 writes each as it is made; a wrong value
// names the setting.
func TestLogOutputFlushSetting(t *testing.T) {
	t.Parallel()
	w := &recordingWriter{}
	_, _, s := newLogOutputServer(t, w, "10ms")
	logAccess(s, "/apps/lone")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, text := w.read(); n == 1 && strings.Contains(text, "path=/apps/lone ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a lone access line was not written within LOG_FLUSH")
		}
		time.Sleep(5 * time.Millisecond)
	}

	each := &recordingWriter{}
	_, _, s = newLogOutputServer(t, each, "0")
	for i := 0; i < 3; i++ {
		logAccess(s, "/apps/each")
		if n, _ := each.read(); n != i+1 {
			t.Fatalf("LOG_FLUSH=0: %d writes after %d lines", n, i+1)
		}
	}

	for _, v := range []string{"-1s", "2m", "soon", "5"} {
		_, err := NewLogOutput(&bytes.Buffer{}, func(k string) string { return map[string]string{"LOG_FLUSH": v}[k] })
		if err == nil || !strings.Contains(err.Error(), "LOG_FLUSH") {
			t.Errorf("LOG_FLUSH=%s: %v", v, err)
		}
	}
}

// While the output is blocked (a full pipe), gathered lines stop at their
// bound and requests wait; none is lost once it drains.
func TestLogOutputBoundedWhileBlocked(t *testing.T) {
	t.Parallel()
	w := &recordingWriter{gate: make(chan struct{})}
	out, _, s := newLogOutputServer(t, w, "1m")
	const lines = 10000 // about 1.3 MB: several times the bound
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; i < lines; i++ {
			logAccess(s, fmt.Sprintf("/apps/blocked%d", i))
		}
	}()
	// The first batch is taken and its write blocks; the next fills to
	// the bound and stays there.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out.mu.Lock()
		gathered := len(out.gathered)
		out.mu.Unlock()
		if gathered > logMaxGathered+200 {
			t.Fatalf("%d bytes gathered, bound %d", gathered, logMaxGathered)
		}
		if gathered >= logMaxGathered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gathered lines never reached the bound (%d bytes)", gathered)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-finished:
		t.Fatal("every line was taken while the output was blocked")
	default:
	}
	close(w.gate)
	<-finished
	_ = out.Close()
	_, text := w.read()
	if got := strings.Count(text, "path=/apps/blocked"); got != lines {
		t.Fatalf("%d of %d lines written", got, lines)
	}
}
