// Package testproc runs a helper server for a test (stripe-mock, MinIO)
// that cannot be handed a listener, on a port of its own.
package testproc

import (
	"bytes"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Start picks a free port, starts the process command builds for that
// address and waits until ready answers true for it; it answers the address.
// The port is picked by opening and closing a listener, so another process
// may take it before the helper binds it: a start that loses its port
// (the process exits saying "address already in use") is retried on a new
// one. The process is killed when the test ends; its output is shown when it
// does not start.
func Start(t testing.TB, name string, command func(addr string) *exec.Cmd, ready func(addr string) bool) string {
	t.Helper()
	var logs Buffer
	for attempt := 1; ; attempt++ {
		addr, exited := startOnce(t, name, command, ready, &logs)
		if addr != "" {
			return addr
		}
		if !exited || !strings.Contains(logs.String(), "address already in use") || attempt == 5 {
			t.Fatalf("%s did not start: %s", name, logs.String())
		}
		logs.Reset()
	}
}

func startOnce(t testing.TB, name string, command func(string) *exec.Cmd, ready func(string) bool, logs *Buffer) (addr string, exited bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	cmd := command(addr)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-done:
			return "", true
		default:
		}
		if ready(addr) {
			return addr, false
		}
		if time.Now().After(deadline) {
			return "", false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Buffer collects a process's output while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Reset empties the buffer.
func (s *Buffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
