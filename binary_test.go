package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"marquee/store/storetest"
)

// The tests that run the real binary share one build: linking it is the
// costliest step of each such test, and they all need the same program.
var (
	binaryOnce sync.Once
	binaryDir  string
	binaryPath string
	binaryErr  error
)

func TestMain(m *testing.M) {
	// The suite beside a CPU hog (load 35 on two cores) once took more than
	// the production 3 s to open a PostgreSQL connection: what this package
	// runs (commands, assembled apps, the servers it starts) waits longer.
	// A refused connection still fails at once.
	if os.Getenv("DB_CONNECT_TIMEOUT") == "" {
		os.Setenv("DB_CONNECT_TIMEOUT", "60s")
	}
	code := storetest.Main(m)
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// testBinary builds marquee once per test process and answers its path.
func testBinary(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("public/build/manifest.json"); err != nil {
		t.Fatalf("run `make build` first: %v", err)
	}
	binaryOnce.Do(func() {
		binaryDir, binaryErr = os.MkdirTemp("", "marquee-test-bin-")
		if binaryErr != nil {
			return
		}
		binaryPath = filepath.Join(binaryDir, "marquee")
		if out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatalf("build: %v", binaryErr)
	}
	return binaryPath
}
