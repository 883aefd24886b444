// Command benchmark measures Marquee's pages side by side, in one run, with
// nginx serving the same bytes (gzip_static) and a Node server rendering the
// same server bundle per request, all driven by wrk on loopback with
// `Accept-Encoding: gzip`; it also prints the goja/Node render ratio and the
// server's RSS. Run it through scripts/bench (it installs wrk and nginx).
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"marquee/assemble"
	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server"
	"marquee/store"
)

const renderRuns = 200

var (
	wrkFor   = envOr("BENCH_DURATION", "5s")
	wrkConns = envOr("BENCH_CONNECTIONS", "64")
	// BENCH_WRITES: writes per second (likes, replies, follows by 20
	// members) during the mixed-mode column; 0 leaves it out.
	benchWrites, _ = strconv.Atoi(envOr("BENCH_WRITES", "60"))
	// BENCH_ROUNDS: the figures that are compared (nginx, Marquee, Marquee
	// under writes) are measured in turn this many times and their medians
	// kept, so a neighbour's burst on a shared machine skews one round of
	// one column, not a ratio. Five: on the machines this ran on, one
	// 5-second run of the same server moved by up to a fifth from the next.
	benchRounds, _ = strconv.Atoi(envOr("BENCH_ROUNDS", "5"))
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func main() {
	// `scripts/bench api` runs only the API part (api.go), `scripts/bench
	// cluster` only PostgreSQL + Redis with two instances behind nginx
	// (cluster.go); with no argument all three run. BENCH_API=0 and
	// BENCH_CLUSTER=0 skip those parts of a full run.
	ctx, err := context.Background(), error(nil)
	only := ""
	if len(os.Args) > 1 {
		only = os.Args[1]
	}
	if only != "" && only != "api" && only != "cluster" && only != "apps" && only != "newsletter" || len(os.Args) > 2 && only != "apps" || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: scripts/bench [api|cluster|apps [N]|newsletter]")
		os.Exit(2)
	}
	// `scripts/bench apps` (apps.go): many apps' pages; not in a full run.
	// `scripts/bench apps 300` seeds 300 apps (BENCH_APPS, default 1,000).
	if only == "apps" {
		if len(os.Args) > 2 {
			appsCount = os.Args[2]
		}
		err = appsBench(ctx)
	}
	// `scripts/bench newsletter` (newsletter.go): pages during a 10,000-mail
	// send; not in a full run.
	if only == "newsletter" {
		err = newsletterBench(ctx)
	}
	if only == "" {
		err = run(ctx)
	}
	if err == nil && (only == "api" || only == "" && os.Getenv("BENCH_API") != "0") {
		err = apiBench(ctx)
	}
	if err == nil && (only == "cluster" || only == "" && os.Getenv("BENCH_CLUSTER") != "0") {
		err = clusterBench(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type page struct{ name, path string }

var pagesUnderTest = []page{{"landing", "/apps/demo"}, {"community", "/apps/demo/community"}}

// route is what the Node server renders for one path and viewer class.
type route struct {
	Page  string `json:"page"`
	Props string `json:"props"`
}

func run(ctx context.Context) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as `marquee serve` does
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(170 << 20) // serve's default soft limit
	}
	dir, err := os.MkdirTemp("", "marquee-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The logger of `marquee serve` (an access line per request, at info,
	// gathered and written every LOG_FLUSH), into a file of the run.
	logFile, err := os.Create(filepath.Join(dir, "marquee.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	logOut, err := server.NewLogOutput(logFile, func(string) string { return "" })
	if err != nil {
		return err
	}
	defer logOut.Close()
	logger, err := server.NewLogger(logOut, func(string) string { return "" })
	if err != nil {
		return err
	}
	// REDIS_URL as the environment says: the store's cache, sessions and
	// page announcements go through it as serve's would.
	cfg, err := server.LoadConfig(func(key string) string {
		return map[string]string{"DATABASE_URL": filepath.Join(dir, "bench.db"), "MEDIA_DIR": filepath.Join(dir, "media"),
			"SECRET_KEY": "bench", "REDIS_URL": os.Getenv("REDIS_URL")}[key]
	})
	if err != nil {
		return err
	}
	a, err := assemble.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	db, files := a.DB, a.Files
	if err := seed.Demo(ctx, db, files); err != nil {
		return err
	}

	// Every render's props, by viewer class and path, for the Node server.
	var mu sync.Mutex
	routes := map[string]route{}
	engine, err := a.Renderer(render.Options{Logger: logger, Observe: func(name string, props []byte) {
		var p struct {
			Path   string `json:"path"`
			Viewer struct {
				User *struct{} `json:"user"`
			} `json:"viewer"`
		}
		if json.Unmarshal(props, &p) != nil {
			return
		}
		class := "visitor:"
		if p.Viewer.User != nil {
			class = "member:"
		}
		mu.Lock()
		routes[class+p.Path] = route{Page: name, Props: string(props)}
		mu.Unlock()
	}})
	if err != nil {
		return err
	}
	mode := "embedded (SQLite, in-process cache)"
	if cfg.RedisURL != "" {
		mode = "SQLite + Redis (" + cfg.RedisURL + ")"
	}
	st := a.Storage
	follower, err := st.UserByLogin(ctx, "follower@demo.test")
	if err != nil {
		return err
	}
	token, err := st.CreateSession(ctx, follower.ID, "bench")
	if err != nil {
		return err
	}
	cookie := "marquee_session=" + token

	cached := a.Server(engine, assemble.ServerOptions{})
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go cached.WatchPageVersions(watchCtx)
	uncached := a.Server(engine, assemble.ServerOptions{NoPageCache: true})
	marquee, err := serveHTTP(cached)
	if err != nil {
		return err
	}
	marqueeOff, err := serveHTTP(uncached)
	if err != nil {
		return err
	}

	// Warm every page once per viewer class; keep the visitor's bytes for
	// nginx and the props for Node.
	www := filepath.Join(dir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return err
	}
	sizes := map[string][2]int{}
	headers := map[string]string{}
	for _, p := range pagesUnderTest {
		body, err := fetch(marquee+p.path, "")
		if err != nil {
			return err
		}
		if headers[p.path], err = nginxHeaders(marquee + p.path); err != nil {
			return err
		}
		gz := gzipBytes(body)
		sizes[p.name] = [2]int{len(body), len(gz)}
		if err := os.WriteFile(filepath.Join(www, p.name+".html"), body, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(www, p.name+".html.gz"), gz, 0o644); err != nil {
			return err
		}
		if _, err := fetch(marquee+p.path, cookie); err != nil {
			return err
		}
	}
	routesFile := filepath.Join(dir, "routes.json")
	mu.Lock()
	b, _ := json.Marshal(routes)
	mu.Unlock()
	if err := os.WriteFile(routesFile, b, 0o644); err != nil {
		return err
	}

	nginxURL, stopNginx, err := startNginx(dir, www, headers)
	if err != nil {
		return err
	}
	defer stopNginx()
	nodeURL, nodePID, stopNode, err := startNode(engine, routesFile)
	if err != nil {
		return err
	}
	defer stopNode()

	gojaMs, nodeMs, err := renderRatio(ctx, engine, routes["visitor:/apps/demo"])
	if err != nil {
		return err
	}
	// BENCH_BEFORE names another checkout (with bin/marquee and its build)
	// to measure in the same run, e.g. main before this branch.
	before, beforeCookie := "", ""
	if dir := os.Getenv("BENCH_BEFORE"); dir != "" {
		var stopBefore func()
		if before, beforeCookie, stopBefore, err = startBefore(ctx, dir, logger); err != nil {
			return err
		}
		defer stopBefore()
	}

	var engaged *writers
	if benchWrites > 0 {
		if engaged, err = newWriters(ctx, st, marquee, 20); err != nil {
			return err
		}
	}
	// withWrites runs wrk on url while the members write at benchWrites/s.
	withWrites := func(url, cookie string) (figure, error) {
		wctx, stop := context.WithCancel(ctx)
		go engaged.run(wctx, benchWrites)
		defer stop()
		return wrk(url, cookie)
	}

	fmt.Printf("Marquee %s; wrk -t1 -c%s -d%s, Accept-Encoding: gzip, loopback, %d cores\n\n", mode, wrkConns, wrkFor, numCPU())
	header := "| page | viewer | nginx gzip_static | Marquee | Marquee, page cache off | Node SSR per request | Marquee / nginx | Marquee / Node |"
	rule := "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	if engaged != nil {
		header += fmt.Sprintf(" Marquee at %d writes/s | that / nginx or Node |", benchWrites)
		rule += " ---: | ---: |"
	}
	if before != "" {
		header += " before (" + os.Getenv("BENCH_BEFORE") + ") |"
		rule += " ---: |"
	}
	fmt.Println(header)
	fmt.Println(rule)
	var targets []func()
	for _, p := range pagesUnderTest {
		for _, member := range []bool{false, true} {
			ck, who := "", "visitor"
			if member {
				ck, who = cookie, "member"
			}
			// The compared figures, measured in turn (BENCH_ROUNDS).
			measures := []func() (figure, error){
				func() (figure, error) {
					return profiled(who+"-"+p.name, func() (figure, error) { return wrk(marquee+p.path, ck) })
				},
			}
			if !member {
				measures = append(measures, func() (figure, error) { return wrk(nginxURL+p.path, "") })
			}
			if engaged != nil {
				measures = append(measures, func() (figure, error) {
					return profiled(who+"-"+p.name+"-writes", func() (figure, error) { return withWrites(marquee+p.path, ck) })
				})
			}
			medians, err := inTurn(measures)
			if err != nil {
				return err
			}
			mq := medians[0]
			ng := "-"
			var ngFig, busy figure
			if !member {
				ngFig = medians[1]
				ng = ngFig.String()
			}
			if engaged != nil {
				busy = medians[len(medians)-1]
			}
			off, err := wrk(marqueeOff+p.path, ck)
			if err != nil {
				return err
			}
			nd, err := wrk(nodeURL+p.path, ck)
			if err != nil {
				return err
			}
			vsNginx := "-"
			if ngFig.rps > 0 {
				vsNginx = fmt.Sprintf("%.2fx", mq.rps/ngFig.rps)
			}
			vsNode := "-"
			if nd.rps > 0 {
				vsNode = fmt.Sprintf("%.1fx", mq.rps/nd.rps)
			}
			extra := ""
			if engaged != nil {
				ratio := "-"
				if ngFig.rps > 0 {
					ratio = fmt.Sprintf("%.2fx", busy.rps/ngFig.rps)
					name := fmt.Sprintf("%s %s at %d writes/s vs nginx gzip_static", who, p.name, benchWrites)
					want := visitorTarget(p.name)
					targets = append(targets, func() { target(name, busy.rps/ngFig.rps, want, true, "x") })
				} else if nd.rps > 0 {
					ratio = fmt.Sprintf("%.1fx", busy.rps/nd.rps)
					name := fmt.Sprintf("%s %s at %d writes/s vs Node per request", who, p.name, benchWrites)
					targets = append(targets, func() { target(name, busy.rps/nd.rps, 5, true, "x") })
				}
				extra += " " + busy.String() + " | " + ratio + " |"
			}
			if before != "" {
				bck := ""
				if member {
					bck = beforeCookie
				}
				bf, err := wrk(before+p.path, bck)
				if err != nil {
					return err
				}
				extra += " " + bf.String() + " |"
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s |%s\n", p.name, who, ng, mq, off, nd, vsNginx, vsNode, extra)
			if ngFig.rps > 0 {
				want := visitorTarget(p.name)
				targets = append(targets, func() { target(who+" "+p.name+" vs nginx gzip_static", mq.rps/ngFig.rps, want, true, "x") })
			} else if member && nd.rps > 0 {
				targets = append(targets, func() { target(who+" "+p.name+" vs Node per request", mq.rps/nd.rps, 5, true, "x") })
			}
		}
	}
	fmt.Println()
	for _, p := range pagesUnderTest {
		fmt.Printf("%s: %d bytes of HTML, %d gzipped\n", p.name, sizes[p.name][0], sizes[p.name][1])
	}
	fmt.Printf("landing render, median of %d: goja %.2f ms, Node %.3f ms, goja/Node %.0fx\n", renderRuns, gojaMs, nodeMs, gojaMs/nodeMs)
	fmt.Printf("RSS after the runs: Marquee (both servers, one process) %s, Node %s\n", rss("self"), rss(strconv.Itoa(nodePID)))
	if engaged != nil {
		fmt.Printf("mixed mode: %d writes done, %s\n", engaged.done.Load(), engaged.failures())
	}
	fmt.Println()
	for _, t := range targets {
		t()
	}
	target("goja/Node render, landing", gojaMs/nodeMs, 15, false, "x")
	runLighthouse(marquee)
	return nil
}

// startBefore runs another checkout's server on its own seeded SQLite file.
func startBefore(ctx context.Context, checkout string, logger *slog.Logger) (string, string, func(), error) {
	tmp, err := os.MkdirTemp("", "marquee-bench-before-")
	if err != nil {
		return "", "", nil, err
	}
	port, err := freePort()
	if err != nil {
		return "", "", nil, err
	}
	authPort, err := freePort()
	if err != nil {
		return "", "", nil, err
	}
	dbFile := filepath.Join(tmp, "before.db")
	env := append(os.Environ(), "DATABASE_URL="+dbFile, "MEDIA_DIR="+filepath.Join(tmp, "media"), "REDIS_URL=",
		fmt.Sprintf("PORT=%d", port), fmt.Sprintf("AUTH_PORT=%d", authPort))
	bin := filepath.Join(checkout, "bin/marquee")
	for _, sub := range []string{"migrate", "seed-demo"} {
		cmd := exec.CommandContext(ctx, bin, sub)
		cmd.Dir, cmd.Env = checkout, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", nil, fmt.Errorf("%s %s: %v: %s", bin, sub, err, out)
		}
	}
	db, err := store.Open(dbFile)
	if err != nil {
		return "", "", nil, err
	}
	st := store.New(store.Options{DB: db, Logger: logger})
	u, err := st.UserByLogin(ctx, "follower@demo.test")
	if err != nil {
		return "", "", nil, err
	}
	token, err := st.CreateSession(ctx, u.ID, "bench")
	db.Close()
	if err != nil {
		return "", "", nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Dir, cmd.Env = checkout, env
	if err := cmd.Start(); err != nil {
		return "", "", nil, err
	}
	stop := func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait(); os.RemoveAll(tmp) }
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitFor(url + pagesUnderTest[0].path); err != nil {
		stop()
		return "", "", nil, fmt.Errorf("before server: %w", err)
	}
	for _, p := range pagesUnderTest {
		_, _ = fetch(url+p.path, "")
		_, _ = fetch(url+p.path, "marquee_session="+token)
	}
	return url, "marquee_session=" + token, stop, nil
}

// serveHTTP serves s's main site on a loopback port until the process ends.
func serveHTTP(s *server.Server) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	// As `marquee serve` serves (ServeMain: the front, then net/http
	// answering in one piece).
	go s.ServeMain(&http.Server{Handler: s.Main(), ReadHeaderTimeout: 10 * time.Second}, ln)
	return "http://" + ln.Addr().String(), nil
}

// fetch GETs a page, trying again a few times: on a busy machine a first
// render can hit the renderer's timeout.
func fetch(url, cookie string) (b []byte, err error) {
	for i := 0; i < 5; i++ {
		if b, err = fetchOnce(url, cookie); err == nil {
			return b, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, err
}

func fetchOnce(url, cookie string) ([]byte, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Encoding", "identity")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %d", url, res.StatusCode)
	}
	return b, err
}

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	w, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// nginxHeaders are the add_header directives that have nginx answer a
// visitor's gzip request for url with the headers Marquee answers (the
// security headers, Vary, Cache-Control, a request id, the cache state):
// the same bytes, head and body, not a body with nginx's few headers.
// nginx makes its own Date, Content-Type (charset utf-8), Content-Length,
// Content-Encoding, ETag and Last-Modified.
func nginxHeaders(url string) (string, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		return "", err
	}
	_ = res.Body.Close()
	if res.Header.Get("X-Page-Cache") != "hit" {
		return "", fmt.Errorf("GET %s: X-Page-Cache %q, want a hit", url, res.Header.Get("X-Page-Cache"))
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(res.Header)) {
		switch k {
		case "Date", "Content-Type", "Content-Length", "Content-Encoding", "Etag", "Last-Modified", "Connection":
			continue
		}
		// The request id as Marquee sent it, the same bytes at every answer
		// (nginx's $request_id reads the system's random source each time,
		// which Marquee's ids do not).
		v := strings.Join(res.Header[k], ", ")
		if strings.ContainsAny(v, `$"\`) {
			return "", fmt.Errorf("header %s: %q does not go into nginx's config as it is", k, v)
		}
		fmt.Fprintf(&b, " add_header %s \"%s\";", k, v)
	}
	return b.String(), nil
}

// startNginx serves the visitor pages' bytes as static files, precompressed,
// each with the headers Marquee answers it with (headers by path).
func startNginx(dir, www string, headers map[string]string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	var locations strings.Builder
	for _, p := range pagesUnderTest {
		fmt.Fprintf(&locations, "    location = %s { default_type text/html; try_files /%s.html =404;%s }\n", p.path, p.name, headers[p.path])
	}
	conf := fmt.Sprintf(`worker_processes auto;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s;
  proxy_temp_path %[1]s;
  fastcgi_temp_path %[1]s;
  uwsgi_temp_path %[1]s;
  scgi_temp_path %[1]s;
  gzip_static on;
  etag on;
  charset utf-8;
  server_tokens off;
  # nginx at its best for static files: descriptors and stat results kept
  # (try_files and gzip_static would otherwise open and stat per request).
  open_file_cache max=64 inactive=60s;
  open_file_cache_valid 60s;
  server {
    listen 127.0.0.1:%[2]d;
    root %[3]s;
%[4]s  }
}
`, dir, port, www, locations.String())
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		return "", nil, err
	}
	cmd := exec.Command("nginx", "-p", dir, "-c", confFile)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start nginx: %w", err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	stop := func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	if err := waitFor(url + pagesUnderTest[0].path); err != nil {
		stop()
		return "", nil, fmt.Errorf("nginx: %w", err)
	}
	return url, stop, nil
}

func startNode(engine *render.Engine, routesFile string) (string, int, func(), error) {
	root, err := render.ProjectRoot()
	if err != nil {
		return "", 0, nil, err
	}
	port, err := freePort()
	if err != nil {
		return "", 0, nil, err
	}
	// Node sends the document Marquee sends for the pages under test: the
	// first screen's CSS inline and the hashed stylesheet linked after it.
	m := engine.Manifest()
	critical, sheet := "", ""
	if m.CriticalCSS != "" {
		critical = filepath.Join(root, m.CriticalCSS)
	}
	if m.CSS != "" {
		sheet = "/static/build/" + filepath.Base(m.CSS)
	}
	cmd := exec.Command("node", filepath.Join(root, "scripts/benchmark/node-server.mjs"),
		filepath.Join(root, m.Server), critical, sheet, strconv.Itoa(port), routesFile)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("start node: %w", err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	if err := waitFor(url + pagesUnderTest[0].path); err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("node server: %w", err)
	}
	return url, cmd.Process.Pid, stop, nil
}

func waitFor(url string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := fetch(url, "")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var (
	rpsLine    = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	errorsLine = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// figure is a wrk result: successful requests per second, and how many
// answers were errors (an overloaded renderer times out).
type figure struct {
	rps    float64
	failed int
}

func (f figure) String() string {
	if f.failed > 0 {
		return fmt.Sprintf("%.0f (%d failed)", f.rps, f.failed)
	}
	return fmt.Sprintf("%.0f", f.rps)
}

// inTurn runs each measure benchRounds times, one after the other in
// every round, and answers each one's median figure.
func inTurn(measures []func() (figure, error)) ([]figure, error) {
	rounds := max(benchRounds, 1)
	runs := make([][]figure, len(measures))
	for r := 0; r < rounds; r++ {
		for i, m := range measures {
			f, err := m()
			if err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], f)
		}
	}
	medians := make([]figure, len(measures))
	for i, fs := range runs {
		sort.Slice(fs, func(a, b int) bool { return fs[a].rps < fs[b].rps })
		medians[i] = fs[len(fs)/2]
	}
	return medians, nil
}

// profiled runs measure under a CPU profile of the bench process (the
// Marquee servers run in it) when BENCH_CPUPROFILE names a folder: one
// <name>.pprof per Marquee run, for `go tool pprof`.
func profiled(name string, measure func() (figure, error)) (figure, error) {
	dir := os.Getenv("BENCH_CPUPROFILE")
	if dir == "" {
		return measure()
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		return figure{}, err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return figure{}, err
	}
	defer pprof.StopCPUProfile()
	return measure()
}

// wrk loads url and returns its figure.
func wrk(url, cookie string) (figure, error) {
	args := []string{"-t1", "-c" + wrkConns, "-d" + wrkFor, "-H", "Accept-Encoding: gzip"}
	if cookie != "" {
		args = append(args, "-H", "Cookie: "+cookie)
	}
	out, err := exec.Command("wrk", append(args, url)...).CombinedOutput()
	if err != nil {
		return figure{}, fmt.Errorf("wrk %s: %v: %s", url, err, out)
	}
	m := rpsLine.FindSubmatch(out)
	if m == nil {
		return figure{}, errors.New("wrk output: " + string(out))
	}
	var f figure
	f.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	if e := errorsLine.FindSubmatch(out); e != nil {
		f.failed, _ = strconv.Atoi(string(e[1]))
	}
	// Requests/sec counts failures too; report only the answered pages.
	if total := totalRequests(out); total > 0 && f.failed > 0 {
		f.rps *= float64(total-f.failed) / float64(total)
	}
	return f, nil
}

var totalLine = regexp.MustCompile(`(\d+) requests in`)

func totalRequests(out []byte) int {
	m := totalLine.FindSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func renderRatio(ctx context.Context, engine *render.Engine, r route) (float64, float64, error) {
	if r.Page == "" {
		return 0, 0, errors.New("the landing was never rendered")
	}
	props := json.RawMessage(r.Props)
	times := make([]float64, 0, renderRuns)
	for i := 0; i < renderRuns+20; i++ {
		start := time.Now()
		if _, err := engine.Render(ctx, r.Page, props); err != nil {
			return 0, 0, err
		}
		if i >= 20 { // the first renders warm the pool
			times = append(times, float64(time.Since(start).Microseconds())/1000)
		}
	}
	root, err := render.ProjectRoot()
	if err != nil {
		return 0, 0, err
	}
	propsFile := filepath.Join(os.TempDir(), fmt.Sprintf("marquee-bench-props-%d.json", os.Getpid()))
	if err := os.WriteFile(propsFile, props, 0o644); err != nil {
		return 0, 0, err
	}
	defer os.Remove(propsFile)
	out, err := exec.Command("node", filepath.Join(root, "scripts/benchmark/node-render.mjs"),
		filepath.Join(root, engine.Manifest().Server), propsFile, r.Page, fmt.Sprint(renderRuns)).CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("node render: %v: %s", err, out)
	}
	nodeMs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, 0, fmt.Errorf("node output %q: %w", out, err)
	}
	return median(times), nodeMs, nil
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func rss(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return fmt.Sprintf("%d MB", kb/1024)
		}
	}
	return "?"
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

// visitorTarget is what a visitor's page must reach of nginx serving the
// same bytes, idle and at the write rate (issue 45 item 1): the landing
// 0.9x, the community 0.8x.
func visitorTarget(page string) float64 {
	if page == "landing" {
		return 0.9
	}
	return 0.8
}
