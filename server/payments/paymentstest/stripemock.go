package paymentstest

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-http-addr", addr)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/balance", nil)
		req.Header.Set("Authorization", "Bearer sk_test_123")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock did not start: %s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
