package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"marquee/store"
	"marquee/store/storetest"
)

// jsonLogs gives the server a JSON logger at debug level writing to a
// buffer, and answers the lines logged so far.
func jsonLogs(ts *testServer) func() []map[string]any {
	buf := &lockedBuffer{}
	ts.logger = WithRequestLogger(slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return func() []map[string]any {
		var lines []map[string]any
		sc := bufio.NewScanner(strings.NewReader(buf.String()))
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines = append(lines, m)
			}
		}
		return lines
	}
}

func serveLocal(ts *testServer, req *http.Request) *httptest.ResponseRecorder {
	req.RemoteAddr = "127.0.0.1:40000"
	rec := httptest.NewRecorder()
	ts.Main().ServeHTTP(rec, req)
	return rec
}

// Every request gets an id (the proxy's, when it sends a sane one),
// answered in X-Request-ID, and one access log line with the method, the
// route, the status, the duration and the bytes; lines logged for the
// request carry the same id.
func TestAccessLogCarriesRequestID(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	logs := jsonLogs(ts)
	rec := serveLocal(ts, newRequest("GET", "/apps/demo", nil))
	id := rec.Header().Get("X-Request-ID")
	if rec.Code != 200 || len(id) < 8 {
		t.Fatalf("GET /apps/demo: %d, X-Request-ID %q", rec.Code, id)
	}
	req := newRequest("GET", "/api/app/demo/landing", nil)
	req.Header.Set("X-Request-ID", "from-nginx-0123456789")
	if got := serveLocal(ts, req).Header().Get("X-Request-ID"); got != "from-nginx-0123456789" {
		t.Errorf("the proxy's request id was not kept: %q", got)
	}
	bad := newRequest("GET", "/api/app/demo/landing", nil)
	bad.Header.Set("X-Request-ID", "evil\nline")
	if got := serveLocal(ts, bad).Header().Get("X-Request-ID"); got == "evil\nline" || got == "" {
		t.Errorf("a malformed request id was kept: %q", got)
	}
	found := map[string]map[string]any{}
	for _, l := range logs() {
		if l["msg"] == "request" {
			found[fmt.Sprint(l["request_id"])] = l
		}
	}
	page, api := found[id], found["from-nginx-0123456789"]
	if page == nil || api == nil {
		t.Fatalf("no access line for the requests: %v", found)
	}
	if page["method"] != "GET" || page["route"] != "/apps/:app" || page["status"] != float64(200) ||
		page["bytes"].(float64) <= 0 || page["duration_ms"] == nil || page["site"] != "main" {
		t.Errorf("access line: %v", page)
	}
	if api["route"] != "/api/app/:appId/landing" {
		t.Errorf("api access line: %v", api)
	}
}

// A browser that abandons a request (a closed tab: the request's context
// ends) is not a server error: no ERROR line, and the access log and the
// metrics say 499.
func TestAbandonedRequestIsNotAnError(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	logs := jsonLogs(ts)
	ctx, cancel := context.WithCancel(context.Background())
	ts.main.GET("/test/abandoned", func(c echo.Context) error {
		cancel() // the browser goes away while the database works
		<-c.Request().Context().Done()
		return fmt.Errorf("load feed: %w", c.Request().Context().Err())
	})
	serveLocal(ts, newRequest("GET", "/test/abandoned", nil).WithContext(ctx))
	var access map[string]any
	for _, l := range logs() {
		if l["level"] == "ERROR" {
			t.Errorf("abandoned request logged as an error: %v", l)
		}
		if l["msg"] == "request" && l["route"] == "/test/abandoned" {
			access = l
		}
	}
	if access == nil || access["status"] != float64(statusClientClosed) {
		t.Errorf("access line: %v", access)
	}
	if n := scrape(t, ts, `marquee_http_requests_total{method="GET",route="/test/abandoned",site="main",status="499"}`); n != 1 {
		t.Errorf("abandoned requests counted as 499: %v", n)
	}
}

var metricLine = regexp.MustCompile(`^(\S+) (\S+)$`)

// scrape answers the value of one series of /metrics (-1 when absent).
func scrape(t *testing.T, ts *testServer, series string) float64 {
	t.Helper()
	rec := serveLocal(ts, newRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if m := metricLine.FindStringSubmatch(line); m != nil && m[1] == series {
			v, _ := strconv.ParseFloat(m[2], 64)
			return v
		}
	}
	return -1
}

// /metrics counts requests by route and status, the page cache's hits and
// misses, render times, the database pool, the job queue and payments; it
// answers a scraper on the machine (or one with METRICS_TOKEN) only.
func TestMetricsCountWhatHappened(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	startJobs(t, ts, db)
	for i := 0; i < 3; i++ {
		serveLocal(ts, newRequest("GET", "/apps/demo", nil))
	}
	serveLocal(ts, newRequest("GET", "/api/no-such-call", nil))
	buyer := commUser(t, ts, "member@demo.test")
	r := ts.do(t, "POST", "/api/donations/process", body(map[string]any{"donationId": "nope"}), buyer)
	if r.Status < 400 {
		t.Fatalf("donation of nothing: %d", r.Status)
	}
	for series, atLeast := range map[string]float64{
		`marquee_http_requests_total{method="GET",route="/apps/:app",site="main",status="200"}`:   3,
		`marquee_http_requests_total{method="GET",route="unmatched",site="main",status="404"}`:    1,
		`marquee_page_cache_requests_total{result="miss"}`:                                        1,
		`marquee_page_cache_requests_total{result="hit"}`:                                         2,
		`marquee_render_duration_seconds_count`:                                                   1,
		`marquee_http_request_duration_seconds_count{class="2xx",route="/apps/:app",site="main"}`: 3,
		`marquee_payment_requests_total{outcome="refused",route="/api/donations/process"}`:        1,
		`go_sql_max_open_connections{db_name="marquee"}`:                                          1,
		`marquee_render_pool_size`:                                                                1,
		`marquee_page_cache_bytes`:                                                                1,
	} {
		if got := scrape(t, ts, series); got < atLeast {
			t.Errorf("%s = %v, want at least %v", series, got, atLeast)
		}
	}
	// The job queue is read at scrape time: a job waiting shows its kind.
	if _, err := db.ExecContext(context.Background(), `INSERT INTO river_job (args, kind, max_attempts, priority, queue, state, scheduled_at)
		VALUES ('{}', 'metrics_probe', 1, 1, 'default', 'scheduled', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	if got := scrape(t, ts, `marquee_jobs{kind="metrics_probe",state="scheduled"}`); got != 1 {
		t.Errorf("queued job not in metrics: %v", got)
	}

	// Not for the world: a request through a proxy or from elsewhere is 404,
	// and with METRICS_TOKEN the token is asked for.
	far := newRequest("GET", "/metrics", nil)
	far.RemoteAddr = "203.0.113.9:5000"
	rec := httptest.NewRecorder()
	ts.Main().ServeHTTP(rec, far)
	if rec.Code != 404 {
		t.Errorf("/metrics from afar: %d", rec.Code)
	}
	proxied := newRequest("GET", "/metrics", nil)
	proxied.Header.Set("X-Forwarded-For", "203.0.113.9")
	if rec := serveLocal(ts, proxied); rec.Code != 404 {
		t.Errorf("/metrics through a local proxy: %d", rec.Code)
	}
	ts.cfg.MetricsToken = "scrape-me"
	if rec := serveLocal(ts, newRequest("GET", "/metrics", nil)); rec.Code != 401 {
		t.Errorf("/metrics without the token: %d", rec.Code)
	}
	withToken := newRequest("GET", "/metrics", nil)
	withToken.Header.Set("Authorization", "Bearer scrape-me")
	withToken.RemoteAddr = "203.0.113.9:5000"
	rec = httptest.NewRecorder()
	ts.Main().ServeHTTP(rec, withToken)
	if b, _ := io.ReadAll(rec.Body); rec.Code != 200 || !strings.Contains(string(b), "marquee_http_requests_total") {
		t.Errorf("/metrics with the token: %d", rec.Code)
	}
}

// /readyz reports each dependency beside /healthz: the database, Redis and
// the object store.
func TestReadinessReportsDependencies(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	var got map[string]string
	r := ts.do(t, "GET", "/readyz", nil, nil)
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil || r.Status != 200 {
		t.Fatalf("/readyz: %d %s", r.Status, r.Body)
	}
	if got["status"] != "ok" || got["database"] != "ok" || got["redis"] != "off" || got["objectStore"] != "ok" {
		t.Errorf("/readyz: %v", got)
	}
	client, proxy := storetest.RedisBehindProxy(t)
	withRedis := newTestServerStore(t, demoDB(t), nil, func(o *store.Options) { o.Redis = client })
	proxy.Cut()
	r = withRedis.do(t, "GET", "/readyz", nil, nil)
	got = nil
	_ = json.Unmarshal([]byte(r.Body), &got)
	if r.Status != 200 || got["status"] != "degraded" || got["redis"] != "down" {
		t.Errorf("/readyz with Redis down: %d %v", r.Status, got)
	}
	proxy.Resume(t)
	ts.files.Dir = t.TempDir() + "/gone"
	r = ts.do(t, "GET", "/readyz", nil, nil)
	got = nil
	_ = json.Unmarshal([]byte(r.Body), &got)
	if r.Status != 503 || got["objectStore"] != "down" || got["database"] != "ok" {
		t.Errorf("/readyz with the media store gone: %d %v", r.Status, got)
	}
}
