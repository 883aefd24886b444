// Command hog runs a command beside the neighbours a shared machine has:
// busy cores and a PostgreSQL whose connections other programs hold. It is
// how `make test` is proved to pass "anywhere" (issue 39 item 1):
//
//	go run ./scripts/hog -cpu 2 -- make test          # beside a CPU hog
//	go run ./scripts/hog -pg-conns 60 -- make test    # 60 of PostgreSQL's connections held
//
// It exits with the command's status and prints, when the command ends, how
// long it took and the machine's load average over the run (sampled every
// 10 s), so a slow run is told from a busy one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	cpus := flag.Int("cpu", 0, "goroutines that spin on a core each for the whole run")
	conns := flag.Int("pg-conns", 0, "PostgreSQL connections to open and hold for the whole run")
	dsn := flag.String("pg", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL to hold connections of")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: hog [-cpu N] [-pg-conns N] -- command [args...]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	held, err := holdConnections(ctx, *dsn, *conns)
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		for _, c := range held {
			_ = c.Close(context.Background())
		}
	}()
	spin := make(chan struct{})
	var spinning sync.WaitGroup
	for range *cpus {
		spinning.Go(func() { spinUntil(spin) })
	}
	loads := sampleLoad(ctx, 10*time.Second)

	fmt.Fprintf(os.Stderr, "hog: %d spinning goroutines, %d PostgreSQL connections held; running %s\n",
		*cpus, len(held), strings.Join(flag.Args(), " "))
	start := time.Now()
	cmd := exec.CommandContext(ctx, flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	runErr := cmd.Run()
	took := time.Since(start)
	close(spin)
	spinning.Wait()

	avg, peak := loads()
	fmt.Fprintf(os.Stderr, "hog: the command took %s; load average over the run %.1f (peak %.1f), with %d spinning and %d connections held\n",
		took.Round(time.Second), avg, peak, *cpus, len(held))
	var exit *exec.ExitError
	switch {
	case errors.As(runErr, &exit):
		os.Exit(exit.ExitCode())
	case runErr != nil:
		log.Fatal(runErr)
	}
}

// holdConnections opens n connections and keeps them idle, as another
// program's pool would. It fails if the server refuses one: the run would
// not be what it claims.
func holdConnections(ctx context.Context, dsn string, n int) ([]*pgx.Conn, error) {
	held := make([]*pgx.Conn, 0, n)
	for i := range n {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			for _, c := range held {
				_ = c.Close(ctx)
			}
			return nil, fmt.Errorf("hold connection %d of %d: %w", i+1, n, err)
		}
		held = append(held, c)
	}
	return held, nil
}

// spinUntil keeps one core busy until stop closes and answers what it
// computed, so the work is not optimised away.
func spinUntil(stop <-chan struct{}) (x int) {
	runtime.LockOSThread()
	for {
		select {
		case <-stop:
			return x
		default:
		}
		for i := range 1 << 16 {
			x = x*31 + i
		}
	}
}

// sampleLoad reads the one-minute load average every interval until the
// returned function is called, which answers the mean and the peak.
func sampleLoad(ctx context.Context, every time.Duration) func() (avg, peak float64) {
	var mu sync.Mutex
	var samples []float64
	read := func() {
		if l, ok := loadAverage(); ok {
			mu.Lock()
			samples = append(samples, l)
			mu.Unlock()
		}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() (float64, float64) {
		close(done)
		read()
		mu.Lock()
		defer mu.Unlock()
		var sum, peak float64
		for _, s := range samples {
			sum += s
			peak = max(peak, s)
		}
		if len(samples) == 0 {
			return 0, 0
		}
		return sum / float64(len(samples)), peak
	}
}

func loadAverage() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	l, err := strconv.ParseFloat(f[0], 64)
	return l, err == nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
