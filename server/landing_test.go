package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

func TestLandingPageAndAPI(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)

		page := ts.do(t, "GET", "/apps/demo", nil, nil)
		if page.Status != http.StatusOK {
			t.Fatalf("landing status %d: %s", page.Status, page.Body)
		}
		for _, want := range []string{
			"<title>Demo Studio</title>", `<link rel="canonical" href="http://main.test/apps/demo"/>`,
			`property="og:title"`, `name="twitter:card"`, `application/ld+json`, `name="keywords"`,
			"Posts", "Upcoming Events", "Featured Items",
			`href="http://auth.test/authenticate/signin?app=demo"`, `href="http://auth.test/authenticate/signup?app=demo"`,
			`<nav class="footer"`,
		} {
			if !strings.Contains(page.Body, want) {
				t.Errorf("landing page lacks %q", want)
			}
		}
		if strings.Contains(page.Body, "View all") {
			t.Error("visitors must not see View all")
		}
		// A visitor's landing has no island: its footer is plain HTML.
		if strings.Contains(page.Body, `type="module"`) || strings.Contains(page.Body, "data-island=") {
			t.Error("a visitor's landing ships JavaScript")
		}
		if !strings.Contains(page.Body, "Monthly newsletter") || strings.Contains(page.Body, "Old SoundCloud") {
			t.Error("link-in-bio must show enabled links only")
		}
		if page.Header.Get("Content-Security-Policy") == "" || page.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Error("security headers missing")
		}

		api := ts.do(t, "GET", "/api/app/demo/landing", nil, nil)
		if api.Status != http.StatusOK {
			t.Fatalf("api status %d", api.Status)
		}
		var body struct {
			Success bool
			Data    struct {
				ID                 string
				Name               string
				Settings           map[string]any
				RecentPosts        []map[string]any
				UpcomingEvents     []map[string]any
				FeaturedStoreItems []map[string]any
				Community          struct {
					ID    string
					Count struct{ Posts int } `json:"_count"`
				}
				Banner struct{ SignedURL string }
			}
		}
		if err := json.Unmarshal([]byte(api.Body), &body); err != nil {
			t.Fatal(err)
		}
		if !body.Success || body.Data.Name != "demo" || body.Data.Community.Count.Posts != 30 ||
			len(body.Data.RecentPosts) == 0 || len(body.Data.UpcomingEvents) == 0 || len(body.Data.FeaturedStoreItems) == 0 ||
			body.Data.Banner.SignedURL == "" {
			t.Fatalf("landing api: %+v", body)
		}
		// The page shows exactly what the API answers: the first post's text.
		first := body.Data.RecentPosts[0]["content"].(string)
		if len(first) > 120 {
			first = first[:60]
		}
		if !strings.Contains(page.Body, htmlEscape(first)) {
			t.Errorf("page does not show the first post %q", first)
		}

		byID := ts.do(t, "GET", "/api/app/"+body.Data.ID+"/landing", nil, nil)
		if byID.Status != http.StatusOK || !strings.Contains(byID.Body, `"name":"demo"`) {
			t.Fatalf("landing by id: %d", byID.Status)
		}

		missing := ts.do(t, "GET", "/api/app/nope/landing", nil, nil)
		if missing.Status != http.StatusNotFound || !strings.Contains(missing.Body, `"success":false`) {
			t.Fatalf("missing app api: %d %s", missing.Status, missing.Body)
		}
		missingPage := ts.do(t, "GET", "/apps/nope", nil, nil)
		if missingPage.Status != http.StatusNotFound || !strings.Contains(missingPage.Body, "Not found") {
			t.Fatalf("missing app page: %d", missingPage.Status)
		}

		acme := ts.do(t, "GET", "/apps/acme", nil, nil)
		if acme.Status != http.StatusOK || strings.Contains(acme.Body, "Featured Items") {
			t.Fatalf("acme has the store off and must not show Featured Items (status %d)", acme.Status)
		}

		index := ts.do(t, "GET", "/apps", nil, nil)
		if index.Status != http.StatusOK || !strings.Contains(index.Body, "/apps/{appName}") || strings.Contains(index.Body, "<script") {
			t.Fatalf("apps index: %d", index.Status)
		}

		if !strings.Contains(page.Body, `<link rel="manifest" href="/apps/demo/manifest.webmanifest">`) {
			t.Error("the landing page must link its app's manifest")
		}
		manifest := ts.do(t, "GET", "/apps/demo/manifest.webmanifest", nil, nil)
		var wm struct {
			Name     string `json:"name"`
			StartURL string `json:"start_url"`
			Scope    string `json:"scope"`
			Display  string `json:"display"`
			Icons    []struct{ Src string }
		}
		if err := json.Unmarshal([]byte(manifest.Body), &wm); err != nil || manifest.Status != http.StatusOK ||
			wm.Name != "Demo Studio" || wm.StartURL != "/apps/demo/" || wm.Scope != "/apps/demo/" || wm.Display != "standalone" || len(wm.Icons) == 0 ||
			!strings.HasPrefix(manifest.Header.Get("Content-Type"), "application/manifest+json") {
			t.Fatalf("app manifest: %d %s", manifest.Status, manifest.Body)
		}
		// The start URL is the landing itself, not a redirect out of the
		// scope; its canonical link names the page without the slash.
		start := ts.do(t, "GET", wm.StartURL, nil, nil)
		if start.Status != http.StatusOK || !strings.Contains(start.Body, `<link rel="canonical" href="http://main.test/apps/demo"/>`) {
			t.Fatalf("start URL %s: %d %s", wm.StartURL, start.Status, start.Header.Get("Location"))
		}
		if r := ts.do(t, "GET", "/apps/demo/community/", nil, nil); r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != "/apps/demo/community" {
			t.Errorf("a page's trailing slash: %d %s", r.Status, r.Header.Get("Location"))
		}
		if missing := ts.do(t, "GET", "/apps/nope/manifest.webmanifest", nil, nil); missing.Status != http.StatusNotFound {
			t.Fatalf("manifest of a missing app: %d", missing.Status)
		}

		if head := ts.do(t, "HEAD", "/apps/demo", nil, nil); head.Status != http.StatusOK {
			t.Fatalf("HEAD landing: %d", head.Status)
		}

		health := ts.do(t, "GET", "/healthz", nil, nil)
		if health.Status != http.StatusOK {
			t.Fatalf("healthz: %d", health.Status)
		}
	})
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;")
	return r.Replace(s)
}

func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	db := demoSQLite(t)
	ts := newTestServer(t, db)
	db.Close()
	// Liveness is not readiness: the process is alive, not ready.
	if got := ts.do(t, "GET", "/healthz", nil, nil); got.Status != http.StatusOK {
		t.Errorf("healthz with a closed database: %d, want 200", got.Status)
	}
	if got := ts.do(t, "GET", "/readyz", nil, nil); got.Status != http.StatusServiceUnavailable || !strings.Contains(got.Body, `"database":"down"`) {
		t.Errorf("readyz with a closed database: %d %s, want 503 database down", got.Status, got.Body)
	}
	// The landing page shows its own error state with Retry, not a blank page.
	page := ts.do(t, "GET", "/apps/demo", nil, nil)
	if page.Status != http.StatusServiceUnavailable || !strings.Contains(page.Body, "Failed to load landing page") ||
		!strings.Contains(page.Body, ">Retry<") {
		t.Fatalf("landing with a closed database: %d %s", page.Status, page.Body)
	}
}

func TestLandingPageCacheFollowsWrites(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()

	before := ts.do(t, "GET", "/apps/demo", nil, nil)
	if before.Status != http.StatusOK {
		t.Fatalf("status %d", before.Status)
	}
	app, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	community, err := ts.store.CommunityOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	post := &store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: community.ID, SenderID: app.CreatorID,
		Type: store.MessagePost, Content: "Brand new cached-page check", CreatedAt: time.Now().Add(time.Minute)}
	if _, err := db.NewInsert().Model(post).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if stale := ts.do(t, "GET", "/apps/demo", nil, nil); strings.Contains(stale.Body, post.Content) {
		t.Fatal("the visitor page was not cached")
	}
	ts.store.InvalidateLanding(ctx, app.ID)
	if fresh := ts.do(t, "GET", "/apps/demo", nil, nil); !strings.Contains(fresh.Body, post.Content) {
		t.Fatal("the visitor page is stale after invalidation")
	}

	// A signed-in member never gets the visitors' cached page.
	user, err := ts.store.UserByEmail(ctx, "follower@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	token, err := ts.store.CreateSession(ctx, user.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	member := ts.do(t, "GET", "/apps/demo", nil, map[string]string{"Cookie": sessionCookie + "=" + token})
	if !strings.Contains(member.Body, "View all") || strings.Contains(member.Body, ">Sign In<") {
		t.Fatal("signed-in member got the visitor page")
	}
}

// TestLandingWithRedis runs the landing page and API as `serve` does with
// DATABASE_URL=postgres://... and REDIS_URL=redis://...
func TestLandingWithRedis(t *testing.T) {
	client := storetest.Redis(t)
	prefix := "test:landing:" + store.NewID() + ":"
	ts := newTestServerStore(t, demoDB(t), nil, func(o *store.Options) { o.Cache = &store.RedisCache{Client: client, Prefix: prefix} })
	t.Cleanup(func() {
		keys, _ := client.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			client.Del(context.Background(), keys...)
		}
	})

	for i := 0; i < 2; i++ {
		page := ts.do(t, "GET", "/apps/demo", nil, nil)
		if page.Status != http.StatusOK || !strings.Contains(page.Body, "Featured Items") {
			t.Fatalf("landing via redis, round %d: %d", i, page.Status)
		}
	}
	demo, err := ts.store.AppByIDOrName(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	// Entries are keyed by the app's id (never its name) and its versions.
	keys, err := client.Keys(context.Background(), prefix+"landing:v3:"+demo.ID+":*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("landing data not cached in redis: %v %v", keys, err)
	}
	api := ts.do(t, "GET", "/api/app/demo/landing", nil, nil)
	if api.Status != http.StatusOK || !strings.Contains(api.Body, `"success":true`) {
		t.Fatalf("api via redis: %d", api.Status)
	}
}
