package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// notAnAppsRoute lists the main site's routes that do not belong to one
// app: they answer the same whatever an app's status. Every other route of
// the role table (pages, JSON calls, media files, feeds, sitemaps and
// calendars of an app) must answer 404 while the app is suspended.
var notAnAppsRoute = map[string]bool{
	"GET /healthz": true, "GET /readyz": true, "GET /metrics": true, "GET /static/*": true, "GET /static/build/*": true,
	"GET /manifest.webmanifest": true, "GET /favicon.ico": true, "GET /": true, "GET /sw.js": true, "GET /robots.txt": true,
	// The sitemap index stops listing it (checked below).
	"GET /sitemap.xml": true,
	"GET /apps":        true, "POST /apps": true, "GET /signin": true,
	// Signing in is the account's (the auth site), not the app's.
	"GET /apps/:app/signin":        true,
	"GET /mail/unsubscribe/:token": true, "POST /mail/unsubscribe/:token": true,
	"POST /api/auth/logout": true, "GET /api/notifications/vapid-key": true, "POST /api/auth/profile-picture": true,
	"PUT /media-upload/*":       true,
	"POST /api/webhooks/stripe": true, "POST /api/webhooks/paypal": true, "POST /api/webhooks/stripe-connect": true,
	"GET /api/apps/availability": true, "POST /api/apps": true,
	// Which custom domains are verified (for a proxy's certificates).
	"GET /internal/domains/allowed": true,
}

// A suspended app is offline (issue 41 item 4): every route of the app in
// the role table answers 404 to every role, its creator and signed-in
// members included, also when its pages were cached just before; its
// media files are not served; the sitemap index drops it.
func TestSuspendedAppIsOffline(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	fx, viewers, follower := newRoleFixture(t, ts, db)

	// The app's own files: its banner at its stable URL, and a signed link
	// to one of its files as a page hands out.
	var files []store.Media
	if err := db.NewSelect().Model(&files).Where("app_id = ? AND status = ?", fx.appID, store.MediaUploaded).Order("created_at", "id").Scan(ctx); err != nil || len(files) == 0 {
		t.Fatalf("demo media: %d %v", len(files), err)
	}
	signed, err := ts.files.PresignGet(ctx, files[0].Path, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var bannerID string
	if err := db.NewSelect().Table("apps").Column("banner_media_id").Where("id = ?", fx.appID).Scan(ctx, &bannerID); err != nil || bannerID == "" {
		t.Fatalf("demo banner: %q %v", bannerID, err)
	}
	mediaTargets := map[string]string{
		"GET /media/*":               strings.TrimPrefix(signed, "http://main.test"),
		"GET /media/i/:id/:variant":  "/media/i/" + bannerID + "/original",
		"GET /api/media/:id/content": "/api/media/" + bannerID + "/content",
	}

	type call struct {
		name, site, method, target, body string
		headers                          map[string]string
		visitor                          bool
	}
	headersFor := func(v *roleViewer, body string) map[string]string {
		h := v.headers()
		if body != "" {
			if strings.HasPrefix(body, "{") {
				h["Content-Type"] = "application/json"
			} else {
				h["Content-Type"] = "application/x-www-form-urlencoded"
			}
		}
		return h
	}
	var calls []call
	for _, row := range roleTable(fx, follower) {
		key := row.method + " " + row.path
		if row.site != "main" || notAnAppsRoute[key] {
			continue
		}
		for _, v := range viewers {
			// Made now: some requests need objects the app makes through
			// its own calls, which the suspension closes.
			target, body := row.req(v)
			if mt, ok := mediaTargets[key]; ok {
				target = mt
			}
			calls = append(calls, call{name: fmt.Sprintf("%s as %s", key, v.role), site: row.site, method: row.method,
				target: target, body: body, headers: headersFor(v, body), visitor: v.email == ""})
		}
	}

	// Before: the pages and files are there (and in the page cache, twice
	// for a visitor's page to be answered before the router), so the
	// table reaches the app's content.
	for round := 0; round < 2; round++ {
		for _, cl := range calls {
			if cl.method != http.MethodGet {
				continue
			}
			r := ts.doSite(t, cl.site, cl.method, cl.target, nil, cl.headers)
			if round == 0 && strings.HasSuffix(cl.name, "as "+store.RoleCreator) && r.Status == http.StatusNotFound &&
				!strings.HasPrefix(cl.name, "GET /api/store/:storeId/cart ") && // the creator has no cart
				!strings.HasPrefix(cl.name, "GET /apps/:app/studio/data/export ") && // a link without an export's token
				!strings.HasPrefix(cl.name, "GET /apps/:app/auth/callback ") && // on the app's own domain only
				!strings.HasPrefix(cl.name, "GET /apps/:app/authenticate/:page ") {
				t.Errorf("%s before the suspension: 404 (the table does not reach the app): %.200s", cl.name, r.Body)
			}
		}
	}
	if r := ts.do(t, "GET", "/sitemap.xml", nil, nil); !strings.Contains(r.Body, "/apps/demo/") {
		t.Fatalf("sitemap index before: %d %.300s", r.Status, r.Body)
	}

	if _, err := ts.store.SetAppSuspended(ctx, "demo", true); err != nil {
		t.Fatal(err)
	}
	for _, cl := range calls {
		r := ts.doSite(t, cl.site, cl.method, cl.target, strings.NewReader(cl.body), cl.headers)
		// A visitor's call that needs a session is answered 401 before
		// any app is looked up: that says nothing of the app.
		if r.Status == http.StatusUnauthorized && cl.visitor {
			continue
		}
		if r.Status != http.StatusNotFound {
			t.Errorf("%s (%s) while suspended: %d %s, want 404: %.200s", cl.name, cl.target, r.Status, r.Header.Get("Location"), r.Body)
		}
	}
	if r := ts.do(t, "GET", "/sitemap.xml", nil, nil); strings.Contains(r.Body, "/apps/demo/") {
		t.Errorf("sitemap index lists the suspended app: %.300s", r.Body)
	}
}
