package render

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time (every thread,
// including the garbage collector's).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRealPages renders the landing and community pages with the real
// server bundle (go run ./scripts/build) and the props the seeded demo gives
// them (render/testdata/bench, written by go run ./scripts/captureprops):
//
//	go test -run NONE -bench RealPages -cpuprofile cpu.out ./render/
func BenchmarkRealPages(b *testing.B) {
	root, err := ProjectRoot()
	if err != nil {
		b.Fatal(err)
	}
	manifest := filepath.Join(root, "public/build/manifest.json")
	if _, err := os.Stat(manifest); err != nil {
		b.Skip("no build: run go run ./scripts/build")
	}
	e, err := New(Options{ManifestPath: manifest, PoolSize: 1, Timeout: 2 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	for _, page := range []string{"Landing", "Community"} {
		raw, err := os.ReadFile(filepath.Join(root, "render/testdata/bench", page+".json"))
		if err != nil {
			b.Fatal(err)
		}
		props := json.RawMessage(raw)
		b.Run(page, func(b *testing.B) {
			// CPU time as well as wall time: on a busy machine a render
			// of tens of milliseconds is preempted many times, while a
			// sub-millisecond one (Node's) mostly is not.
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := e.Render(context.Background(), page, props); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
