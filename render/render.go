// Package render runs the React pages under goja: the server bundle is
// compiled once, a bounded pool of runtimes evaluates it, and Render turns a
// page name plus props into HTML, head tags, a status and the islands used.
package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// ErrTimeout is returned when a render runs longer than Options.Timeout.
var ErrTimeout = errors.New("render timed out")

// Options configure an Engine; zero values get sensible defaults.
type Options struct {
	ManifestPath string // default public/build/manifest.json
	PoolSize     int    // default runtime.NumCPU()
	Timeout      time.Duration
	Logger       *slog.Logger
	// Observe, when set, sees every page's props as rendered: scripts/bench
	// hands the same props to a Node server for a like-for-like comparison.
	Observe func(page string, propsJSON []byte)
}

// Manifest is public/build/manifest.json, written by scripts/build.
type Manifest struct {
	Server string `json:"server"` // file path of the server bundle
	CSS    string `json:"css"`    // file path of the stylesheet
	// CriticalCSS is the file path of the first-screen subset of CSS
	// (the critical blocks of pages/styles.css) that pages declaring
	// criticalCSS inline.
	CriticalCSS string              `json:"criticalCss,omitempty"`
	Runtime     string              `json:"runtime"` // URL of the islands boot module, which imports the runtime
	Islands     map[string]string   `json:"islands"` // island name -> URL of its module
	Chunks      map[string][]string `json:"chunks"`  // island name (or "runtime": the runtime's files) -> chunk URLs to preload
}

// Result is what one page render produced.
type Result struct {
	HTML    string   `json:"html"`
	Head    string   `json:"head"`
	Status  int      `json:"status"`
	Islands []string `json:"islands"`
	// Lazy lists the islands that hydrate on idle or visible only: they are
	// not preloaded.
	Lazy []string `json:"lazy,omitempty"`
	// Critical: the critical CSS covers the page's first screen (the page
	// says so in pages/registry.ts), so the document inlines it and links
	// the full stylesheet at the end of the body.
	Critical bool `json:"critical,omitempty"`
	// ChangesAt is when (ms since the epoch) the clock alone would change
	// what the page shows: "5m ago" turning "6m ago", an event starting
	// (pages/lib/changes.ts). 0: nothing shown depends on it.
	ChangesAt int64 `json:"changesAt,omitempty"`
	// OtherChangesAt is ChangesAt without the relative times, and Ago the
	// number of relative times the page shows (each an <Ago>): until
	// OtherChangesAt the page at a later time is this one with its
	// relative times rewritten (Restamp).
	OtherChangesAt int64 `json:"otherChangesAt,omitempty"`
	Ago            int   `json:"ago,omitempty"`
}

// Engine renders pages. It is safe for concurrent use.
type Engine struct {
	opts     Options
	manifest Manifest
	program  *goja.Program
	cssURL   string // the hashed stylesheet, served immutable under /static/build
	critical string // contents of Manifest.CriticalCSS
	buildID  string
	// runtimes schedules the renders on at most PoolSize runtimes (one per
	// core by default: goja runs on the goroutine that calls it).
	runtimes *scheduler[*goja.Runtime]
	log      *slog.Logger
}

// New reads the manifest, compiles the server bundle once and reads the CSS.
// Runtimes are created lazily, up to PoolSize.
func New(opts Options) (*Engine, error) {
	if opts.ManifestPath == "" {
		opts.ManifestPath = "public/build/manifest.json"
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = runtime.NumCPU()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	raw, err := os.ReadFile(opts.ManifestPath)
	if err != nil {
		return nil, fmt.Errorf("render: read manifest (run `go run ./scripts/build`): %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("render: parse manifest %s: %w", opts.ManifestPath, err)
	}
	// Manifest file paths are relative to the project root, which is where
	// the manifest's directory tree starts (public/build/manifest.json).
	base := manifestRoot(opts.ManifestPath)
	src, err := os.ReadFile(resolve(base, m.Server))
	if err != nil {
		return nil, fmt.Errorf("render: read server bundle: %w", err)
	}
	program, err := goja.Compile(m.Server, string(src), false)
	if err != nil {
		return nil, fmt.Errorf("render: compile server bundle: %w", err)
	}
	var critical []byte
	if m.CriticalCSS != "" {
		if critical, err = os.ReadFile(resolve(base, m.CriticalCSS)); err != nil {
			return nil, fmt.Errorf("render: read critical css: %w", err)
		}
	}
	e := &Engine{
		opts:     opts,
		manifest: m,
		program:  program,
		cssURL:   staticURL(m.CSS),
		critical: string(critical),
		// The manifest names the hashed stylesheet, so it covers the CSS.
		buildID: buildID(src, critical, raw),
		runtimes: newScheduler[*goja.Runtime](opts.PoolSize, [lanes]int{
			laneFirst: firstViewsWaiting * opts.PoolSize, laneRefresh: refreshesWaiting * opts.PoolSize}),
		log: opts.Logger,
	}
	// Create one runtime now so a bundle that fails to evaluate fails start-up
	// instead of the first request.
	rt, err := e.newRuntime()
	if err != nil {
		return nil, err
	}
	if _, mk, err := e.runtimes.acquire(context.Background(), laneFirst, ""); err != nil || !mk {
		return nil, fmt.Errorf("render: pool of %d runtimes: %v", opts.PoolSize, err)
	}
	e.runtimes.release(rt)
	return e, nil
}

// BuildID changes whenever the bundles, the CSS or the manifest change, so
// caches of rendered HTML can be keyed by it.
func (e *Engine) BuildID() string { return e.buildID }

func buildID(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// manifestRoot is the directory that manifest paths are relative to: two
// levels above public/build/manifest.json, or the manifest's own directory
// for any other layout.
func manifestRoot(manifestPath string) string {
	dir := filepath.Dir(manifestPath)
	if filepath.Base(dir) == "build" && filepath.Base(filepath.Dir(dir)) == "public" {
		return filepath.Dir(filepath.Dir(dir))
	}
	return dir
}

// staticURL maps a manifest file path under public/ to the URL the server
// serves it at: public/build/x.css -> /static/build/x.css.
func staticURL(p string) string {
	if p == "" {
		return ""
	}
	return "/static/" + strings.TrimPrefix(filepath.ToSlash(p), "public/")
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}

// Manifest returns the build manifest (for static asset routes).
func (e *Engine) Manifest() Manifest { return e.manifest }

func (e *Engine) newRuntime() (*goja.Runtime, error) {
	rt := goja.New()
	installNatives(rt)
	if _, err := rt.RunProgram(e.program); err != nil {
		return nil, fmt.Errorf("render: evaluate server bundle: %w", err)
	}
	if _, ok := goja.AssertFunction(rt.Get("marqueeRender")); !ok {
		return nil, errors.New("render: server bundle does not define marqueeRender")
	}
	return rt, nil
}

// How many renders may wait per runtime: first views (a viewer waits with
// nothing to show; past this a 503 at once beats a wait of seconds) and
// refreshes (a stale copy is served meanwhile; past this it is served a
// while longer).
const (
	firstViewsWaiting = 32
	refreshesWaiting  = 1
)

// acquire returns an idle runtime, creating one if the pool is not full, or
// waits its turn until one is released or ctx ends: first views before
// refreshes; within each, apps take turns (ForApp), each app's renders in
// order of arrival.
func (e *Engine) acquire(ctx context.Context) (*goja.Runtime, error) {
	lane := laneFirst
	if isRefresh(ctx) {
		lane = laneRefresh
	}
	rt, mk, err := e.runtimes.acquire(ctx, lane, tenantOf(ctx))
	if err != nil || !mk {
		return rt, err
	}
	if rt, err = e.newRuntime(); err != nil {
		e.runtimes.discard()
		return nil, err
	}
	return rt, nil
}

// PoolStats answers how many runtimes are rendering and how many may
// exist at most (the metrics' render pool use).
func (e *Engine) PoolStats() (inUse, size int) { return e.runtimes.stats() }

// release returns a healthy runtime to the pool.
func (e *Engine) release(rt *goja.Runtime) { e.runtimes.release(rt) }

// Timeout is how long one render may run before it is interrupted.
func (e *Engine) Timeout() time.Duration { return e.opts.Timeout }

// discard drops a runtime whose state can't be trusted (interrupted or
// panicked) and frees its slot so a fresh one is made on demand.
func (e *Engine) discard() { e.runtimes.discard() }

// Render runs page with props (marshalled with encoding/json).
func (e *Engine) Render(ctx context.Context, page string, props any) (res Result, err error) {
	propsJSON, err := json.Marshal(props)
	if err != nil {
		return Result{}, fmt.Errorf("render %s: props: %w", page, err)
	}
	if e.opts.Observe != nil {
		e.opts.Observe(page, propsJSON)
	}
	rt, err := e.acquire(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("render %s: %w", page, err)
	}
	healthy := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("render %s: panic: %v", page, r)
		}
		if healthy {
			e.release(rt)
		} else {
			e.discard()
		}
	}()

	// Stop the render at the timeout or when the caller gives up. Either
	// interrupt leaves the runtime unfit for reuse.
	timer := time.AfterFunc(e.opts.Timeout, func() { rt.Interrupt(ErrTimeout) })
	stop := context.AfterFunc(ctx, func() { rt.Interrupt(ctx.Err()) })
	fn, _ := goja.AssertFunction(rt.Get("marqueeRender"))
	out, callErr := fn(goja.Undefined(), rt.ToValue(page), rt.ToValue(string(propsJSON)))
	// If either interrupt fired (even just after the call returned) a pending
	// interrupt could hit the next render, so the runtime is discarded.
	timerStopped := timer.Stop()
	ctxStopped := stop()
	healthy = timerStopped && ctxStopped

	if callErr != nil {
		var interrupted *goja.InterruptedError
		if errors.As(callErr, &interrupted) {
			if v, ok := interrupted.Value().(error); ok {
				return Result{}, fmt.Errorf("render %s: %w", page, v)
			}
			return Result{}, fmt.Errorf("render %s: %w", page, ErrTimeout)
		}
		return Result{}, fmt.Errorf("render %s: %w", page, callErr)
	}
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		return Result{}, fmt.Errorf("render %s: decode result: %w", page, err)
	}
	if res.Status == 0 {
		res.Status = 200
	}
	return res, nil
}
