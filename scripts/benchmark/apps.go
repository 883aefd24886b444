package main

// Many apps (issue 45): a platform hosts many creators and visitors (and
// crawlers) spread across them. `scripts/bench apps` seeds BENCH_APPS apps
// (default 1,000, each with posts, store items, events and members: `marquee
// bench-data --apps`) on SQLite and then on PostgreSQL, starts `bin/marquee
// serve` with its defaults (on SQLite no Redis: the disk tier beside the
// file; on PostgreSQL with Redis, as it is deployed, the pages' second
// tier), and reads every app's landing and
// community page with wrk: first one app's two pages (the reference), then
// all apps' pages Zipf-distributed from cold (a few hot apps, a long tail),
// again warm, then uniformly twice (as a crawler reads). Each pass reports
// req/s, p50/p99/max latency, the page cache's hit ratio and renders (from
// the server's /metrics) and the server's RSS.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"marquee/store"
)

var (
	appsCount    = envOr("BENCH_APPS", "1000")
	appsFor      = envOr("BENCH_APPS_DURATION", "20s")
	appsDBs      = envOr("BENCH_APPS_DATABASES", "sqlite,postgres")
	appsDatabase = envOr("BENCH_APPS_DATABASE", "marquee_bench_apps")
	// BENCH_APPS_SIZES=posts,items,events,users per app.
	appsSizes = envOr("BENCH_APPS_SIZES", "40,12,6,12")
	// BENCH_APPS_REDIS_URL: the Redis of the PostgreSQL half, as
	// PostgreSQL is deployed (pages rendered ahead by bench-data and
	// evicted from memory are shared through it); "none" measures
	// PostgreSQL without Redis, where neither outlasts its process.
	appsRedis = envOr("BENCH_APPS_REDIS_URL", "redis://127.0.0.1:6379/6")
)

func appsBench(ctx context.Context) error {
	n, err := strconv.Atoi(appsCount)
	if err != nil || n < 1 {
		return fmt.Errorf("BENCH_APPS: %q", appsCount)
	}
	for _, db := range strings.Split(appsDBs, ",") {
		if err := appsOn(ctx, strings.TrimSpace(db), n); err != nil {
			return fmt.Errorf("apps on %s: %w", db, err)
		}
	}
	return nil
}

// appsPass is one wrk run over many paths.
type appsPass struct {
	name          string
	rps           float64
	p50, p99, max time.Duration
	requests      int
	failed        int
	hits, total   float64 // page cache answers (hit and stale) and all
	renders       float64
	rss           int // kB after the pass
}

func appsOn(ctx context.Context, backend string, n int) error {
	bin, err := builtBinary()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "marquee-bench-apps-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var dsn, redisURL string
	switch backend {
	case "sqlite":
		dsn = filepath.Join(tmp, "apps.db")
	case "postgres":
		fresh, drop, err := freshDatabase(ctx, appsDatabase)
		if err != nil {
			return err
		}
		defer drop()
		dsn = fresh
		if appsRedis != "none" {
			redisURL = appsRedis
		}
	default:
		return fmt.Errorf("BENCH_APPS_DATABASES: %q is neither sqlite nor postgres", backend)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	authPort, err := freePort()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "DATABASE_URL="+dsn, "REDIS_URL="+redisURL, "MEDIA_DIR="+filepath.Join(tmp, "media"), "S3_ENDPOINT=",
		"MAIL_DIR="+filepath.Join(tmp, "mail"), "SECRET_KEY=bench-apps", "PAGE_CACHE_DIR="+tmp,
		fmt.Sprintf("PORT=%d", port), fmt.Sprintf("AUTH_PORT=%d", authPort))

	var posts, items, events, users int
	if _, err := fmt.Sscanf(appsSizes, "%d,%d,%d,%d", &posts, &items, &events, &users); err != nil {
		return fmt.Errorf("BENCH_APPS_SIZES: want posts,items,events,users: %w", err)
	}
	start := time.Now()
	seedCmd := exec.CommandContext(ctx, bin, "bench-data", "--app", "app", "--apps", strconv.Itoa(n),
		"--posts", strconv.Itoa(posts), "--items", strconv.Itoa(items), "--events", strconv.Itoa(events), "--users", strconv.Itoa(users))
	seedCmd.Env = env
	if out, err := seedCmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bench-data: %v: %s", err, out)
	}
	seeded := time.Since(start)
	if backend == "postgres" {
		if db, err := store.Open(dsn); err == nil {
			settle(ctx, db)
			db.Close()
		}
	}

	cmd := exec.Command(bin, "serve")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitForURL(base+"/healthz", 30*time.Second); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	pid := cmd.Process.Pid

	// Every app's landing and community, hottest first for Zipf.
	var all []string
	for i := 1; i <= n; i++ {
		all = append(all, fmt.Sprintf("/apps/app%d", i), fmt.Sprintf("/apps/app%d/community", i))
	}
	allFile, oneFile := filepath.Join(tmp, "all.txt"), filepath.Join(tmp, "one.txt")
	if err := os.WriteFile(allFile, []byte(strings.Join(all, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(oneFile, []byte(strings.Join(all[:2], "\n")+"\n"), 0o644); err != nil {
		return err
	}
	script := filepath.Join(tmp, "paths.lua")
	if err := os.WriteFile(script, []byte(pathsLua), 0o644); err != nil {
		return err
	}
	for _, p := range all[:2] {
		if _, err := fetch(base+p, ""); err != nil {
			return err
		}
	}
	load := loadAvg()
	shape := "no Redis: PAGE_CACHE_MB 64, a disk tier"
	if redisURL != "" {
		shape = "PAGE_CACHE_MB 64, Redis " + redisURL + " the second tier"
	}
	fmt.Printf("\n%d apps on %s (seeded in %s by bin/marquee bench-data --apps: %d posts, %d store items, %d events, %d members each); `bin/marquee serve` with its defaults (%s); wrk -t1 -c%s -d%s, Accept-Encoding: gzip, %d cores; load average before: %s\n\n",
		n, backend, seeded.Round(time.Second), posts, items, events, users, shape, wrkConns, appsFor, numCPU(), load)
	fmt.Println("| pass | pages | req/s | vs one app | p50 | p99 | max | cache hits | renders | RSS after |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	type run struct {
		name, file, mode string
		pages            int
	}
	runs := []run{
		{"one app (its landing and community, warm)", oneFile, "uniform", 2},
		{"Zipf, first pass (cold)", allFile, "zipf", len(all)},
		{"Zipf, warm", allFile, "zipf", len(all)},
		{"uniform, first pass", allFile, "uniform", len(all)},
		{"uniform, second pass", allFile, "uniform", len(all)},
	}
	var passes []appsPass
	for i, r := range runs {
		p, err := appsWrk(base, script, r.file, r.mode, i+1, pid)
		if err != nil {
			return err
		}
		p.name = r.name
		passes = append(passes, p)
		vs := "-"
		if i > 0 && passes[0].rps > 0 {
			vs = fmt.Sprintf("%.2fx", p.rps/passes[0].rps)
		}
		failed := ""
		if p.failed > 0 {
			failed = fmt.Sprintf(" (%d failed or timed out)", p.failed)
		}
		hit := "-"
		if p.total > 0 {
			hit = fmt.Sprintf("%.1f%%", 100*p.hits/p.total)
		}
		fmt.Printf("| %s | %d | %.0f%s | %s | %s | %s | %s | %s | %.0f | %d MB |\n", p.name, r.pages, p.rps, failed, vs,
			ms(p.p50), ms(p.p99), ms(p.max), hit, p.renders, p.rss/1024)
	}
	// The Zipf-warm target compares two warm figures that each move by
	// about 5% from one pass to the next: one app and Zipf warm are read
	// again in turn (inTurn, as the page benchmark compares its figures)
	// and the medians compared; each round's figure is kept for the report.
	var oneRounds, zipfRounds []float64
	warm := func(file, mode string, rounds *[]float64) func() (figure, error) {
		return func() (figure, error) {
			p, err := appsWrk(base, script, file, mode, 100+len(*rounds), pid)
			*rounds = append(*rounds, p.rps)
			return figure{rps: p.rps, failed: p.failed}, err
		}
	}
	medians, err := inTurn([]func() (figure, error){warm(oneFile, "uniform", &oneRounds), warm(allFile, "zipf", &zipfRounds)})
	if err != nil {
		return err
	}
	fmt.Printf("\nwarm, in turn %d times: one app %s req/s, Zipf %s req/s (medians %s and %s)\n",
		len(oneRounds), joinFigures(oneRounds), joinFigures(zipfRounds), medians[0], medians[1])
	fmt.Printf("\nRSS peak %s; load average after: %s\n\n", procStatus(pid, "VmHWM"), loadAvg())
	one := passes[0].rps
	target(fmt.Sprintf("%d apps on %s: Zipf warm vs one app (medians of rounds)", n, backend), medians[1].rps/medians[0].rps, 0.9, true, "x")
	target(fmt.Sprintf("%d apps on %s: Zipf first pass p99", n, backend), float64(passes[1].p99.Microseconds())/1000, 50, false, " ms")
	target(fmt.Sprintf("%d apps on %s: uniform second pass vs one app", n, backend), passes[4].rps/one, 0.5, true, "x")
	target(fmt.Sprintf("%d apps on %s: server RSS after the passes", n, backend), float64(passes[len(passes)-1].rss)/1024, 250, false, " MB")
	return nil
}

// appsWrk runs wrk over the paths in file (zipf or uniform) and reads the
// page cache's answers and renders from /metrics around it.
func appsWrk(base, script, file, mode string, seed, pid int) (appsPass, error) {
	before, err := pageMetrics(base)
	if err != nil {
		return appsPass{}, err
	}
	args := []string{"-t1", "-c" + wrkConns, "-d" + appsFor, "-H", "Accept-Encoding: gzip", "-s", script, base, "--", file, mode, strconv.Itoa(seed)}
	out, err := exec.Command("wrk", args...).CombinedOutput()
	if err != nil {
		return appsPass{}, fmt.Errorf("wrk: %v: %s", err, out)
	}
	after, err := pageMetrics(base)
	if err != nil {
		return appsPass{}, err
	}
	m := latencyLine.FindSubmatch(out)
	rps := rpsLine.FindSubmatch(out)
	if m == nil || rps == nil {
		return appsPass{}, fmt.Errorf("wrk output: %s", out)
	}
	var p appsPass
	p.rps, _ = strconv.ParseFloat(string(rps[1]), 64)
	us := func(b []byte) time.Duration {
		v, _ := strconv.ParseFloat(string(b), 64)
		return time.Duration(v) * time.Microsecond
	}
	p.p50, p.p99, p.max = us(m[1]), us(m[2]), us(m[3])
	// Requests/sec counts answers of any status; a request that timed out
	// (wrk gives up after 2 s) or failed on its socket is no answer.
	p.requests, _ = strconv.Atoi(string(m[4]))
	notOK, _ := strconv.Atoi(string(m[5]))
	lost, _ := strconv.Atoi(string(m[6]))
	p.failed = notOK + lost
	if notOK > 0 && p.requests > 0 {
		p.rps *= float64(max(p.requests-notOK, 0)) / float64(p.requests)
	}
	for _, r := range []string{"hit", "stale"} {
		p.hits += after["result=\""+r+"\""] - before["result=\""+r+"\""]
	}
	for k, v := range after {
		if strings.HasPrefix(k, "result=") {
			p.total += v - before[k]
		}
	}
	p.renders = after["renders"] - before["renders"]
	p.rss = procStatusKB(pid, "VmRSS")
	return p, nil
}

var (
	latencyLine = regexp.MustCompile(`LATENCY ([\d.]+) ([\d.]+) ([\d.]+) (\d+) (\d+) (\d+)`)
	metricLine  = regexp.MustCompile(`(?m)^marquee_page_cache_requests_total\{(result="[a-z]+")\} ([\d.e+]+)$`)
	renderCount = regexp.MustCompile(`(?m)^marquee_render_duration_seconds_count ([\d.e+]+)$`)
)

// pageMetrics reads the page cache's answers by result and the renders.
func pageMetrics(base string) (map[string]float64, error) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range metricLine.FindAllSubmatch(b, -1) {
		out[string(m[1])], _ = strconv.ParseFloat(string(m[2]), 64)
	}
	if m := renderCount.FindSubmatch(b); m != nil {
		out["renders"], _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return out, nil
}

// pathsLua picks each request's path from a file: uniformly, or by Zipf's
// law (s = 1) over the file's order, the first the hottest.
const pathsLua = `
local paths, cdf, guide, zipf = {}, {}, {}, false
function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  zipf = args[2] == "zipf"
  math.randomseed(tonumber(args[3]))
  local sum = 0
  for i = 1, #paths do sum = sum + 1 / i; cdf[i] = sum end
  for i = 1, #paths do cdf[i] = cdf[i] / sum end
  cdf[#paths] = 1
  -- guide[k]: the first path whose cdf reaches (k - 1) / #paths, so a
  -- pick costs a step or two whatever the number of paths, as a uniform
  -- pick does: wrk shares the cores with the server, and a search of the
  -- cdf per request made the Zipf passes' client dearer than the one app's.
  local i = 1
  for k = 1, #paths do
    while cdf[i] < (k - 1) / #paths do i = i + 1 end
    guide[k] = i
  end
end
function request()
  local i
  if zipf then
    local r = math.random()
    i = guide[math.floor(r * #paths) + 1]
    while cdf[i] < r do i = i + 1 end
  else
    i = math.random(#paths)
  end
  return wrk.format("GET", paths[i])
end
function done(summary, latency, requests)
  local lost = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("LATENCY %d %d %d %d %d %d\n", latency:percentile(50), latency:percentile(99), latency.max, summary.requests, summary.errors.status, lost))
end
`

// joinFigures lists req/s figures for a line of the report.
func joinFigures(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(parts, ", ")
}
