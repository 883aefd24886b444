package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the writes that reach the sockets it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{TCPConn: c.(*net.TCPConn), writes: l.writes}, nil
}

// countingConn keeps the TCP connection's ReadFrom (sendfile) visible.
type countingConn struct {
	*net.TCPConn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.TCPConn.Write(p)
}

// An answer that asks for it leaves in one write, however net/http
// buffers it, on every request of a kept-alive connection; answers that do
// not ask stream as before (a flush reaches the client while the handler
// still runs), files keep sendfile, and a connection closed after a held
// answer sends it first.
func TestAnswersInOnePiece(t *testing.T) {
	t.Parallel()
	body := bytes.Repeat([]byte("0123456789abcdef"), 20<<10/16) // 20 KB: five of net/http's buffers
	file := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	firstRead := make(chan struct{})
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		for i := 0; i < len(body); i += 5000 {
			_, _ = w.Write(body[i:min(i+5000, len(body))])
		}
	}
	mux.HandleFunc("/whole", func(w http.ResponseWriter, r *http.Request) {
		sendInOnePiece(r)
		write(w)
	})
	mux.HandleFunc("/streamed", func(w http.ResponseWriter, r *http.Request) { write(w) })
	mux.HandleFunc("/flushed", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first|")
		http.NewResponseController(w).Flush()
		select {
		case <-firstRead:
		case <-time.After(30 * time.Second):
			return // the test reports it
		}
		_, _ = io.WriteString(w, "rest")
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, file) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go Serve(srv, countingListener{Listener: ln, writes: &writes})
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	get := func(path string, closeAfter bool) ([]byte, int64) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Close = closeAfter
		writes.Store(0)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return b, writes.Load()
	}

	for i := 0; i < 3; i++ {
		got, n := get("/whole", false)
		if !bytes.Equal(got, body) {
			t.Fatalf("held answer %d: %d bytes, want %d", i, len(got), len(body))
		}
		if n != 1 {
			t.Errorf("held answer %d left in %d writes, want 1", i, n)
		}
	}
	if got, n := get("/streamed", false); !bytes.Equal(got, body) || n < 2 {
		t.Errorf("an answer that did not ask: %d bytes in %d writes, want %d bytes in several", len(got), n, len(body))
	}
	if got, _ := get("/file", false); !bytes.Equal(got, body) {
		t.Errorf("file: %d bytes, want %d", len(got), len(body))
	}
	if got, n := get("/whole", true); !bytes.Equal(got, body) || n != 1 {
		t.Errorf("held answer on a closing connection: %d bytes in %d writes", len(got), n)
	}

	// A flush while the handler runs reaches the client before it ends.
	res, err := client.Get(base + "/flushed")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := make([]byte, len("first|"))
	if _, err := io.ReadFull(res.Body, first); err != nil || string(first) != "first|" {
		t.Fatalf("flushed part: %q %v", first, err)
	}
	close(firstRead)
	rest, err := io.ReadAll(res.Body)
	if err != nil || !strings.HasSuffix(string(rest), "rest") {
		t.Fatalf("after the flush: %q %v", rest, err)
	}
}
