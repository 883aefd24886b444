package server

import (
	"compress/gzip"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"marquee/render"
	"marquee/store"
	"marquee/store/storetest"
)

// Two instances of one deployment (one database, one Redis) render a page
// once between them: the first renders and shares it, the other takes its
// bytes, after a like as after a new post, and however many visitors
// arrive at both at once.
func TestInstancesShareRenders(t *testing.T) {
	ctx := context.Background()
	db := demoDB(t)
	var two [2]*testServer
	deployment := oneRedis(t)
	for i := range two {
		two[i] = newTestServerStore(t, db, nil, deployment)
		// No staleness: every newer engagement needs a page rendered at it.
		two[i].pages.staleFor = 0
	}
	watchEachOther(t, two[:]...)
	a, b := two[0], two[1]
	demo, err := a.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	// waitForVersion waits until both instances know the app's versions
	// that a bump moved to (the announcement travels asynchronously).
	waitForVersion := func() {
		t.Helper()
		want, err := a.pageVersion(ctx, demo.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			got, err := b.pageVersion(ctx, demo.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("instance b knows %+v, a %+v", got, want)
			}
		}
	}

	first := a.visit(t, "/apps/demo", "miss")
	if second := b.visit(t, "/apps/demo", "miss"); second != first {
		t.Error("the second instance answered other bytes than the first rendered")
	}
	assertCounts(t, "first visits", a, b, 1, 0, map[string]float64{"a shared": 1, "b taken": 1})

	// A like: the engagement moves; whichever instance is asked first
	// renders, the other takes its page.
	a.store.NoteEngagement(ctx, demo.ID)
	waitForVersion()
	b.visit(t, "/apps/demo", "refresh")
	a.visit(t, "/apps/demo", "refresh")
	assertCounts(t, "after a like", a, b, 1, 1, map[string]float64{"b shared": 1, "a taken": 1})

	// A new post: forty visitors at once, twenty on each instance; one
	// render in all, and every one of them gets its bytes.
	a.store.InvalidateApp(ctx, demo.ID)
	waitForVersion()
	var wg sync.WaitGroup
	bodies := make([]string, 40)
	statuses := make([]int, 40)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := two[i%2].do(t, "GET", "/apps/demo", nil, nil)
			statuses[i], bodies[i] = r.Status, r.Body
		}()
	}
	wg.Wait()
	for i := range bodies {
		if statuses[i] != http.StatusOK || bodies[i] != bodies[0] {
			t.Fatalf("visitor %d: status %d, same page as visitor 0: %v", i, statuses[i], bodies[i] == bodies[0])
		}
	}
	if got := renders(a) + renders(b); got != 3 {
		t.Errorf("forty visitors of a new version on two instances: %d renders in all, want 1", got-2)
	}
}

// oneRedis answers the store options of one deployment's instances: one
// Redis and namespace (its keys removed when the test ends).
func oneRedis(t *testing.T) func(*store.Options) {
	t.Helper()
	rdb := storetest.Redis(t)
	ns := "test:" + store.NewID()
	t.Cleanup(func() {
		if keys, _ := rdb.Keys(context.Background(), "marquee:"+ns+":*").Result(); len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	return func(o *store.Options) { o.Redis, o.Namespace = rdb, ns }
}

// watchEachOther has each of servers, instances of one deployment
// (oneRedis), watch the others' page version announcements until the test
// ends.
func watchEachOther(t *testing.T, servers ...*testServer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, ts := range servers {
		go ts.WatchPageVersions(ctx)
	}
	for _, ts := range servers {
		for deadline := time.Now().Add(time.Minute); !ts.store.PageVersionsLive(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("never subscribed")
			}
		}
	}
}

func assertCounts(t *testing.T, when string, a, b *testServer, rendersA, rendersB uint64, shared map[string]float64) {
	t.Helper()
	if ra, rb := renders(a), renders(b); ra != rendersA || rb != rendersB {
		t.Errorf("%s: renders a %d, b %d; want %d and %d", when, ra, rb, rendersA, rendersB)
	}
	for name, want := range shared {
		ts := a
		if name[0] == 'b' {
			ts = b
		}
		var m dto.Metric
		if err := ts.metrics.shared.WithLabelValues(name[2:]).Write(&m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetCounter().GetValue(); got != want {
			t.Errorf("%s: marquee_shared_pages_total{result=%q} on %c = %v, want %v", when, name[2:], name[0], got, want)
		}
	}
}

// renders is how many pages a server rendered (its render histogram).
func renders(ts *testServer) uint64 {
	var m dto.Metric
	if err := ts.metrics.renders.Write(&m); err != nil {
		panic(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// A page shared with a clock stays in Redis past its expiry until a render
// is due: an instance that finds it expired takes it with its relative
// times rewritten as of now (and shares that) instead of rendering it.
// Past the clock's bound it is not kept.
func TestSharedPageKeptForItsClock(t *testing.T) {
	t.Parallel()
	ts := newTestServerStore(t, demoSQLite(t), nil, oneRedis(t))
	ctx := context.Background()
	now := time.Now().UTC()
	ts.now = func() time.Time { return now }
	was := now.Add(-7 * time.Minute)
	posted := was.Add(-30 * time.Second)
	doc := func(text string, at time.Time) []byte {
		return []byte(`<p><time dateTime="` + render.PropsTime(posted) + `" data-ago="">` + text + `</time></p>` +
			`<marquee-island data-props="{&quot;now&quot;:&quot;` + render.PropsTime(at) + `&quot;}"></marquee-island>`)
	}
	page := func(until time.Time) *cachedPage {
		body := doc("just now", was)
		p := cachedPageOf(200, http.Header{"Content-Type": {"text/html; charset=UTF-8"}}, `"etag"`, len(body),
			gzipBytes(body, gzip.BestCompression), brotliBytes(body, brotliPageWindow))
		p.rendered, p.expires = was, was.Add(time.Minute)
		p.clock = &pageClock{now: was, ago: 1, until: until}
		return p
	}

	ts.sharePage(ctx, "kept", page(now.Add(time.Hour)))
	got, release, done := ts.fromPeers(ctx, "kept", 0, nil, false)
	if release != nil {
		release()
	}
	if !done || got == nil {
		t.Fatal("a page past its expiry but not its clock's bound was not taken from Redis")
	}
	if got.expired(time.Now()) {
		t.Errorf("taken as it was: expires %v", got.expires)
	}
	if body, want := string(got.identity()), string(doc("7m ago", now)); body != want {
		t.Errorf("taken without its relative times rewritten:\n%s\nwant\n%s", body, want)
	}
	if sp, err := ts.store.SharedPage(ctx, "kept"); err != nil || sp == nil || !sp.ClockNow.After(was) {
		t.Errorf("the rewritten page was not shared again: %+v %v", sp, err)
	}

	ts.sharePage(ctx, "gone", page(now.Add(-time.Second)))
	if sp, err := ts.store.SharedPage(ctx, "gone"); err != nil || sp != nil {
		t.Errorf("a page past its clock's bound was kept: %+v %v", sp, err)
	}
}
