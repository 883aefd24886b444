package render

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// The fixture bundle is built once per test run from render/testdata, so the
// tests don't depend on the real pages or on `go run ./scripts/build`.
var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
)

func fixture(t *testing.T) string {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "render-fixture-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureDir = dir
		build := filepath.Join(dir, "public", "build")
		if fixtureErr = BuildServerBundle("render/testdata/entry.tsx", filepath.Join(build, "server.js")); fixtureErr != nil {
			return
		}
		if fixtureErr = os.WriteFile(filepath.Join(build, "styles-H.css"), []byte("body{margin:0}main{padding:0}"), 0o644); fixtureErr != nil {
			return
		}
		if fixtureErr = os.WriteFile(filepath.Join(build, "critical-H.css"), []byte("body{margin:0}"), 0o644); fixtureErr != nil {
			return
		}
		m := Manifest{
			Server:      "public/build/server.js",
			CSS:         "public/build/styles-H.css",
			CriticalCSS: "public/build/critical-H.css",
			Runtime:     "/static/build/client/client-R.js",
			Islands:     map[string]string{"Echo": "/static/build/client/Echo-E.js"},
			Chunks: map[string][]string{
				"Echo":           {"/static/build/client/chunk-C.js"},
				RuntimeChunksKey: {"/static/build/client/chunk-R.js", "/static/build/client/chunk-C.js"},
			},
		}
		data, _ := json.Marshal(m)
		fixtureErr = os.WriteFile(filepath.Join(build, "manifest.json"), data, 0o644)
	})
	if fixtureErr != nil {
		t.Fatalf("build fixture: %v", fixtureErr)
	}
	return filepath.Join(fixtureDir, "public", "build", "manifest.json")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

func newEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	opts.ManifestPath = fixture(t)
	if opts.Timeout == 0 {
		// A busy machine must not fail a test on the product's 2 s default;
		// the timeout has its own test with a page that never ends.
		opts.Timeout = 2 * time.Minute
	}
	e, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func TestRenderFastPage(t *testing.T) {
	e := newEngine(t, Options{PoolSize: 1})
	res, err := e.Render(context.Background(), "Fast", map[string]string{"name": "Ada & <Bob>"})
	if err != nil {
		t.Fatal(err)
	}
	if res.HTML != "<main><h1>Hello, <!-- -->Ada &amp; &lt;Bob&gt;</h1></main>" {
		t.Errorf("html = %q", res.HTML)
	}
	if res.Head != "<title>Ada &amp; &lt;Bob&gt;</title>" || res.Status != 200 || len(res.Islands) != 0 {
		t.Errorf("result = %+v", res)
	}
	doc := string(e.Document(DocumentData{Result: res, ThemeColor: "#fff"}))
	if strings.Contains(doc, "<script") {
		t.Errorf("a page with no islands must ship no JS:\n%s", doc)
	}
	// No critical CSS for this page: the hashed stylesheet, in the head.
	for _, want := range []string{`<html lang="en">`, `<link rel="stylesheet" href="/static/build/styles-H.css"><link rel="manifest"`, `<meta name="theme-color" content="#fff">`, res.HTML} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q", want)
		}
	}
	if strings.Contains(doc, "<style>") {
		t.Errorf("the stylesheet must not be inlined:\n%s", doc)
	}
}

func TestCriticalCSS(t *testing.T) {
	e := newEngine(t, Options{PoolSize: 1})
	res, err := e.Render(context.Background(), "Critical", map[string]string{"name": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Critical {
		t.Fatalf("the page declared criticalCSS: %+v", res)
	}
	doc := string(e.Document(DocumentData{Result: res}))
	// The first screen's CSS inline in the head; the full stylesheet after
	// the content, where it does not hold the first paint back.
	style, link := strings.Index(doc, "<style>body{margin:0}</style>"), strings.Index(doc, `<link rel="stylesheet" href="/static/build/styles-H.css">`)
	if style < 0 || link < 0 || style > strings.Index(doc, "</head>") || link < strings.Index(doc, res.HTML) || strings.Count(doc, "stylesheet") != 1 {
		t.Errorf("critical CSS inline, full stylesheet after the content:\n%s", doc)
	}
}

func TestUnknownPage(t *testing.T) {
	e := newEngine(t, Options{PoolSize: 1})
	if _, err := e.Render(context.Background(), "Nope", nil); err == nil || !strings.Contains(err.Error(), "unknown page") {
		t.Fatalf("err = %v", err)
	}
}

func TestTimeoutReplacesRuntime(t *testing.T) {
	// The timeout is every render's, the fast one's after it too: beside a
	// CPU hog (load 35 on two cores) a 100 ms timeout interrupted the fast
	// render as well. The loop never ends, so ErrTimeout is the interrupt.
	const timeout = 3 * time.Second
	e := newEngine(t, Options{PoolSize: 1, Timeout: timeout})
	start := time.Now()
	_, err := e.Render(context.Background(), "Loop", nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d < timeout {
		t.Errorf("interrupted after %v, before the %v timeout", d, timeout)
	}
	// The only runtime was interrupted; the next render gets a fresh one.
	if _, err := e.Render(context.Background(), "Fast", map[string]string{"name": "x"}); err != nil {
		t.Fatalf("render after timeout: %v", err)
	}
}

func TestContextCancelStopsRender(t *testing.T) {
	e := newEngine(t, Options{PoolSize: 1, Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := e.Render(ctx, "Loop", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if _, err := e.Render(context.Background(), "Fast", map[string]string{"name": "x"}); err != nil {
		t.Fatalf("render after cancel: %v", err)
	}
}

func TestBrokenPageThenNextWorks(t *testing.T) {
	e := newEngine(t, Options{PoolSize: 1})
	_, err := e.Render(context.Background(), "Throws", nil)
	if err == nil || !strings.Contains(err.Error(), "page exploded") || !strings.HasPrefix(err.Error(), "render Throws:") {
		t.Fatalf("err = %v", err)
	}
	if _, err := e.Render(context.Background(), "Fast", map[string]string{"name": "x"}); err != nil {
		t.Fatalf("render after error: %v", err)
	}
}

func TestConcurrentRendersStayWithinPool(t *testing.T) {
	const poolSize, workers = 2, 16
	e := newEngine(t, Options{PoolSize: poolSize})
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	done := make(chan struct{})
	seen := make(chan int)
	go func() { // sample how many runtimes exist while renders run
		maxSeen := 0
		for {
			select {
			case <-done:
				seen <- maxSeen
				return
			default:
				if n := e.runtimesMade(); n > maxSeen {
					maxSeen = n
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Render(context.Background(), "WithIsland", map[string]string{"text": "hi"})
			if err == nil && res.Status != 201 {
				err = errors.New("wrong status")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(done)
	maxSeen := <-seen
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if made := e.runtimesMade(); maxSeen > poolSize || made > poolSize {
		t.Errorf("pool grew past %d: saw %d runtimes, %d at the end", poolSize, maxSeen, made)
	}
}

func TestIslandPropsEscaped(t *testing.T) {
	e := newEngine(t, Options{PoolSize: 1})
	text := "</script><script>alert(1)</script> \"quotes\" &amp; \u2028 end"
	res, err := e.Render(context.Background(), "WithIsland", map[string]string{"text": text})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Islands) != 1 || res.Islands[0] != "Echo" {
		t.Fatalf("islands = %v", res.Islands)
	}
	doc := string(e.Document(DocumentData{Result: res}))
	if strings.Contains(res.HTML, "</script>") || strings.Contains(res.HTML, "<script") {
		t.Errorf("raw script tag in html: %s", res.HTML)
	}
	m := regexp.MustCompile(`<marquee-island data-island="Echo" data-props="([^"]*)" data-when="idle">`).FindStringSubmatch(res.HTML)
	if m == nil {
		t.Fatalf("no island marker in %s", res.HTML)
	}
	var props map[string]string
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &props); err != nil {
		t.Fatalf("data-props does not decode: %v (%s)", err, m[1])
	}
	if props["text"] != text {
		t.Errorf("props text = %q, want %q", props["text"], text)
	}
	// The document names the boot module, at low priority, and lists the
	// runtime's files, the island and its chunk once, for the boot module to
	// preload after the first paint: no preload link in the HTML.
	for _, want := range []string{
		`<script type="application/json" id="marquee-islands">{"Echo":"/static/build/client/Echo-E.js"}</script>`,
		`<script type="application/json" id="marquee-preload">["/static/build/client/chunk-R.js","/static/build/client/chunk-C.js","/static/build/client/Echo-E.js"]</script>`,
		`<script type="module" fetchpriority="low" src="/static/build/client/client-R.js"></script>`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %s", want)
		}
	}
	if strings.Contains(doc, "modulepreload") || strings.Count(doc, "<script") != 3 {
		t.Errorf("island scripts must stay off the first paint's path:\n%s", doc[strings.Index(doc, "<script"):])
	}
	// An island that only hydrates on idle or visible is mapped, not
	// preloaded (chunk-C stays: the runtime needs it).
	res.Lazy = []string{"Echo"}
	lazy := string(e.Document(DocumentData{Result: res}))
	if !strings.Contains(lazy, `{"Echo":"/static/build/client/Echo-E.js"}`) ||
		!strings.Contains(lazy, `id="marquee-preload">["/static/build/client/chunk-R.js","/static/build/client/chunk-C.js"]</script>`) {
		t.Errorf("lazy island preloaded or runtime missing: %s", lazy[strings.Index(lazy, "<script"):])
	}
}

func TestFallbackDocument(t *testing.T) {
	e := newEngine(t, Options{PoolSize: 1})
	doc := string(e.FallbackDocument("Demo <App>", "Try later.", [][2]string{{"Home", "/apps/demo"}}))
	for _, want := range []string{"<title>Demo &lt;App&gt;</title>", `<a href="/apps/demo">Home</a>`, `<link rel="stylesheet" href="/static/build/styles-H.css">`} {
		if !strings.Contains(doc, want) {
			t.Errorf("fallback lacks %q:\n%s", want, doc)
		}
	}
}

// formatRuntime is a goja runtime with pages/lib/format.ts and changes.ts
// as the globals format and changes.
func formatRuntime(t *testing.T) *goja.Runtime {
	t.Helper()
	out := filepath.Join(t.TempDir(), "format.js")
	if err := BuildServerBundle("render/testdata/format-entry.ts", out); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rt := goja.New()
	if _, err := rt.RunString(string(src)); err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestFormatHelpersUnderGoja(t *testing.T) {
	rt := formatRuntime(t)
	cases := []struct{ expr, want string }{
		{`formatMoney(1234)`, "$12.34"},
		{`formatMoney(-100)`, "-$1.00"},
		{`formatMoney(123400)`, "$1,234.00"},
		{`formatMoney(123456789)`, "$1,234,567.89"},
		{`formatMoney(5)`, "$0.05"},
		{`formatMoney(999, "EUR")`, "€9.99"},
		{`formatMoney(999, "gbp")`, "£9.99"},
		{`formatMoney(500, "CAD")`, "CAD 5.00"},
		{`formatDate("2026-11-21T18:00:00Z")`, "Nov 21, 2026"},
		{`formatDate("not a date")`, ""},
		{`formatTime12("2026-11-21T18:00:00Z")`, "6:00 PM"},
		{`formatTime12("2026-11-21T00:05:00Z")`, "12:05 AM"},
		{`formatTime12("2026-11-21T12:30:00Z")`, "12:30 PM"},
		{`formatDateTime("2026-01-02T09:07:00Z")`, "Jan 2, 2026, 9:07 AM"},
		{`relativeTime("2026-11-21T18:00:00Z", "2026-11-21T18:00:59Z")`, "just now"},
		{`relativeTime("2026-11-21T18:00:00Z", "2026-11-21T18:05:00Z")`, "5m ago"},
		{`relativeTime("2026-11-21T18:00:00Z", "2026-11-21T21:00:00Z")`, "3h ago"},
		{`relativeTime("2026-11-21T18:00:00Z", "2026-11-23T18:00:00Z")`, "2d ago"},
		{`relativeTime("2026-11-01T18:00:00Z", "2026-12-01T18:00:00Z")`, "30d ago"},
		{`relativeTime("2026-10-01T18:00:00Z", "2026-12-01T18:00:00Z")`, "Oct 1, 2026"},
		{`truncate("hello world", 5)`, "hello..."},
		{`truncate("hello", 5)`, "hello"},
	}
	for _, c := range cases {
		v, err := rt.RunString("format." + c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := v.String(); got != c.want {
			t.Errorf("%s = %q, want %q", c.expr, got, c.want)
		}
	}
}
