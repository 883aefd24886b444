package server

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/redis/go-redis/v9"

	"marquee/store"
	"marquee/store/storetest"
)

func gunzip(t *testing.T, s string) string {
	t.Helper()
	r, err := gzip.NewReader(strings.NewReader(s))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return string(b)
}

func unbrotli(t *testing.T, s string) string {
	t.Helper()
	b, err := io.ReadAll(brotli.NewReader(strings.NewReader(s)))
	if err != nil {
		t.Fatalf("brotli: %v", err)
	}
	return string(b)
}

// visit GETs a page as a visitor and checks the cache answered as wanted.
func (ts *testServer) visit(t *testing.T, path, wantCache string) string {
	t.Helper()
	r := ts.do(t, "GET", path, nil, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d", path, r.Status)
	}
	if wantCache != "" && r.Header.Get("X-Page-Cache") != wantCache {
		t.Fatalf("GET %s: X-Page-Cache %q, want %q", path, r.Header.Get("X-Page-Cache"), wantCache)
	}
	return r.Body
}

func TestPageCacheEncodingsETagAndVary(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	gz := map[string]string{"Accept-Encoding": "gzip, deflate"}
	first := ts.do(t, "GET", "/apps/demo", nil, gz)
	if first.Status != 200 || first.Header.Get("X-Page-Cache") != "miss" || first.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("first visit: %d cache=%q encoding=%q", first.Status, first.Header.Get("X-Page-Cache"), first.Header.Get("Content-Encoding"))
	}
	html := gunzip(t, first.Body)
	if !strings.Contains(html, "<html") || !strings.Contains(html, "Demo") {
		t.Fatalf("gzip body is not the landing page: %.200s", html)
	}
	second := ts.do(t, "GET", "/apps/demo", nil, gz)
	if second.Header.Get("X-Page-Cache") != "hit" || second.Body != first.Body {
		t.Fatalf("second visit: cache=%q, same bytes=%v", second.Header.Get("X-Page-Cache"), second.Body == first.Body)
	}
	for _, want := range []string{"Accept-Encoding", "Cookie"} {
		if !strings.Contains(second.Header.Get("Vary"), want) {
			t.Errorf("Vary %q lacks %s", second.Header.Get("Vary"), want)
		}
	}
	if second.Header.Get("Content-Type") != "text/html; charset=UTF-8" || second.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("headers lost on a hit: %v", second.Header)
	}
	etag := second.Header.Get("ETag")
	if etag == "" || second.Header.Get("Content-Length") == "" {
		t.Fatalf("no ETag or length: %v", second.Header)
	}

	br := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	if br.Header.Get("Content-Encoding") != "br" || unbrotli(t, br.Body) != html || len(br.Body) >= len(first.Body) {
		t.Errorf("brotli: encoding %q, same page %v, %d bytes vs gzip %d", br.Header.Get("Content-Encoding"),
			unbrotli(t, br.Body) == html, len(br.Body), len(first.Body))
	}
	for _, ae := range []string{"", "identity", "gzip;q=0, br;q=0"} {
		plain := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"Accept-Encoding": ae})
		if plain.Header.Get("Content-Encoding") != "" || plain.Body != html {
			t.Errorf("Accept-Encoding %q: got encoding %q", ae, plain.Header.Get("Content-Encoding"))
		}
	}

	notModified := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": etag})
	if notModified.Status != 304 || notModified.Body != "" || notModified.Header.Get("ETag") != etag {
		t.Errorf("revalidation: %d %q etag %q", notModified.Status, notModified.Body, notModified.Header.Get("ETag"))
	}
	// The same bytes in another encoding are the same page.
	if r := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"If-None-Match": etag}); r.Status != 304 {
		t.Errorf("revalidation across encodings: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"If-None-Match": `"other"`}); r.Status != 200 {
		t.Errorf("stale ETag: %d", r.Status)
	}
	// HEAD answers like GET, without a body.
	// HEAD answers like GET (net/http drops the body).
	if r := ts.do(t, "HEAD", "/apps/demo", nil, gz); r.Status != 200 || r.Header.Get("ETag") != etag {
		t.Errorf("HEAD: %d etag %q", r.Status, r.Header.Get("ETag"))
	}
	// Normalised queries share an entry; 404s are never kept.
	ts.visit(t, "/apps/demo/store?a=1&b=2", "miss")
	ts.visit(t, "/apps/demo/store?b=2&a=1&utm_source=x", "hit")
	for i := 0; i < 2; i++ {
		if r := ts.do(t, "GET", "/apps/nope", nil, nil); r.Status != 404 || r.Header.Get("X-Page-Cache") == "hit" {
			t.Errorf("unknown app: %d cache=%q", r.Status, r.Header.Get("X-Page-Cache"))
		}
	}
	// Pages outside the cache keep the general compression.
	if r := ts.do(t, "GET", "/api/app/demo/landing", nil, gz); r.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("API lost gzip: %v", r.Header)
	}
}

var likeCount = regexp.MustCompile(`class="like-count">(\d+)<`)

// Every kind of write shows on the very next visitor request.
func TestPageCacheInvalidationPerWrite(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	ids := commLoad(t, ts)
	creator, follower := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "follower@demo.test")
	warm := func(paths ...string) {
		t.Helper()
		for _, p := range paths {
			ts.visit(t, p, "")
			ts.visit(t, p, "hit")
		}
	}
	expect := func(what, path, text string) {
		t.Helper()
		if body := ts.visit(t, path, "miss"); !strings.Contains(body, text) {
			t.Errorf("%s: %s does not show %q", what, path, text)
		}
	}

	// A post: the landing and the community feed.
	warm("/apps/demo", "/apps/demo/community")
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Fresh from the oven 7781", "type": "POST", "communityId": ids.demoCommunity}), creator)
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	expect("new post", "/apps/demo", "Fresh from the oven 7781")
	expect("new post", "/apps/demo/community", "Fresh from the oven 7781")

	// A like: the post's page prints the count.
	postPage := "/apps/demo/posts/" + created.Data.ID
	warm(postPage)
	if m := likeCount.FindStringSubmatch(ts.visit(t, postPage, "hit")); m == nil || m[1] != "0" {
		t.Fatalf("like count before: %v", m)
	}
	if r := ts.do(t, "POST", "/api/messages/"+created.Data.ID+"/reactions", body(map[string]any{"reaction": "❤️"}), follower); r.Status != 201 && r.Status != 200 {
		t.Fatalf("like: %d %s", r.Status, r.Body)
	}
	// Counts may lag by staleFor (TestEngagementKeepsPagesCached); with no
	// lag the next request renders them.
	ts.pages.staleFor = 0
	if m := likeCount.FindStringSubmatch(ts.visit(t, postPage, "refresh")); m == nil || m[1] != "1" {
		t.Errorf("like count after: %v", m)
	}

	// A comment on the post.
	warm(postPage)
	if r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Crumbs everywhere 5521", "type": "REPLY", "parentMessageId": created.Data.ID}), follower); r.Status != 201 {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	expect("comment", postPage, "Crumbs everywhere 5521")

	// A store item edit: the item's page (visitors see no grid in demo).
	demo, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	shop, err := ts.store.ShopOfApp(ctx, demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	items, err := ts.store.Items(ctx, shop.ID, store.ItemFilter{Page: 1, Limit: 1})
	if err != nil || len(items.Items) == 0 {
		t.Fatalf("items: %v", err)
	}
	it := items.Items[0]
	itemPage := "/apps/demo/store/items/" + it.ID
	warm(itemPage)
	edit, _ := json.Marshal(map[string]any{"name": "Renamed by the cache test", "type": it.Type, "price": it.Price})
	if r := ts.do(t, "PUT", "/api/store/items/"+it.ID, strings.NewReader(string(edit)), creator); r.Status != 200 {
		t.Fatalf("item edit: %d %s", r.Status, r.Body)
	}
	expect("item edit", itemPage, "Renamed by the cache test")

	// An event edit: the event's page and the list.
	events, err := ts.store.Events(ctx, demo.ID, store.EventFilter{Page: 1, Limit: 1}, "", time.Now())
	if err != nil || len(events.Events) == 0 {
		t.Fatalf("events: %v", err)
	}
	eventPage := "/apps/demo/events/" + events.Events[0].ID
	warm(eventPage, "/apps/demo/events")
	if r := ts.do(t, "PUT", "/api/events/"+events.Events[0].ID, strings.NewReader(`{"name":"Renamed gathering 3310"}`), creator); r.Status != 200 {
		t.Fatalf("event edit: %d %s", r.Status, r.Body)
	}
	expect("event edit", eventPage, "Renamed gathering 3310")
	expect("event edit", "/apps/demo/events", "Renamed gathering 3310")

	// Another app's pages are left alone.
	warm("/apps/acme")
	ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Only demo", "type": "POST", "communityId": ids.demoCommunity}), creator)
	ts.visit(t, "/apps/acme", "hit")
}

// The CLI is another process with its own memory: its writes reach a
// running server through the version in the database, read at most a second
// after the server last read it (without Redis announcing bumps).
func TestPageCacheSeesOtherProcessWrites(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ts.visit(t, "/apps/demo", "")
	ts.visit(t, "/apps/demo", "hit")
	cli := otherProcess(ts)
	if err := cli.SetAppField(context.Background(), "demo", "bio", "Changed from the command line 4410"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(store.UnannouncedTrust + 500*time.Millisecond)
	for !strings.Contains(ts.visit(t, "/apps/demo", ""), "Changed from the command line 4410") {
		if time.Now().After(deadline) {
			t.Fatal("the running server still shows the old bio")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two members of one role and a visitor: a shared render may hold nothing of
// the person it was first rendered for.
func TestPageCacheNoViewerLeak(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	ids := commLoad(t, ts)
	// aria and jonah are both subscribers of demo; aria likes a post.
	aria, jonah := commUser(t, ts, "aria@demo.test"), commUser(t, ts, "jonah@demo.test")
	if r := ts.do(t, "POST", "/api/messages/"+ids.demoPost+"/reactions", body(map[string]any{"reaction": "❤️"}), aria); r.Status >= 300 {
		t.Fatalf("like: %d %s", r.Status, r.Body)
	}
	secrets := map[string][]string{}
	for _, email := range []string{"aria@demo.test", "jonah@demo.test"} {
		u, err := ts.store.UserByLogin(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		secrets[email] = []string{u.Email, `"id":"` + u.ID + `"`, `viewerId&quot;:&quot;` + u.ID, `"viewerId":"` + u.ID + `"`}
	}
	viewers := map[string]map[string]string{"aria@demo.test": aria, "jonah@demo.test": jonah, "visitor": nil}
	for _, path := range []string{"/apps/demo", "/apps/demo/community", "/apps/demo/posts/" + ids.demoPost} {
		pages := map[string]string{}
		// Each viewer twice, in turns, so every one of them is served a
		// render first made for someone else.
		for round := 0; round < 2; round++ {
			for _, who := range []string{"aria@demo.test", "jonah@demo.test", "visitor"} {
				h := map[string]string{}
				for k, v := range viewers[who] {
					if k == "Cookie" {
						h[k] = v
					}
				}
				r := ts.do(t, "GET", path, nil, h)
				if r.Status != 200 {
					t.Fatalf("%s as %s: %d", path, who, r.Status)
				}
				if round == 1 && r.Header.Get("X-Page-Cache") != "hit" {
					t.Errorf("%s as %s: not served from the cache (%q)", path, who, r.Header.Get("X-Page-Cache"))
				}
				pages[who] = r.Body
			}
		}
		for who, page := range pages {
			for owner, marks := range secrets {
				for _, m := range marks {
					if strings.Contains(page, m) {
						t.Errorf("%s as %s contains %s's %q", path, who, owner, m)
					}
				}
			}
		}
		if pages["aria@demo.test"] != pages["jonah@demo.test"] {
			t.Errorf("%s: two members of one role got different bytes", path)
		}
		if pages["visitor"] == pages["aria@demo.test"] {
			t.Errorf("%s: a visitor got the members' page", path)
		}
	}
	// Who is asking comes from the per-viewer call, never from the page.
	me := ts.do(t, "GET", "/api/auth/me", nil, aria)
	if !strings.Contains(me.Body, "aria") || me.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("me: %s %v", me.Body, me.Header)
	}
}

// With Redis down the pages stay right: versions come from the database,
// and announcements are missed without harm.
func TestPageCacheRedisDown(t *testing.T) {
	db := demoDB(t)
	client := storetest.Redis(t)
	// A Redis that refuses every connection, with the timeouts and retries
	// of serve's client (store.TuneRedis): go-redis's defaults, which this
	// test had (MaxRetries 0 is three retries, each of five dials 100 ms
	// apart), made every command fail after about 1.5 s.
	dead := *client.Options()
	dead.Addr = "127.0.0.1:1"
	store.TuneRedis(&dead)
	ts := newTestServerStore(t, db, nil, func(o *store.Options) {
		o.Redis = redis.NewClient(&dead)
		o.Cache = &store.RedisCache{Client: o.Redis}
	})
	ts.visit(t, "/apps/demo", "")
	ts.visit(t, "/apps/demo", "hit")
	// Members' sessions live in Redis too, so the write comes from the
	// store (as the CLI's would); its announcement fails, its bump holds.
	if err := ts.store.SetAppField(context.Background(), "demo", "bio", "Written while Redis sleeps"); err != nil {
		t.Fatal(err)
	}
	if body := ts.visit(t, "/apps/demo", "miss"); !strings.Contains(body, "Written while Redis sleeps") {
		t.Error("page stale while Redis is down")
	}
}

// Announcements over Redis make versions a memory read; a bump still shows
// on the next request.
func TestPageCacheWatchesRedis(t *testing.T) {
	db := demoDB(t)
	ts := newTestServerStore(t, db, nil, func(o *store.Options) { o.Redis = storetest.Redis(t) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ts.WatchPageVersions(ctx)
	deadline := time.Now().Add(time.Minute)
	for !ts.store.PageVersionsLive() {
		if time.Now().After(deadline) {
			t.Fatal("never subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.visit(t, "/apps/demo", "")
	ts.visit(t, "/apps/demo", "hit")
	cli := otherProcess(ts)
	if err := cli.SetAppField(ctx, "demo", "bio", "Announced over Redis 2231"); err != nil {
		t.Fatal(err)
	}
	// The announcement travels asynchronously; it arrives within moments.
	var body string
	for i := 0; i < 50; i++ {
		body = ts.visit(t, "/apps/demo", "")
		if strings.Contains(body, "Announced over Redis 2231") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("the announced bump never reached the page")
}

// otherProcess is a store like ts's in another process (the CLI): the same
// database and Redis, a memory of its own.
func otherProcess(ts *testServer) *store.Storage {
	opts := ts.storeOptions
	opts.Cache = nil
	if opts.Redis == nil {
		opts.Cache = store.NewMemoryCache()
	}
	return store.New(opts)
}
