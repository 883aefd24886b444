// Command benchmark measures the demo landing page: median render time under
// goja and under Node for the same server bundle, and HTTP requests per
// second with the landing cache warm and cold. Run it through scripts/bench.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server"
	"marquee/server/media"
	"marquee/store"
	"marquee/store/migrations"
)

const (
	renderRuns  = 200
	httpWorkers = 16
	httpFor     = 5 * time.Second
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// missCache never hits, so every request loads the landing from the database.
type missCache struct{}

func (missCache) Get(context.Context, string) ([]byte, bool, error)        { return nil, false, nil }
func (missCache) Set(context.Context, string, []byte, time.Duration) error { return nil }
func (missCache) Delete(context.Context, ...string) error                  { return nil }

func run(ctx context.Context) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as `marquee serve` does
	}
	dir, err := os.MkdirTemp("", "marquee-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(filepath.Join(dir, "bench.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := store.Migrate(ctx, db, migrations.Migrations); err != nil {
		return err
	}
	files := &media.Local{Dir: filepath.Join(dir, "media"), BaseURL: "http://localhost:3000", Key: []byte("bench")}
	if err := seed.Demo(ctx, db, files); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine, err := render.New(render.Options{Logger: logger})
	if err != nil {
		return err
	}
	cfg, _ := server.LoadConfig(func(string) string { return "" })

	// The props the landing page is rendered with, taken from a real request.
	warmStore := store.NewStorage(db, store.NewMemoryCache(), media.Signer{Storage: files}, logger)
	view, err := warmStore.Landing(ctx, "demo")
	if err != nil {
		return err
	}
	props := server.PageProps{App: view, Path: "/apps/demo", PublicURL: cfg.PublicURL, AuthURL: cfg.AuthURL,
		Now: time.Now().UTC(), Viewer: server.ViewerProps{Role: store.RolePublic}}

	if path := os.Getenv("BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	gojaMedian, err := gojaRender(ctx, engine, props)
	if err != nil {
		return err
	}
	nodeMedian, err := nodeRender(dir, engine, props)
	if err != nil {
		return err
	}
	fmt.Printf("landing render, median of %d: goja %.2f ms, node %.3f ms, goja/node %.0fx\n",
		renderRuns, gojaMedian, nodeMedian, gojaMedian/nodeMedian)

	for _, c := range []struct {
		name  string
		cache store.Cache
	}{{"warm", store.NewMemoryCache()}, {"cold", missCache{}}} {
		st := store.NewStorage(db, c.cache, media.Signer{Storage: files}, logger)
		st.Build = engine.BuildID()
		srv := server.New(server.Deps{Config: cfg, Store: st, Renderer: engine, Files: files, Logger: logger})
		rps, err := httpLoad(srv.Main())
		if err != nil {
			return err
		}
		fmt.Printf("GET /apps/demo over HTTP, %d connections, cache %s: %.0f requests/s\n", httpWorkers, c.name, rps)
	}
	return nil
}

func gojaRender(ctx context.Context, engine *render.Engine, props server.PageProps) (float64, error) {
	times := make([]float64, 0, renderRuns)
	for i := 0; i < renderRuns+20; i++ {
		start := time.Now()
		if _, err := engine.Render(ctx, "Landing", props); err != nil {
			return 0, err
		}
		if i >= 20 { // the first renders warm the pool
			times = append(times, float64(time.Since(start).Microseconds())/1000)
		}
	}
	return median(times), nil
}

func nodeRender(dir string, engine *render.Engine, props server.PageProps) (float64, error) {
	b, err := json.Marshal(props)
	if err != nil {
		return 0, err
	}
	propsFile := filepath.Join(dir, "props.json")
	if err := os.WriteFile(propsFile, b, 0o644); err != nil {
		return 0, err
	}
	root, err := render.ProjectRoot()
	if err != nil {
		return 0, err
	}
	out, err := exec.Command("node", filepath.Join(root, "scripts/benchmark/node-render.mjs"),
		filepath.Join(root, engine.Manifest().Server), propsFile, "Landing", fmt.Sprint(renderRuns)).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("node render: %v: %s", err, out)
	}
	var ms float64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "%g", &ms); err != nil {
		return 0, fmt.Errorf("node output %q: %w", out, err)
	}
	return ms, nil
}

// httpLoad drives the handler over real loopback HTTP for a fixed time.
func httpLoad(h http.Handler) (float64, error) {
	ts := httptest.NewServer(h)
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: httpWorkers}}
	var count atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(httpFor)
	var wg sync.WaitGroup
	for w := 0; w < httpWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				res, err := client.Get(ts.URL + "/apps/demo")
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					firstErr.CompareAndSwap(nil, fmt.Errorf("status %d", res.StatusCode))
					return
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return 0, err
	}
	return float64(count.Load()) / httpFor.Seconds(), nil
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}
