package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"marquee/store"
	"marquee/store/storetest"
)

// TestHonestErrors: bad text is a 400, a wrong method a 405, an unknown API
// path a JSON 404, a huge body a 413, and error bodies carry the text in
// both message and error (SPEC.md section 8).
func TestHonestErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := commLoad(t, ts)
	const follower = "follower@demo.test"
	badText := map[string]any{"success": false, "message": errBadText.Message, "error": errBadText.Message}
	big := `{"content":"` + strings.Repeat("a", 2<<20) + `"}`
	ts.run(t, []scenario{
		{name: "NUL in JSON", method: "POST", path: "/api/messages", as: follower, status: 400, json: badText,
			body: `{"content":"a\u0000b","type":"REPLY","parentMessageId":"` + ids.demoPost + `"}`},
		{name: "NUL in a nested JSON key", method: "POST", path: "/api/media", as: follower, status: 400, json: badText,
			body: `{"name":"x","extra":{"k\u0000":1}}`},
		{name: "lone surrogate", method: "POST", path: "/api/messages", as: follower, status: 400, json: badText,
			body: `{"content":"\ud800","type":"REPLY","parentMessageId":"` + ids.demoPost + `"}`},
		{name: "invalid UTF-8 bytes", method: "POST", path: "/api/messages/" + ids.demoPost + "/reactions", as: follower, status: 400,
			body: "{\"reaction\":\"\xff\xfe\"}", json: badText},
		{name: "NUL in a page path", path: "/apps/%00", status: 400, contains: []string{"invalid characters"}},
		{name: "NUL in an API path", path: "/api/app/%00/landing", status: 400, json: badText},
		{name: "NUL in a query", path: "/api/community/" + ids.demoCommunity + "/posts?page=%00", status: 400, json: badText},
		{name: "invalid UTF-8 in a query", path: "/apps/demo/community?q=%ff", status: 400},
		{name: "NUL in a form", method: "POST", path: "/authenticate/signin", status: 400,
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "email=a%00b&password=x"},
		{name: "a page number that is not one", path: "/api/community/" + ids.demoCommunity + "/posts?page=two", status: 400,
			json: map[string]any{"message": msgBadPage}},
		{name: "wrong method on a page", method: "POST", path: "/apps/demo", status: 405},
		{name: "wrong method on the API", method: "PUT", path: "/api/messages/" + ids.demoPost, status: 405,
			json: map[string]any{"success": false, "message": "Method not allowed", "error": "Method not allowed"}},
		{name: "/api itself", path: "/api", status: 404, json: map[string]any{"success": false, "error": "Not found"}},
		{name: "unknown API path", path: "/api/nothing/here", status: 404, json: map[string]any{"success": false, "message": "Not found"}},
		{name: "unknown page", path: "/nothing/here", status: 404, contains: []string{"<html"}},
		{name: "body over 1 MB", method: "POST", path: "/api/messages", as: follower, body: big, status: 413,
			json: map[string]any{"success": false, "message": "Request body too large"}},
		{name: "upload target answers JSON", method: "PUT", path: "/media-upload/nothing?exp=1&sig=x", status: 403,
			headers: map[string]string{"Content-Type": "image/png"}, body: "x", json: map[string]any{"success": false}},
		{name: "POST with a trailing slash is served", method: "POST", path: "/api/notifications/follow/demo/", as: "member@demo.test",
			body: "{}", status: 200, json: map[string]any{"success": true, "data.role": "FOLLOWER"}},
		{name: "GET with a trailing slash redirects", path: "/apps/demo/events/", status: 301},
		// The installed app's start URL (its manifest's scope ends in a slash).
		{name: "an app's root with its slash is its landing", path: "/apps/demo/", status: 200, contains: []string{"<html"}},
		{name: "errors carry message and error", method: "POST", path: "/api/messages", body: "{}", status: 401,
			json: map[string]any{"success": false, "message": "Authentication required", "error": "Authentication required"}},
	})
	// The redirect keeps the query and goes to the path without the slash.
	res := ts.do(t, "GET", "/apps/demo/community/?page=2", nil, nil)
	if loc := res.Header.Get("Location"); loc != "/apps/demo/community?page=2" {
		t.Errorf("redirect to %q", loc)
	}
	res = ts.do(t, "GET", "//evil.test/", nil, nil)
	if loc := res.Header.Get("Location"); strings.HasPrefix(loc, "//") {
		t.Errorf("open redirect to %q", loc)
	}
}

// TestNULOnEveryWrite sends a NUL byte to every write route: none may
// answer 500 (PostgreSQL refuses NUL in text).
func TestNULOnEveryWrite(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	token := sessionFor(t, ts, "creator@demo.test")
	for _, r := range ts.main.Routes() {
		if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodDelete {
			continue
		}
		path := strings.NewReplacer(":id", "x", ":appId", "demo", ":communityId", "x", ":reactionId", "x", "*", "x").Replace(r.Path)
		for _, p := range []string{":storeId", ":itemId", ":cartItemId", ":orderId", ":userId", ":eventId"} {
			path = strings.ReplaceAll(path, p, "x")
		}
		res := ts.do(t, r.Method, path, strings.NewReader(`{"content":"a\u0000b","name":"\u0000"}`),
			withSession(token, "Content-Type", "application/json"))
		// Uploads carry raw file bytes, where a NUL is just a byte.
		binary := strings.HasPrefix(r.Path, "/media-upload") || strings.HasSuffix(r.Path, "/parts/:number")
		if res.Status != http.StatusBadRequest && !binary {
			t.Errorf("%s %s: %d, want 400: %.200s", r.Method, r.Path, res.Status, res.Body)
		}
		if res.Status >= 500 {
			t.Errorf("%s %s: %d", r.Method, r.Path, res.Status)
		}
	}
}

// TestDatabaseOutage takes PostgreSQL away: the API answers a JSON 503 and
// pages an HTML 503, never a 4xx that blames the request or a bare 500.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	db, proxy := storetest.PostgresBehindProxy(t)
	ts := newTestServer(t, db)
	ids := commLoad(t, ts)
	token := sessionFor(t, ts, "follower@demo.test")
	member := withSession(token, "Content-Type", "application/json")
	// Warm nothing: the landing cache would hide the outage from readers,
	// which is right for them but not what this test is about.
	ts.store.Cache().(*store.MemoryCache).Purge()
	proxy.Cut()

	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/community/" + ids.demoCommunity + "/posts", ""},
		{"GET", "/api/messages/" + ids.demoPost, ""},
		{"GET", "/api/app/demo/landing", ""},
		{"GET", "/api/auth/me?appId=demo", ""},
		{"POST", "/api/messages", `{"content":"hi","type":"REPLY","parentMessageId":"` + ids.demoPost + `"}`},
		{"POST", "/api/messages/" + ids.demoPost + "/reactions", `{"reaction":"heart"}`},
		{"POST", "/api/notifications/follow/demo", `{}`},
	} {
		var body *strings.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		} else {
			body = strings.NewReader("")
		}
		res := ts.do(t, c.method, c.path, body, member)
		if res.Status != http.StatusServiceUnavailable || !strings.Contains(res.Body, `"success":false`) ||
			res.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s during outage: %d %.200s", c.method, c.path, res.Status, res.Body)
		}
	}
	for _, path := range []string{"/apps/demo", "/apps/demo/community", "/apps/demo/posts/" + ids.demoPost} {
		res := ts.do(t, "GET", path, nil, member)
		if res.Status != http.StatusServiceUnavailable || !strings.Contains(res.Body, "<html") {
			t.Errorf("GET %s during outage: %d %.200s", path, res.Status, res.Body)
		}
	}
	if res := ts.do(t, "GET", "/healthz", nil, nil); res.Status != http.StatusOK {
		t.Errorf("healthz (liveness) during outage: %d, want 200", res.Status)
	}
	if res := ts.do(t, "GET", "/readyz", nil, nil); res.Status != http.StatusServiceUnavailable {
		t.Errorf("readyz during outage: %d, want 503", res.Status)
	}
}

// TestAppNamesNeverCollideWithIDs: a name with the shape of an id is
// refused, and an id in an API path only ever means that id.
func TestAppNamesNeverCollideWithIDs(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	creator, err := ts.store.UserByEmail(ctx, "creator@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{demo.ID, "abcdefghijklmnopqrstuvwxyz", "api", "static", "-x", "A", "x"} {
		if _, err := ts.store.CreateApp(ctx, name, creator.ID); err == nil {
			t.Errorf("app name %q accepted", name)
		}
	}
	for _, name := range []string{"my-studio", "abcdefghijklmnopqrstuvwxy8", "abcdefghijklmnopqrstuvwxyz2"} {
		if err := store.CheckAppName(name); err != nil {
			t.Errorf("app name %q refused: %v", name, err)
		}
	}
	// Even a row written around CreateApp cannot take demo's id over.
	if _, err := ts.store.DB().NewInsert().Model(&store.App{ID: store.NewID(), Name: demo.ID, Status: "PUBLIC", Version: "1.0.0",
		CreatorID: creator.ID, Settings: store.DefaultSettings("x")}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ts.run(t, []scenario{
		{path: "/api/app/" + demo.ID + "/landing", status: 200, json: map[string]any{"data.id": demo.ID, "data.name": "demo"}},
		{path: "/api/app/demo/landing", status: 200, json: map[string]any{"data.id": demo.ID}},
		{path: "/api/auth/me?appId=" + demo.ID, as: "creator@demo.test", status: 200, json: map[string]any{"data.userAppRole": "CREATOR"}},
	})
}

// TestEnvelope: lists are [] when empty, SPEC's top-level fields are
// answered in both places.
func TestEnvelope(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := commLoad(t, ts)
	ts.run(t, []scenario{
		{name: "posts in data and at the top", path: "/api/community/" + ids.demoCommunity + "/posts?limit=2", status: 200,
			json: map[string]any{"success": true, "data.posts": arrayLen(2), "posts": arrayLen(2), "pagination.limit": 2,
				"data.pagination.limit": 2, "posts.0.replies": present{}}},
		{name: "past the last page: an empty list", path: "/api/community/" + ids.acmeCommunity + "/posts?page=9", status: 200,
			json: map[string]any{"posts": arrayLen(0), "data.posts": arrayLen(0), "pagination.hasNext": false}},
		{name: "stories users at the top", path: "/api/community/" + ids.demoCommunity + "/stories", status: 200,
			json: map[string]any{"users": present{}, "data.users": present{}}},
		{name: "replies always a list", path: "/api/messages/" + ids.demoPost + "/replies?page=99", status: 200,
			json: map[string]any{"replies": arrayLen(0), "data.replies": arrayLen(0), "pagination.page": 99}},
		{name: "message with replies included", path: "/api/messages/" + ids.demoPost + "?include=sender,replies", status: 200,
			json: map[string]any{"data.replies": present{}, "data.id": ids.demoPost}},
		{name: "me answers user at the top", path: "/api/auth/me", as: "follower@demo.test", status: 200,
			json: map[string]any{"user.username": present{}, "data.user.username": present{}}},
		{name: "membership carries app id", path: "/api/auth/me?appId=demo", as: "follower@demo.test", status: 200,
			json: map[string]any{"data.userMembership.app.id": present{}, "data.userMembership.role": "FOLLOWER"}},
	})
}
