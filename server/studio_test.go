package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"marquee/store"
	"marquee/store/storetest"
)

func form(h map[string]string) map[string]string {
	out := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

func jsonHeaders(h map[string]string) map[string]string {
	out := map[string]string{"Content-Type": "application/json"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// newCreator signs up a user and returns their session headers.
func newCreator(t *testing.T, ts *testServer, email, username string) (string, map[string]string) {
	t.Helper()
	u, err := ts.store.CreateUser(context.Background(), email, username, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	return u.ID, withSession(sessionFor(t, ts, email))
}

// A signed-in user creates an app from /apps by the CLI's name rules; they
// become its CREATOR and land in its studio. The live check says the same.
func TestCreateAppFromApps(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, storetest.Postgres(t))
	ctx := context.Background()
	uid, h := newCreator(t, ts, "maker@studio.test", "maker")

	// Visitors see the placeholder and a sign-up link, no form.
	r := ts.do(t, "GET", "/apps", nil, nil)
	if r.Status != 200 || !strings.Contains(r.Body, "Create your app") || strings.Contains(r.Body, `action="/apps"`) {
		t.Fatalf("visitor /apps: %d %.300s", r.Status, r.Body)
	}
	r = ts.do(t, "GET", "/apps", nil, h)
	if r.Status != 200 || !strings.Contains(r.Body, `action="/apps"`) || !strings.Contains(r.Body, `name="displayName"`) {
		t.Fatalf("signed-in /apps: %d %.300s", r.Status, r.Body)
	}

	for _, c := range []struct{ name, want string }{
		{"Bad Name", "use 2 to 40 lowercase letters"},
		{"api", "is reserved"},
		{"demo", msgAppNameTaken},
		{"abcdefghijklmnopqrstuvwxyz", "shape of an id"},
	} {
		r := ts.do(t, "GET", "/api/apps/availability?name="+url.QueryEscape(c.name), nil, h)
		var out struct{ Data AppAvailability }
		if err := json.Unmarshal([]byte(r.Body), &out); err != nil || r.Status != 200 || out.Data.Available || !strings.Contains(out.Data.Message, c.want) {
			t.Errorf("availability %q: %d %s", c.name, r.Status, r.Body)
		}
		// The form refuses it with the same words, beside the field.
		r = ts.do(t, "POST", "/apps", strings.NewReader("name="+url.QueryEscape(c.name)+"&displayName=X"), form(h))
		if r.Status != 400 && r.Status != 409 || !strings.Contains(r.Body, "field-error") && !strings.Contains(r.Body, c.want) {
			t.Errorf("form %q: %d %.300s", c.name, r.Status, r.Body)
		}
	}
	r = ts.do(t, "GET", "/api/apps/availability?name=my-studio", nil, h)
	if !strings.Contains(r.Body, `"available":true`) {
		t.Fatalf("free name: %s", r.Body)
	}
	if r := ts.do(t, "GET", "/api/apps/availability?name=my-studio", nil, nil); r.Status != 401 {
		t.Fatalf("visitor availability: %d", r.Status)
	}

	r = ts.do(t, "POST", "/apps", strings.NewReader("name=my-studio&displayName=My+Studio"), form(h))
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/apps/my-studio/studio?notice=created" {
		t.Fatalf("create: %d %s %.300s", r.Status, r.Header.Get("Location"), r.Body)
	}
	app, err := ts.store.AppByIDOrName(ctx, "my-studio")
	if err != nil {
		t.Fatal(err)
	}
	if app.CreatorID != uid || app.Settings.Basic.DisplayName != "My Studio" {
		t.Fatalf("app: %+v", app)
	}
	if m, _ := ts.store.MembershipOf(ctx, app.ID, uid); m == nil || m.Role != store.RoleCreator {
		t.Fatalf("membership: %+v", m)
	}
	r = ts.do(t, "GET", "/apps/my-studio/studio?notice=created", nil, h)
	if r.Status != 200 || !strings.Contains(r.Body, "Your app is ready") || !strings.Contains(r.Body, "Profile and look") {
		t.Fatalf("studio: %d %.500s", r.Status, r.Body)
	}
	// /apps lists it with a way into the studio.
	r = ts.do(t, "GET", "/apps", nil, h)
	if !strings.Contains(r.Body, `href="/apps/my-studio/studio"`) {
		t.Fatalf("your apps: %.500s", r.Body)
	}

	// SELF_SERVE_APPS=false keeps creation to the CLI.
	off := newTestServerWith(t, storetest.Postgres(t), func(c *Config) { c.DisableSelfServe = true })
	_, oh := newCreator(t, off, "maker@studio.test", "maker")
	if r := off.do(t, "GET", "/apps", nil, oh); strings.Contains(r.Body, "Create your app") {
		t.Fatalf("self-serve off still offers creation")
	}
	if r := off.do(t, "POST", "/api/apps", strings.NewReader(`{"name":"nope-app"}`), jsonHeaders(oh)); r.Status != 403 {
		t.Fatalf("self-serve off create: %d %s", r.Status, r.Body)
	}
}

// Of 50 concurrent creations of one name exactly one app exists; the
// others are told the name is taken.
func TestCreateAppConcurrent(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, storetest.Postgres(t))
	_, h := newCreator(t, ts, "racer@studio.test", "racer")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := ts.do(t, "POST", "/api/apps", strings.NewReader(`{"name":"race-app","displayName":"Race"}`), jsonHeaders(h))
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[201] != 1 || codes[409] != 49 {
		t.Fatalf("statuses: %v", codes)
	}
	n, err := ts.store.DB.NewSelect().Model((*store.App)(nil)).Where("name = ?", "race-app").Count(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("apps named race-app: %d %v", n, err)
	}
}

// An operator's suspension takes every page and call of the app offline,
// and lifting it brings them back.
func TestSuspendApp(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, storetest.Postgres(t))
	ctx := context.Background()
	if _, err := ts.store.SetAppSuspended(ctx, "demo", true); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/apps/demo", "/apps/demo/community", "/api/app/demo/landing"} {
		if r := ts.do(t, "GET", target, nil, nil); r.Status != 404 || !strings.Contains(r.Body, msgAppSuspended) {
			t.Errorf("%s while suspended: %d %.200s", target, r.Status, r.Body)
		}
	}
	h := withSession(sessionFor(t, ts, "creator@demo.test"))
	if r := ts.do(t, "GET", "/apps/demo/studio", nil, h); r.Status != 404 {
		t.Errorf("studio while suspended: %d", r.Status)
	}
	if _, err := ts.store.SetAppSuspended(ctx, "demo", false); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "GET", "/apps/demo", nil, nil); r.Status != 200 {
		t.Errorf("after lifting: %d", r.Status)
	}
}
