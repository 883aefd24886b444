package server

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

func sizedPage(size int) *cachedPage {
	return &cachedPage{size: size, expires: time.Now().Add(time.Hour)}
}

func keysOf(slots []*pageSlot) []string {
	var out []string
	for _, s := range slots {
		out = append(out, s.key)
	}
	return out
}

// The page cache evicts by use and size, not at random: pages read again
// outlive a crawler's scan of pages read once, the scan's pages go in the
// order they came, the bytes never pass the budget, a page that was
// evicted and is wanted again soon comes back to stay, and one larger than
// the whole budget is not kept.
func TestPageCacheEvictsByUseAndSize(t *testing.T) {
	t.Parallel()
	e := newPageEntries(1000) // ten pages of 100 bytes
	for i := 0; i < 4; i++ {
		hot := fmt.Sprintf("hot%d", i)
		e.put(hot, sizedPage(100))
		e.get(hot) // visitors read these again
	}
	var evicted []string
	for i := 0; i < 50; i++ {
		evicted = append(evicted, keysOf(e.put(fmt.Sprintf("scan%d", i), sizedPage(100)))...)
		if e.bytes > e.limit {
			t.Fatalf("after scan%d: %d bytes held, budget %d", i, e.bytes, e.limit)
		}
	}
	for i := 0; i < 4; i++ {
		if e.peek(fmt.Sprintf("hot%d", i)) == nil {
			t.Errorf("hot%d, read twice, was pushed out by a scan of pages read once", i)
		}
	}
	var want []string
	for i := 0; i < 44; i++ {
		want = append(want, fmt.Sprintf("scan%d", i))
	}
	if !slices.Equal(evicted, want) {
		t.Errorf("evicted %v, want the scan's first 44 in order", evicted)
	}

	// scan0 was evicted unread: asked for again, it comes back into the
	// main queue and outlives the next scan.
	e.put("scan0", sizedPage(100))
	for i := 0; i < 30; i++ {
		e.put(fmt.Sprintf("again%d", i), sizedPage(100))
	}
	if e.peek("scan0") == nil {
		t.Error("a page evicted and wanted again soon was not kept (no ghost)")
	}

	// Size counts: a 450-byte page pushes out four or five small ones, one
	// larger than the budget is refused, and the bytes stay in bounds.
	before := e.len()
	out := e.put("big", sizedPage(450))
	if e.peek("big") == nil || len(out) < 4 || e.bytes > e.limit || e.len() > before-3 {
		t.Errorf("a 450-byte page: kept=%v, evicted %v, %d bytes, %d entries (from %d)", e.peek("big") != nil, keysOf(out), e.bytes, e.len(), before)
	}
	if out := e.put("huge", sizedPage(1001)); e.peek("huge") != nil || len(out) != 1 || out[0].key != "huge" {
		t.Errorf("a page larger than the budget was kept (evicted %v)", keysOf(out))
	}
}

// Landing data and members' classes are bounded however many apps and
// members there are.
func TestPageCacheMemosAreBounded(t *testing.T) {
	t.Parallel()
	pc := newPageCache(0, nil)
	for i := 0; i < memberClassKept+500; i++ {
		pc.rememberClass(fmt.Sprintf("app\x00user%d\x001.1\x000", i), "member|FOLLOWER")
	}
	for i := 0; i < appViewsKept+50; i++ {
		pc.views.Add(fmt.Sprintf("app%d", i), appViewEntry{version: "1"})
	}
	if pc.classes.Len() > memberClassKept || pc.views.Len() > appViewsKept {
		t.Errorf("memos hold %d classes and %d views, bounds %d and %d", pc.classes.Len(), pc.views.Len(), memberClassKept, appViewsKept)
	}
	if _, ok := pc.classes.Get(fmt.Sprintf("app\x00user%d\x001.1\x000", memberClassKept+499)); !ok {
		t.Error("the latest member class was not kept")
	}
}

// Without Redis, a page the memory evicted comes back from disk: reading
// other pages does not make it render again. Only compressed bytes are
// kept, and a client that takes no encoding still gets the page.
func TestEvictedPageComesBackFromDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := newTestServerWith(t, demoSQLite(t), func(c *Config) { c.PageCacheDiskMB, c.PageCacheDir = 8, dir })
	gz := map[string]string{"Accept-Encoding": "gzip"}
	first := ts.do(t, "GET", "/apps/demo", nil, gz)
	if first.Status != 200 || first.Header.Get("X-Page-Cache") != "miss" {
		t.Fatalf("first visit: %d %q", first.Status, first.Header.Get("X-Page-Cache"))
	}
	// Room for about one page: the next pages push the landing out.
	ts.pages.mu.Lock()
	ts.pages.entries.limit = ts.pages.entries.bytes + 1000
	ts.pages.mu.Unlock()
	ts.visit(t, "/apps/demo/community", "miss")
	ts.visit(t, "/apps/demo/store", "miss")
	if ts.pages.disk.size() == 0 {
		t.Fatal("nothing was spilled to disk")
	}
	rendered := renders(ts)
	again := ts.do(t, "GET", "/apps/demo", nil, gz)
	if again.Status != 200 || again.Body != first.Body || again.Header.Get("Etag") != first.Header.Get("Etag") {
		t.Fatalf("from disk: %d, same bytes %v, etag %q vs %q", again.Status, again.Body == first.Body, again.Header.Get("Etag"), first.Header.Get("Etag"))
	}
	if n := renders(ts); n != rendered {
		t.Errorf("the evicted landing rendered again (%d renders, want %d): the disk tier was not read", n, rendered)
	}
	plain := ts.do(t, "GET", "/apps/demo", nil, nil)
	if plain.Status != 200 || plain.Body != gunzip(t, first.Body) || plain.Header.Get("Content-Length") != fmt.Sprint(len(plain.Body)) {
		t.Errorf("no encoding: %d, %d bytes, Content-Length %s", plain.Status, len(plain.Body), plain.Header.Get("Content-Length"))
	}
}

// Past PageTTL a page of the current version is served stale while one
// request renews it (stale while revalidate): fifty visitors at once cause
// one render, or one rewrite of its relative times where that will do
// (http_pagecache_restamp.go), and none waits for it as for a miss.
func TestExpiredPageServedWhileItRendersAgain(t *testing.T) {
	t.Parallel()
	for _, rewritable := range []bool{false, true} {
		t.Run(fmt.Sprintf("rewritable=%v", rewritable), func(t *testing.T) {
			t.Parallel()
			expiredPageBurst(t, rewritable)
		})
	}
}

func expiredPageBurst(t *testing.T, rewritable bool) {
	ts := newTestServer(t, demoSQLite(t))
	ts.visit(t, "/apps/demo", "miss")
	ts.pages.mu.Lock()
	for _, el := range ts.pages.entries.slots {
		p := el.Value.(*pageSlot).page
		if p.clock == nil {
			t.Fatal("the demo's landing (posts days old) is not rewritable")
		}
		p.expires = time.Now().Add(-time.Second)
		if !rewritable {
			p.clock = nil
		}
	}
	ts.pages.mu.Unlock()
	rendered, rewritten := renders(ts), scrape(t, ts, "marquee_page_restamps_total")
	var wg sync.WaitGroup
	var mu sync.Mutex
	states := map[string]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := ts.do(t, http.MethodGet, "/apps/demo", nil, map[string]string{"Accept-Encoding": "gzip"})
			mu.Lock()
			defer mu.Unlock()
			if r.Status != 200 {
				states[fmt.Sprint(r.Status)]++
				return
			}
			states[r.Header.Get("X-Page-Cache")]++
		}()
	}
	wg.Wait()
	wantRenders, wantRewrites := 1.0, 0.0
	if rewritable {
		wantRenders, wantRewrites = 0, 1
	}
	if n, m := float64(renders(ts)-rendered), scrape(t, ts, "marquee_page_restamps_total")-rewritten; n != wantRenders || m != wantRewrites {
		t.Errorf("%v renders and %v rewrites for fifty visitors of an expired page, want %v and %v", n, m, wantRenders, wantRewrites)
	}
	if states["refresh"] != 1 || states["stale"]+states["hit"]+states["refresh"] != 50 {
		t.Errorf("answers %v: want one refresh, the others stale (or hits once it rendered), no miss", states)
	}
}

// Whatever the mix of puts, reads, replacements and removals, of pages of
// any size, the entries never hold more bytes than the budget, the
// accounting matches what is held, and the ghosts (keys only) stay bounded
// and apart from the entries.
func TestPageEntriesStayWithinBudget(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(45, 1))
	for _, limit := range []int{1, 1000, 64 << 10} {
		e := newPageEntries(limit)
		for op := 0; op < 20_000; op++ {
			key := fmt.Sprintf("k%d", rng.IntN(400))
			switch r := rng.IntN(10); {
			case r < 5:
				e.put(key, sizedPage(1+rng.IntN(limit/8+200)))
			case r < 9:
				e.get(key)
			default:
				e.remove(key)
			}
			held, small := 0, 0
			for k, el := range e.slots {
				s := el.Value.(*pageSlot)
				if s.key != k {
					t.Fatalf("slot of %q holds %q", k, s.key)
				}
				held += s.page.size
				if !s.inMain {
					small += s.page.size
				}
				if e.ghostIndex[k] != nil {
					t.Fatalf("%q is both held and a ghost", k)
				}
			}
			if e.bytes > limit || held != e.bytes || small != e.smallBytes || e.small.Len()+e.main.Len() != len(e.slots) {
				t.Fatalf("limit %d, op %d: %d bytes counted, %d held (small %d vs %d), queues %d+%d for %d entries",
					limit, op, e.bytes, held, e.smallBytes, small, e.small.Len(), e.main.Len(), len(e.slots))
			}
			if e.ghosts.Len() != len(e.ghostIndex) || e.ghosts.Len() > max(len(e.slots), 64) {
				t.Fatalf("limit %d, op %d: %d ghosts (%d indexed) for %d entries", limit, op, e.ghosts.Len(), len(e.ghostIndex), len(e.slots))
			}
		}
	}
}

// A page's key names everything that makes its bytes someone's: the app,
// the host (a custom domain's pages apart from the main site's), the
// content version, the build, the path, the query and the viewer class.
// Keys differing in any one of them are different entries in memory and on
// disk, each answering its own bytes; and the key without its version
// (what a visitor gets while the database is down) keeps every other part.
func TestPageKeysKeepViewersApart(t *testing.T) {
	t.Parallel()
	base := [6]string{"app1", "1.1", "build", "/apps/one", "", "visitor"}
	variants := [][6]string{base}
	for part, other := range [6]string{"app2", "1.2", "build2", "//one.example/", "page=2", "member|FOLLOWER|false|{}|0"} {
		v := base
		v[part] = other
		variants = append(variants, v)
	}
	// Parts are NUL-separated: moving text from one part to the next is
	// another key too.
	variants = append(variants, [6]string{"app1", "1.1", "build", "/apps/one", "visitor", ""})
	keys, stables := map[string]int{}, map[string]int{}
	for i, v := range variants {
		k := string(appendPageKey(nil, v[0], v[1], v[2], v[3], v[4], v[5]))
		if j, ok := keys[k]; ok {
			t.Fatalf("variants %v and %v share the key %q", variants[j], v, k)
		}
		keys[k] = i
		stable, ok := unversionedKey(k)
		if j, seen := stables[stable]; !ok || seen && !(i == 2 && j == 0) {
			t.Errorf("variant %v: unversioned key %q (ok %v) shared with %v", v, stable, ok, variants[j])
		}
		stables[stable] = i
	}
	if len(stables) != len(variants)-1 {
		t.Errorf("%d unversioned keys for %d variants, two differing only in version", len(stables), len(variants))
	}
	disk := newDiskPages(t.TempDir(), "", 8, slog.New(slog.DiscardHandler))
	defer disk.close()
	e := newPageEntries(1 << 20)
	for k, i := range keys {
		p := cachedPageOf(200, http.Header{}, fmt.Sprintf("etag%d", i), 10, []byte(fmt.Sprintf("gz%d", i)), []byte(fmt.Sprintf("br%d", i)))
		e.put(k, p)
		disk.store(k, p)
	}
	for k, i := range keys {
		want := fmt.Sprintf("gz%d", i)
		if p := e.get(k); p == nil || string(p.gz) != want {
			t.Errorf("memory: %q answered another page's bytes", k)
		}
		if p := disk.load(k); p == nil || string(p.gz) != want || p.etag != fmt.Sprintf("etag%d", i) {
			t.Errorf("disk: %q answered another page's bytes", k)
		}
	}
}
