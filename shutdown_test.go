package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
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
	t.Parallel()
	bin := testBinary(t)
	// One serve process: DB_MAX_CONNS 3 and its job queue's 2.
	dbURL := storetest.URL(storetest.PostgresConns(t, 6))
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "DB_MAX_CONNS=3", "REDIS_URL=", "S3_ENDPOINT=", "MEDIA_DIR="+t.TempDir(),
		"PORT=0", "AUTH_PORT=0", "PUBLIC_URL=", "AUTH_URL=", "SHUTDOWN_DELAY=2s")
	seed := exec.Command(bin, "seed-demo")
	seed.Env = env
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("seed-demo: %v\n%s", err, out)
	}
	serve := exec.Command(bin, "serve")
	serve.Env = env
	logs := &syncWriter{w: &strings.Builder{}}
	addr, exited := startServe(t, serve, logs)
	base := "http://" + addr

	// A fresh connection per request: the connections a shutdown can hurt.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

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
	// Under load first, however slow the machine: then the signal.
	waitFor(t, "10 requests served before SIGTERM", func() bool { return ok.Load() >= 10 })
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Should the health check never turn 503, the clients give up after a
	// while (and the failures they met are the finding).
	time.AfterFunc(30*time.Second, func() { stop.Store(true) })
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
	// After the drain the listener is closed: new connections are refused.
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Error("still accepting connections after exit")
	}
}

// startServe starts cmd, copies its log to logs, and waits for the line
// that says which port it bound (PORT=0): no port is guessed, so none can be
// taken by another test in between. The log is printed if the test fails.
func startServe(t *testing.T, cmd *exec.Cmd, logs *syncWriter) (addr string, exited chan error) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("server log:\n%s", logs)
		}
	})
	bound := make(chan string, 1)
	exited = make(chan error, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			line := lines.Text()
			fmt.Fprintln(logs, line)
			if m := servingLine.FindStringSubmatch(line); m != nil {
				bound <- "127.0.0.1:" + m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case addr = <-bound:
		return addr, exited
	case err := <-exited:
		t.Fatalf("serve exited before serving: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not report its address")
	}
	return "", nil
}

var servingLine = regexp.MustCompile(`msg=serving .*main_addr=\S*:(\d+)`)

// waitFor polls cond until it holds; the deadline only guards against a
// hang, it is not a speed target.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
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

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.w)
}

// TestShutdownKeepsKeptAliveRequests: clients on kept-alive connections
// send continuously while SIGTERM arrives, and go on for a while after
// /healthz turned 503 (a load balancer notices late). No request may meet
// a closed or reset connection: each connection ends after an answer
// ("Connection: close"), never under a request. The clients speak HTTP/1.1
// on raw sockets because Go's client silently retries a GET that met a
// closed idle connection, which would hide the fault.
func TestShutdownKeepsKeptAliveRequests(t *testing.T) {
	t.Parallel()
	bin := testBinary(t)
	// One serve process: DB_MAX_CONNS 3 and its job queue's 2.
	dbURL := storetest.URL(storetest.PostgresConns(t, 6))
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "DB_MAX_CONNS=3", "REDIS_URL=", "S3_ENDPOINT=", "MEDIA_DIR="+t.TempDir(),
		"PORT=0", "AUTH_PORT=0", "PUBLIC_URL=", "AUTH_URL=", "SHUTDOWN_DELAY=2s")
	seed := exec.Command(bin, "seed-demo")
	seed.Env = env
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("seed-demo: %v\n%s", err, out)
	}
	serve := exec.Command(bin, "serve")
	serve.Env = env
	logs := &syncWriter{w: &strings.Builder{}}
	addr, exited := startServe(t, serve, logs)

	var stop, sawUnhealthy atomic.Bool
	go func() { // the load balancer's health check, which stops traffic 300 ms late
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		for !stop.Load() {
			res, err := client.Get("http://" + addr + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable && !sawUnhealthy.Swap(true) {
					time.AfterFunc(300*time.Millisecond, func() { stop.Store(true) })
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var ok, afterSignal, closes atomic.Int64
	var signalled atomic.Bool
	var mu sync.Mutex
	var failures []string
	fail := func(err error) {
		mu.Lock()
		failures = append(failures, err.Error())
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := 0; w < 12; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var conn net.Conn
			var br *bufio.Reader
			defer func() {
				if conn != nil {
					conn.Close()
				}
			}()
			for !stop.Load() {
				if conn == nil {
					c, err := net.DialTimeout("tcp", addr, 10*time.Second)
					if err != nil {
						fail(fmt.Errorf("dial: %w", err))
						return
					}
					conn, br = c, bufio.NewReader(c)
				}
				_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := io.WriteString(conn, "GET /apps/demo HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
					fail(fmt.Errorf("write: %w", err))
					return
				}
				res, err := http.ReadResponse(br, nil)
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				if err != nil {
					fail(fmt.Errorf("read: %w", err))
					return
				}
				if res.StatusCode != http.StatusOK {
					fail(fmt.Errorf("status %d", res.StatusCode))
				}
				ok.Add(1)
				if signalled.Load() {
					afterSignal.Add(1)
				}
				if res.Close {
					closes.Add(1)
					conn.Close()
					conn = nil
				}
			}
		}()
	}
	waitFor(t, "10 requests served before SIGTERM", func() bool { return ok.Load() >= 10 })
	signalled.Store(true)
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(30*time.Second, func() { stop.Store(true) })
	wg.Wait()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
	t.Logf("%d requests served, %d after SIGTERM, %d connections closed by an answer, failures: %v",
		ok.Load(), afterSignal.Load(), closes.Load(), failures)
	if !sawUnhealthy.Load() {
		t.Error("/healthz never answered 503")
	}
	if len(failures) != 0 {
		t.Errorf("%d failures on kept-alive connections: %v", len(failures), failures)
	}
	if afterSignal.Load() == 0 || closes.Load() == 0 {
		t.Errorf("no request was sent during the drain (%d) or no answer closed its connection (%d): the test proved nothing",
			afterSignal.Load(), closes.Load())
	}
}
