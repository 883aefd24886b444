package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A visitor's request the chain has answered from the cache is answered
// before the router from then on, with the same status, headers and bytes,
// the same access line and metrics; anything it cannot answer exactly as
// the chain would (a cookie, another method, a path or query it has not
// seen, a new version, a render due) goes through the chain.
func TestVisitorHitsBeforeTheRouter(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	logs := jsonLogs(ts)
	ctx := context.Background()
	request := func(method, target string, headers map[string]string) *http.Request {
		req := newRequest(method, target, nil)
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Accept-Encoding", "gzip")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		return req
	}
	// fast answers req before the router, if it can.
	fast := func(req *http.Request) (*httptest.ResponseRecorder, bool) {
		rec := httptest.NewRecorder()
		return rec, ts.answerVisitorHit(rec, req)
	}
	// A miss, then a hit through the chain, which teaches the path.
	for _, want := range []string{"miss", "hit"} {
		if rec := serveLocal(ts, request("GET", "/apps/demo", nil)); rec.Code != 200 || rec.Header().Get("X-Page-Cache") != want {
			t.Fatalf("through the chain: %d %s, want 200 %s", rec.Code, rec.Header().Get("X-Page-Cache"), want)
		}
	}
	got, ok := fast(request("GET", "/apps/demo", nil))
	if !ok {
		t.Fatal("a visitor's hit on a page the chain answered from the cache was not answered before the router")
	}
	chain := httptest.NewRecorder()
	ts.main.ServeHTTP(chain, request("GET", "/apps/demo", nil))
	if got.Code != chain.Code || got.Body.String() != chain.Body.String() {
		t.Fatalf("before the router %d (%d bytes), through the chain %d (%d bytes)", got.Code, got.Body.Len(), chain.Code, chain.Body.Len())
	}
	for k := range chain.Header() {
		if k == "X-Request-Id" {
			continue
		}
		if got.Header().Get(k) != chain.Header().Get(k) {
			t.Errorf("header %s: %q before the router, %q through the chain", k, got.Header().Get(k), chain.Header().Get(k))
		}
	}
	if len(got.Header()) != len(chain.Header()) {
		t.Errorf("headers before the router %v, through the chain %v", got.Header(), chain.Header())
	}
	id := got.Header().Get("X-Request-Id")
	if len(id) < 8 || id == chain.Header().Get("X-Request-Id") {
		t.Errorf("request id %q (the chain's %q)", id, chain.Header().Get("X-Request-Id"))
	}
	var line map[string]any
	for _, l := range logs() {
		if l["msg"] == "request" && l["request_id"] == id {
			line = l
		}
	}
	if line == nil || line["route"] != "/apps/:app" || line["status"] != float64(200) || line["path"] != "/apps/demo" ||
		line["client"] != "127.0.0.1" || line["bytes"] != float64(got.Body.Len()) {
		t.Errorf("access line of the hit: %v", line)
	}
	series := `marquee_http_requests_total{method="GET",route="/apps/:app",site="main",status="200"}`
	before := scrape(t, ts, series)
	hitsBefore := scrape(t, ts, `marquee_page_cache_requests_total{result="hit"}`)
	if _, ok := fast(request("GET", "/apps/demo", nil)); !ok {
		t.Fatal("second hit not answered before the router")
	}
	if n := scrape(t, ts, series); n != before+1 {
		t.Errorf("requests counted %v -> %v, want one more", before, n)
	}
	if n := scrape(t, ts, `marquee_page_cache_requests_total{result="hit"}`); n != hitsBefore+1 {
		t.Errorf("hits counted %v -> %v, want one more", hitsBefore, n)
	}

	// What the client holds: 304, and HEAD is answered like GET.
	if rec, ok := fast(request("GET", "/apps/demo", map[string]string{"If-None-Match": got.Header().Get("ETag")})); !ok || rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match: answered %v, %d with %d bytes, want 304", ok, rec.Code, rec.Body.Len())
	}
	if rec, ok := fast(request("HEAD", "/apps/demo", nil)); !ok || rec.Code != 200 {
		t.Errorf("HEAD: answered %v, %d", ok, rec.Code)
	}

	// Left to the chain.
	for name, req := range map[string]*http.Request{
		"a session cookie":                request("GET", "/apps/demo", map[string]string{"Cookie": sessionCookie + "=" + sessionFor(t, ts, "follower@demo.test")}),
		"a browser that has just written": request("GET", "/apps/demo", map[string]string{"Cookie": freshCookie + "=1"}),
		"POST":                            request("POST", "/apps/demo", nil),
		"a query not seen":                request("GET", "/apps/demo?tab=events", nil),
		"a trailing slash":                request("GET", "/apps/demo/", nil),
		"an escaped path":                 request("GET", "/apps/d%65mo", nil),
		"a path not seen":                 request("GET", "/apps/demo/community", nil),
	} {
		if rec, ok := fast(req); ok || rec.Body.Len() != 0 || len(rec.Header()) != 0 {
			t.Errorf("%s: answered before the router (%d, %d bytes)", name, rec.Code, rec.Body.Len())
		}
	}

	// A page that is no longer current: a like is shown by the chain
	// (stale, then one render), a new version on the very next request.
	appID, err := ts.store.AppIDOf(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	ts.store.NoteEngagement(ctx, appID)
	ts.pages.staleFor = time.Hour // within the bound
	if rec, ok := fast(request("GET", "/apps/demo", nil)); !ok || rec.Header().Get("X-Page-Cache") != "stale" {
		t.Errorf("a page with older counts within the staleness bound: answered %v, %q, want stale", ok, rec.Header().Get("X-Page-Cache"))
	}
	ts.pages.staleFor = 0 // past it: the chain renders
	if _, ok := fast(request("GET", "/apps/demo", nil)); ok {
		t.Error("a page with older counts past the staleness bound was answered before the router")
	}
	if rec := serveLocal(ts, request("GET", "/apps/demo", nil)); rec.Header().Get("X-Page-Cache") != "refresh" {
		t.Errorf("past the bound the chain answered %q, want a refresh", rec.Header().Get("X-Page-Cache"))
	}
	ts.store.InvalidateApp(ctx, appID)
	if _, ok := fast(request("GET", "/apps/demo", nil)); ok {
		t.Error("a page of an older version was answered before the router")
	}
	if rec := serveLocal(ts, request("GET", "/apps/demo", nil)); rec.Header().Get("X-Page-Cache") != "miss" {
		t.Errorf("after a new version the chain answered %q, want a miss", rec.Header().Get("X-Page-Cache"))
	}
	ts.store.InvalidateAllApps(ctx)
	if _, ok := fast(request("GET", "/apps/demo", nil)); ok {
		t.Error("a page of an older global version was answered before the router")
	}
}
