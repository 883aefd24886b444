package main

// The API part of the benchmark (issue #14): the feed, store items and
// events calls at a constant 500 requests/s on PostgreSQL holding the bench
// data (100,000 posts, 10,000 items, 1,000 events in one app), served by
// `bin/marquee serve` in its own process so its RSS is the server's alone.
//
// The load generator sends on a fixed schedule and measures each request
// from the moment it was due, not from when it went out: a server that
// stalls delays the requests queued behind the stall, and timing them from
// their late start would hide that (coordinated omission).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"marquee/scripts/seed"
	"marquee/store"
)

var (
	apiRate     = envOr("BENCH_API_RATE", "500")
	apiFor      = envOr("BENCH_API_DURATION", "10s")
	apiDatabase = envOr("BENCH_API_DATABASE", "marquee_bench")
)

// apiCall is one measured call: URLs are taken in turn, so a run mixes the
// first page with deeper ones and the common filters.
type apiCall struct {
	name   string
	urls   []string
	member bool
}

// apiResult is one call's figures.
type apiResult struct {
	sent, failed int
	p50, p99     time.Duration
	max          time.Duration
	achieved     float64
}

func apiBench(ctx context.Context) error {
	rate, err := strconv.Atoi(apiRate)
	if err != nil || rate <= 0 {
		return fmt.Errorf("BENCH_API_RATE: %q", apiRate)
	}
	dur, err := time.ParseDuration(apiFor)
	if err != nil {
		return fmt.Errorf("BENCH_API_DURATION: %w", err)
	}
	bin, err := builtBinary()
	if err != nil {
		return err
	}

	// A fresh database on the test server, dropped afterwards.
	dsn, drop, err := freshDatabase(ctx, apiDatabase)
	if err != nil {
		return err
	}
	defer drop()

	tmp, err := os.MkdirTemp("", "marquee-bench-api-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	port, err := freePort()
	if err != nil {
		return err
	}
	authPort, err := freePort()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "DATABASE_URL="+dsn, "MEDIA_DIR="+filepath.Join(tmp, "media"), "S3_ENDPOINT=",
		fmt.Sprintf("PORT=%d", port), fmt.Sprintf("AUTH_PORT=%d", authPort))
	if os.Getenv("REDIS_URL") == "" {
		env = append(env, "REDIS_URL=")
	}

	sz := seed.DefaultBenchSizes
	// BENCH_API_SIZES=posts,items,events for a quick run at a smaller scale.
	if v := os.Getenv("BENCH_API_SIZES"); v != "" {
		if _, err := fmt.Sscanf(v, "%d,%d,%d", &sz.Posts, &sz.Items, &sz.Events); err != nil {
			return fmt.Errorf("BENCH_API_SIZES: want posts,items,events: %w", err)
		}
	}
	start := time.Now()
	seedCmd := exec.CommandContext(ctx, bin, "bench-data", "--app", sz.App, "--posts", strconv.Itoa(sz.Posts),
		"--items", strconv.Itoa(sz.Items), "--events", strconv.Itoa(sz.Events))
	seedCmd.Env = env
	if out, err := seedCmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bench-data: %v: %s", err, out)
	}
	seeded := time.Since(start)

	a, err := assembleLike(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	db, st := a.DB, a.Storage
	settle(ctx, db)
	app, err := st.AppByIDOrName(ctx, sz.App)
	if err != nil {
		return err
	}
	var communityID, storeID string
	if err := db.NewSelect().Model((*store.Community)(nil)).Column("id").Where("app_id = ?", app.ID).Scan(ctx, &communityID); err != nil {
		return err
	}
	if err := db.NewSelect().Model((*store.Shop)(nil)).Column("id").Where("app_id = ?", app.ID).Scan(ctx, &storeID); err != nil {
		return err
	}
	member, err := st.UserByEmail(ctx, "user2@"+sz.App+".test")
	if err != nil {
		return err
	}
	token, err := st.CreateSession(ctx, member.ID, "bench")
	if err != nil {
		return err
	}
	cookie := "marquee_session=" + token

	// The runtime's collection trace tells the live heap (what is left
	// after a collection) apart from what RSS holds besides it.
	gcLog, err := os.Create(filepath.Join(tmp, "gctrace.log"))
	if err != nil {
		return err
	}
	defer gcLog.Close()
	serve := exec.Command(bin, "serve")
	serve.Env = append(env, "GODEBUG=gctrace=1")
	serve.Stderr = gcLog
	if err := serve.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	defer func() { _ = serve.Process.Signal(os.Interrupt); _ = serve.Wait() }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitForURL(base+"/healthz", 30*time.Second); err != nil {
		return fmt.Errorf("server: %w", err)
	}

	// Cursors into the feed at several depths, as "load more" makes them.
	feed := "/api/community/" + communityID + "/posts?limit=20&type=POST"
	feedURLs := []string{feed + "&page=1"}
	next, page := "", 1
	for page < 200 && (page == 1 || next != "") {
		p, err := st.CommunityFeed(ctx, communityID, store.MessagePost, store.FeedPage{Page: page, Limit: 20, Cursor: next})
		if err != nil {
			return err
		}
		page++
		next = p.Pagination.NextCursor
		if page%20 == 0 && next != "" {
			feedURLs = append(feedURLs, feed+"&page="+strconv.Itoa(page)+"&cursor="+next)
		}
	}
	items := "/api/store/" + storeID + "/items?limit=20"
	events := "/api/events/apps/" + app.ID + "/events?limit=20"
	now := time.Now().UTC()
	calls := []apiCall{
		{name: "feed (page 1, and deeper pages by cursor)", urls: feedURLs},
		{name: "store items (all, by type, price, stock, tag, search, page 3)", member: true, urls: []string{
			items + "&page=1", items + "&type=DIGITAL", items + "&minPrice=1000&maxPrice=5000", items + "&inStock=true",
			items + "&tags=art", items + "&search=lighthouse", items + "&page=3",
		}},
		{name: "events (all, by type, official, date window, search, page 3)", member: true, urls: []string{
			events + "&page=1", events + "&type=MEETUP", events + "&isOfficial=true",
			events + "&startDate=" + now.Format(time.RFC3339) + "&endDate=" + now.AddDate(0, 1, 0).Format(time.RFC3339),
			events + "&search=cello", events + "&page=3",
		}},
	}

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 512, MaxIdleConnsPerHost: 512, MaxConnsPerHost: 512, DisableCompression: true,
	}}
	// Warm up: connections, the app's cached data, PostgreSQL's buffers.
	for _, c := range calls {
		for _, u := range c.urls {
			for i := 0; i < 3; i++ {
				if status, err := apiGet(client, base+u, c.member, cookie); err != nil || status != http.StatusOK {
					return fmt.Errorf("warm-up GET %s: %d %v", u, status, err)
				}
			}
		}
	}

	pid := serve.Process.Pid
	fmt.Printf("\nAPI at a constant %d requests/s for %s each, PostgreSQL (%s), bench data: %d posts, %d store items, %d events in one app (seeded in %s by bin/marquee bench-data)\n",
		rate, dur, apiDatabase, sz.Posts, sz.Items, sz.Events, seeded.Round(time.Second))
	fmt.Printf("load average before: %s\n\n", loadAvg())
	var targets []func()
	fmt.Println("| call | requests | achieved req/s | p50 | p99 | max | failed | server RSS, peak during the run | live heap after collections, max | collections |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, c := range calls {
		stopRSS, peak := watchRSS(pid)
		from := fileSize(gcLog.Name())
		r := constantRate(client, base, c, cookie, rate, dur)
		stopRSS()
		live, gcs := liveHeap(gcLog.Name(), from)
		fmt.Printf("| %s | %d | %.0f | %s | %s | %s | %d | %d MB | %d MB | %d |\n", c.name, r.sent, r.achieved, ms(r.p50), ms(r.p99), ms(r.max), r.failed, *peak/1024, live, gcs)
		name, p99, peakMB := c.name, r.p99, float64(*peak)/1024
		targets = append(targets, func() {
			target(name+" p99", float64(p99.Microseconds())/1000, 20, false, " ms")
			target(name+" server RSS", peakMB, 200, false, " MB")
		})
	}
	fmt.Printf("\nserver RSS after the runs: %s (VmRSS), peak %s (VmHWM); load average after: %s\n",
		procStatus(pid, "VmRSS"), procStatus(pid, "VmHWM"), loadAvg())
	fmt.Println()
	for _, t := range targets {
		t()
	}
	return nil
}

func apiGet(client *http.Client, target string, member bool, cookie string) (int, error) {
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Accept", "application/json")
	if member {
		req.Header.Set("Cookie", cookie)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, err
}

// constantRate sends rate requests a second for dur, each at its own due
// time whatever happened to the ones before, and times each from its due
// time to the end of its response.
func constantRate(client *http.Client, base string, c apiCall, cookie string, rate int, dur time.Duration) apiResult {
	n := int(float64(rate) * dur.Seconds())
	interval := time.Second / time.Duration(rate)
	lat := make([]time.Duration, n)
	failed := make([]bool, n)
	var wg sync.WaitGroup
	start := time.Now().Add(10 * time.Millisecond)
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(i int, due time.Time) {
			defer wg.Done()
			status, err := apiGet(client, base+c.urls[i%len(c.urls)], c.member, cookie)
			lat[i] = time.Since(due)
			failed[i] = err != nil || status != http.StatusOK
		}(i, due)
	}
	wg.Wait()
	elapsed := time.Since(start)
	r := apiResult{sent: n, achieved: float64(n) / elapsed.Seconds()}
	for _, f := range failed {
		if f {
			r.failed++
		}
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	r.p50, r.p99, r.max = lat[n/2], lat[n*99/100], lat[n-1]
	return r
}

// watchRSS samples the server's VmRSS every 50 ms until stopped; peak is in
// kB. VmHWM alone would carry the seeding-time peak of earlier phases.
func watchRSS(pid int) (func(), *int) {
	peak := new(int)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := procStatusKB(pid, "VmRSS"); kb > *peak {
				*peak = kb
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }, peak
}

func procStatusKB(pid int, field string) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return kb
		}
	}
	return 0
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// gcLine is one line of GODEBUG=gctrace=1: "... 40->45->20 MB, 50 MB goal
// ..."; the third figure is the heap left live after the collection.
var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// liveHeap reads the trace from offset from: the largest live heap after a
// collection (MB) and how many collections ran.
func liveHeap(name string, from int64) (maxLive, collections int) {
	b, err := os.ReadFile(name)
	if err != nil || int64(len(b)) < from {
		return 0, 0
	}
	for _, m := range gcLine.FindAllSubmatch(b[from:], -1) {
		collections++
		if v, _ := strconv.Atoi(string(m[3])); v > maxLive {
			maxLive = v
		}
	}
	return maxLive, collections
}

func procStatus(pid int, field string) string {
	return fmt.Sprintf("%d MB", procStatusKB(pid, field)/1024)
}

// settle writes out what the seeding left dirty (PostgreSQL's buffers,
// then the kernel's page cache) before anything is timed: otherwise the
// first call measured shared the disk and a core with hundreds of MB of
// writeback (a feed p99 of 216 ms, max 801 ms, in one run whose p50 was
// 2.2 ms). CHECKPOINT needs a superuser; without one only the sync runs.
func settle(ctx context.Context, db *bun.DB) {
	if _, err := db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		fmt.Fprintln(os.Stderr, "bench: CHECKPOINT before the API runs:", err)
	}
	syscall.Sync()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

func waitForURL(u string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		res, err := http.Get(u)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(res.Status)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// machineBusy answers the machine's busy and total CPU time so far, in
// clock ticks (/proc/stat's first line: everything but idle and iowait is
// busy).
func machineBusy() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseInt(f, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

// cpuByCommand answers the CPU time (user and system clock ticks) every
// process has used so far, summed by command name.
func cpuByCommand() map[string]int64 {
	out := map[string]int64{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime stime: fields 14 and 15.
		open, end := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(b[end+1:]))
		if len(fields) < 13 {
			continue
		}
		user, _ := strconv.ParseInt(fields[11], 10, 64)
		sys, _ := strconv.ParseInt(fields[12], 10, 64)
		out[string(b[open+1:end])] += user + sys
	}
	return out
}
