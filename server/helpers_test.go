package server

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server/auth"
	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/store"
	"marquee/store/storetest"
)

var (
	engineOnce sync.Once
	engine     *render.Engine
	engineErr  error
)

// testEngine shares one render engine (built by `make build`) across tests.
func testEngine(t testing.TB) *render.Engine {
	engineOnce.Do(func() {
		root, err := render.ProjectRoot()
		if err != nil {
			engineErr = err
			return
		}
		manifest := filepath.Join(root, "public/build/manifest.json")
		if engineErr = bundleIsCurrent(root, manifest); engineErr != nil {
			return
		}
		engine, engineErr = render.New(render.Options{ManifestPath: manifest,
			// As the servers' RenderTimeout: a busy machine must not turn a
			// slow render into the 503 fallback page.
			Timeout: 2 * time.Minute})
	})
	if engineErr != nil {
		t.Fatalf("render engine (run `make build` first): %v", engineErr)
	}
	return engine
}

// bundleIsCurrent refuses a build older than a page, an island or the
// stylesheet it was made from: the tests render with the built bundle, and
// a stale one fails them with a page that no source holds (a reverted
// change once looked broken that way).
func bundleIsCurrent(root, manifest string) error {
	built, err := os.Stat(manifest)
	if err != nil {
		return err
	}
	for _, dir := range []string{"pages", "islands"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(path); ext != ".ts" && ext != ".tsx" && ext != ".css" {
				return nil
			}
			if info, err := d.Info(); err == nil && info.ModTime().After(built.ModTime()) {
				rel, _ := filepath.Rel(root, path)
				return fmt.Errorf("public/build is older than %s: run `go run ./scripts/build`", rel)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

type testServer struct {
	*Server
	files *media.Local
	// storeOptions are what the server's store was built with: a test
	// builds another process's store alike from them (the CLI, a restart).
	storeOptions store.Options
}

// demoDB is a PostgreSQL database of the test's own with the demo seeded:
// a copy of a template seeded once per test process, whose pictures
// newTestServer links into the test's media folder.
func demoDB(t testing.TB) *bun.DB {
	t.Helper()
	db := storetest.PostgresFrom(t, "demo", seedDemoTemplate("postgres"))
	useDemoMedia(t, db, "postgres")
	return db
}

// demoSQLite is demoDB on SQLite.
func demoSQLite(t testing.TB) *bun.DB {
	t.Helper()
	db := storetest.SQLiteFrom(t, "demo", seedDemoTemplate("sqlite"))
	useDemoMedia(t, db, "sqlite")
	return db
}

// demoBoth runs fn against a seeded demo on PostgreSQL and on SQLite, as
// storetest.Both does with empty databases.
func demoBoth(t *testing.T, fn func(t *testing.T, db *bun.DB)) {
	t.Run("postgres", func(t *testing.T) { fn(t, demoDB(t)) })
	t.Run("sqlite", func(t *testing.T) { fn(t, demoSQLite(t)) })
}

// demoMedia holds the folder of each template's pictures by database kind,
// and dbMedia which of them a test's database was copied from.
var demoMedia, dbMedia sync.Map

// TestMain drops the templates and removes their pictures once every test has run.
func TestMain(m *testing.M) {
	code := storetest.Main(m)
	demoMedia.Range(func(_, dir any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
	os.Exit(code)
}

func seedDemoTemplate(kind string) func(ctx context.Context, db *bun.DB) error {
	return func(ctx context.Context, db *bun.DB) error {
		dir, err := os.MkdirTemp("", "marquee-demo-media-")
		if err != nil {
			return err
		}
		demoMedia.Store(kind, dir)
		if err := seed.Demo(ctx, db, &media.Local{Dir: dir, BaseURL: "http://main.test", Key: []byte("test-key")}); err != nil {
			return err
		}
		// The demo's password at the tests' cost: the same password, so
		// every sign-in works as it does on a seeded server, at a fraction
		// of the CPU.
		hash, err := testPasswordCost.Hash(seed.DemoPassword)
		if err != nil {
			return err
		}
		_, err = db.NewUpdate().Model((*store.User)(nil)).Set("password_hash = ?", hash).Where("password_hash <> ''").Exec(ctx)
		return err
	}
}

// testPasswordCost is what a password costs in these tests: argon2id's
// smallest. At the production cost (about 40 ms of CPU a hash) hashing was
// a tenth of the package's CPU in a profile of the suite; auth's own tests
// keep the production cost.
var testPasswordCost = auth.PasswordCost{MemoryKiB: 8, Passes: 1}

func useDemoMedia(t testing.TB, db *bun.DB, kind string) {
	dir, _ := demoMedia.Load(kind)
	dbMedia.Store(db, dir)
	t.Cleanup(func() { dbMedia.Delete(db) })
}

// logSinks holds, per test that asked for them (keepServerLogs), where
// its servers log.
var logSinks sync.Map // testing.TB -> io.Writer

// keepServerLogs keeps the logs of the servers t starts from now on and
// shows them if t fails: for tests whose failure the answers alone do not
// explain (a certificate authority's validation, a lock).
func keepServerLogs(t *testing.T) {
	logs := &lockedBuffer{}
	logSinks.Store(t, logs)
	t.Cleanup(func() {
		logSinks.Delete(t)
		if t.Failed() {
			t.Logf("the servers' logs:\n%s", logs.String())
		}
	})
}

// newTestServer seeds the demo into db (unless it is a copy of a seeded
// template) and returns a server over it.
func newTestServer(t testing.TB, db *bun.DB) *testServer {
	t.Helper()
	return newTestServerWith(t, db, nil)
}

// newTestServerWith is newTestServer with configure applied to the
// configuration before the server is built.
func newTestServerWith(t testing.TB, db *bun.DB, configure func(*Config)) *testServer {
	t.Helper()
	return newTestServerStore(t, db, configure, nil)
}

// newTestServerStore is newTestServerWith with withStore applied to the
// options its store is built from (Redis, a namespace, a cache): a store
// is sealed once built, as the assembly builds it for serve.
func newTestServerStore(t testing.TB, db *bun.DB, configure func(*Config), withStore func(*store.Options)) *testServer {
	t.Helper()
	files := &media.Local{Dir: t.TempDir(), BaseURL: "http://main.test", Key: []byte("test-key")}
	if dir, _ := dbMedia.Load(db); dir != nil {
		if err := linkTree(dir.(string), files.Dir); err != nil {
			t.Fatalf("copy demo media: %v", err)
		}
	}
	if err := seed.Demo(context.Background(), db, files); err != nil {
		t.Fatalf("seed: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("TEST_VERBOSE") != "" {
		logger = slog.Default()
	} else if w, ok := logSinks.Load(t); ok {
		logger = slog.New(slog.NewTextHandler(w.(io.Writer), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// InFlightWait and RenderTimeout: a test of a rule must not be answered
	// 503 because the machine running it is busy; load shedding and render
	// timeouts have their own tests (TestInFlightLimit,
	// TestTimedOutRenderIsNotCached).
	cfg := Config{Port: 3000, AuthPort: 3002, PublicURL: "http://main.test", AuthURL: "http://auth.test",
		WalletEnabled: true, OrderExpiry: 30 * time.Minute, InFlightWait: 5 * time.Minute, RenderTimeout: 2 * time.Minute}
	cfg.PasswordCost = testPasswordCost
	if root, err := render.ProjectRoot(); err == nil {
		cfg.ServiceWorkerFile = filepath.Join(root, "public", "sw.js")
	}
	if configure != nil {
		configure(&cfg)
	}
	opts := store.Options{DB: db, Cache: store.NewMemoryCache(), Media: media.Signer{Storage: files}, Logger: logger,
		MediaURL: strings.TrimRight(cfg.PublicURL, "/"), PlatformFeeBP: cfg.PlatformFeeBP}
	if withStore != nil {
		withStore(&opts)
	}
	st := store.New(opts)
	return &testServer{Server: New(Deps{Config: cfg, Store: st, Renderer: testEngine(t), Files: files, Logger: logger}), files: files,
		storeOptions: opts}
}

// startJobQueue migrates river's tables in db and works the product's jobs
// (deps) until the test ends.
func startJobQueue(t testing.TB, db *bun.DB, deps jobs.Deps) {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db, storetest.URL(db), deps.Logger); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(ctx, jobs.Options{DB: db, DatabaseURL: storetest.URL(db), MaxConns: storetest.JobConns, Logger: deps.Logger,
		Work: jobs.Product(deps)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(stop)
	})
}

// linkTree hard-links every file under src into dst: a copy per test server
// was a fifth of the server tests' time. Sharing the files is safe because
// media.Local never writes a file in place (a new file is renamed over it).
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return os.Link(path, target)
	})
}

type response struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request to the main site (or the auth site for /authenticate
// targets); an answer to a JSON call is checked against api/openapi.yaml.
func (ts *testServer) do(t testing.TB, method, target string, body io.Reader, headers map[string]string) response {
	t.Helper()
	req := testRequest(method, target, body, headers)
	rec := httptest.NewRecorder()
	handler := ts.Main()
	if strings.HasPrefix(target, "/authenticate") {
		handler = ts.Auth()
	}
	handler.ServeHTTP(rec, req)
	checkContract(t, method, target, rec.Code, rec.Header(), rec.Body.Bytes())
	return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

// testRequest is httptest.NewRequest with headers, on the test servers'
// main host (main.test: PUBLIC_URL's) unless the target or a "Host"
// header names another: hosts that are no site of ours and no verified
// custom domain answer 404.
func testRequest(method, target string, body io.Reader, headers map[string]string) *http.Request {
	req := httptest.NewRequest(method, target, body)
	if !strings.HasPrefix(target, "http") {
		req.Host = "main.test"
	}
	for k, v := range headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

// newRequest is httptest.NewRequest on the test servers' main host.
func newRequest(method, target string, body io.Reader) *http.Request {
	return testRequest(method, target, body, nil)
}
