package paymentstest

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartStripeMock runs stripe-mock (Stripe's own API double, which checks
// every request against Stripe's OpenAPI spec but keeps no state) on a free
// port for the test and answers its base URL. A missing binary fails the
// test: `go install github.com/stripe/stripe-mock@latest` (scripts/services.sh
// does it).
func StartStripeMock(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("stripe-mock")
	if err != nil {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, "go", "bin", "stripe-mock")
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("stripe-mock binary not found on PATH or in ~/go/bin (go install github.com/stripe/stripe-mock@latest)")
		}
	}
	// stripe-mock cannot be handed a listener, so its port is picked by
	// opening and closing one; another process may take it in between. A
	// start that loses the port is retried on a new one.
	var logs safeBuffer
	for attempt := 1; ; attempt++ {
		base, exited := startStripeMockOnce(t, bin, &logs)
		if base != "" {
			return base
		}
		if !exited || !strings.Contains(logs.String(), "address already in use") || attempt == 5 {
			t.Fatalf("stripe-mock did not start: %s", logs.String())
		}
		logs.Reset()
	}
}

// startStripeMockOnce starts stripe-mock on a free port and waits until it
// answers (its URL) or exits (exited true).
func startStripeMockOnce(t testing.TB, bin string, logs *safeBuffer) (base string, exited bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-http-addr", addr)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	base = "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			return "", true
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/balance", nil)
		req.Header.Set("Authorization", "Bearer sk_test_123")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return base, false
			}
		}
		if time.Now().After(deadline) {
			return "", false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// safeBuffer collects a process's output while the test reads it.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *safeBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
