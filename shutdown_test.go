package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"marquee/store/storetest"
)

// TestShutdownUnderLoad builds the binary, serves the demo on PostgreSQL,
// and sends SIGTERM while clients keep opening new connections. Like a load
// balancer, the clients poll /healthz and stop sending when it answers 503.
// Every request must succeed: no connection reset, refused or cut, and the
// process exits cleanly.
func TestShutdownUnderLoad(t *testing.T) {
	if _, err := os.Stat("public/build/manifest.json"); err != nil {
		t.Fatalf("run `make build` first: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "marquee")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dbURL := storetest.URL(storetest.Postgres(t))
	port, authPort := freePort(t), freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "REDIS_URL=", "S3_ENDPOINT=", "MEDIA_DIR="+t.TempDir(),
		fmt.Sprintf("PORT=%d", port), fmt.Sprintf("AUTH_PORT=%d", authPort), "PUBLIC_URL="+base, "SHUTDOWN_DELAY=1s")
	seed := exec.Command(bin, "seed-demo")
	seed.Env = env
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("seed-demo: %v\n%s", err, out)
	}
	serve := exec.Command(bin, "serve")
	serve.Env = env
	var logs strings.Builder
	serve.Stderr = &syncWriter{w: &logs}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	t.Cleanup(func() { _ = serve.Process.Kill() })

	// A fresh connection per request: the connections a shutdown can hurt.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	waitUntil(t, func() bool {
		res, err := client.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})

	var stop atomic.Bool
	var sawUnhealthy atomic.Bool
	go func() { // the load balancer's health check
		for !stop.Load() {
			res, err := client.Get(base + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable {
					sawUnhealthy.Store(true)
					stop.Store(true)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var ok, resets atomic.Int64
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				res, err := client.Get(base + "/apps/demo")
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if err == nil && res.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
				}
				if err != nil {
					if errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "connection reset") {
						resets.Add(1)
					}
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					time.Sleep(10 * time.Millisecond)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	time.Sleep(800 * time.Millisecond)
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Should the health check never turn 503, the clients give up after a
	// while (and the failures they met are the finding).
	time.AfterFunc(5*time.Second, func() { stop.Store(true) })
	wg.Wait()

	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM\n%s", logs.String())
	}
	t.Logf("%d requests served, %d resets, %d failures", ok.Load(), resets.Load(), len(failures))
	if !sawUnhealthy.Load() {
		t.Error("/healthz never answered 503 before the server went away")
	}
	if resets.Load() != 0 || len(failures) != 0 {
		t.Errorf("%d connection resets, failures: %v", resets.Load(), failures)
	}
	if ok.Load() < 10 {
		t.Errorf("only %d requests served: not much of a load", ok.Load())
	}
	// After the drain the listener is closed: new connections are refused.
	if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		conn.Close()
		t.Error("still accepting connections after exit")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("server did not become healthy")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
