package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store"
)

// Issue 43 item 1: an unpublished app answers to its staff alone. Every
// app route of the role table answers 404 (or, to a visitor, the 401 a
// route gives before any app is looked up) to everyone below MODERATOR,
// also right after their pages were cached; staff keep every page they
// had (and see the banner), but its sitemap and feed close for everyone.
// Publishing again brings it all back.
func TestUnpublishedAppIsStaffOnly(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	fx, viewers, follower := newRoleFixture(t, ts, db)

	var bannerID string
	if err := db.NewSelect().Table("apps").Column("banner_media_id").Where("id = ?", fx.appID).Scan(ctx, &bannerID); err != nil || bannerID == "" {
		t.Fatalf("demo banner: %q %v", bannerID, err)
	}
	// A file of the app behind a signed link: staff's pages hand those out.
	var files []store.Media
	if err := db.NewSelect().Model(&files).Where("app_id = ? AND status = ?", fx.appID, store.MediaUploaded).Order("created_at", "id").Scan(ctx); err != nil || len(files) == 0 {
		t.Fatalf("demo media: %d %v", len(files), err)
	}
	signed, err := ts.files.PresignGet(ctx, files[0].Path, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mediaTargets := map[string]string{
		"GET /media/*":               strings.TrimPrefix(signed, "http://main.test"),
		"GET /media/i/:id/:variant":  "/media/i/" + bannerID + "/original",
		"GET /api/media/:id/content": "/api/media/" + bannerID + "/content",
	}
	// What only a published app has, for everyone.
	publishedOnly := map[string]bool{"GET /apps/:app/sitemap.xml": true, "GET /apps/:app/feed.xml": true}

	type call struct {
		key, name, method, target, body string
		headers                         map[string]string
		role                            string
	}
	var calls []call
	for _, row := range roleTable(fx, follower) {
		key := row.method + " " + row.path
		if row.site != "main" || notAnAppsRoute[key] {
			continue
		}
		for _, v := range viewers {
			target, body := row.req(v)
			if mt, ok := mediaTargets[key]; ok {
				target = mt
			}
			h := v.headers()
			if body != "" {
				h["Content-Type"] = "application/x-www-form-urlencoded"
				if strings.HasPrefix(body, "{") {
					h["Content-Type"] = "application/json"
				}
			}
			calls = append(calls, call{key: key, name: fmt.Sprintf("%s as %s", key, v.role), method: row.method,
				target: target, body: body, headers: h, role: v.role})
		}
	}
	staff := func(role string) bool { return store.RoleRank(role) >= store.RoleRank(store.RoleModerator) }

	// Published: every GET twice (a visitor's page is then answered from
	// the cache, before the router), remembering what staff get.
	before := map[string]int{}
	for round := 0; round < 2; round++ {
		for _, cl := range calls {
			if cl.method != http.MethodGet {
				continue
			}
			r := ts.do(t, cl.method, cl.target, nil, cl.headers)
			before[cl.name] = r.Status
		}
	}
	if r := ts.do(t, "GET", "/apps/demo", nil, withSession(sessionFor(t, ts, "creator@demo.test"))); strings.Contains(r.Body, "not published yet") {
		t.Fatal("a published app shows the unpublished banner")
	}

	if changed, err := ts.store.SetAppPublished(ctx, fx.appID, "", false); err != nil || !changed {
		t.Fatalf("unpublish: %v %v", changed, err)
	}
	// Reads first: some writes end the viewer's session (sign out).
	ordered := []call{}
	for _, get := range []bool{true, false} {
		for _, cl := range calls {
			if (cl.method == http.MethodGet) == get {
				ordered = append(ordered, cl)
			}
		}
	}
	for _, cl := range ordered {
		r := ts.do(t, cl.method, cl.target, strings.NewReader(cl.body), cl.headers)
		switch {
		case staff(cl.role):
			if cl.method == http.MethodGet && r.Status == http.StatusNotFound && before[cl.name] != http.StatusNotFound && !publishedOnly[cl.key] {
				t.Errorf("%s while unpublished: 404 for staff (was %d): %.200s", cl.name, before[cl.name], r.Body)
			}
			if publishedOnly[cl.key] && r.Status != http.StatusNotFound {
				t.Errorf("%s while unpublished: %d, want 404", cl.name, r.Status)
			}
		case r.Status == http.StatusUnauthorized && cl.role == store.RolePublic:
			// Needs a session before any app is looked up: says nothing.
		case r.Status != http.StatusNotFound:
			t.Errorf("%s (%s) while unpublished: %d %s, want 404: %.200s", cl.name, cl.target, r.Status, r.Header.Get("Location"), r.Body)
		case strings.Contains(r.Body, "Luna"):
			t.Errorf("%s: the 404 names the app: %.300s", cl.name, r.Body)
		}
	}
	if r := ts.do(t, "GET", "/sitemap.xml", nil, nil); strings.Contains(r.Body, "/apps/demo/") {
		t.Errorf("sitemap index lists the unpublished app: %.300s", r.Body)
	}

	if _, err := ts.store.SetAppPublished(ctx, fx.appID, "", true); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/apps/demo", "/apps/demo/community", "/apps/demo/sitemap.xml", "/apps/demo/feed.xml", "/api/app/demo/landing"} {
		if r := ts.do(t, "GET", target, nil, nil); r.Status != 200 {
			t.Errorf("published again, a visitor's %s: %d", target, r.Status)
		}
	}
	if r := ts.do(t, "GET", "/sitemap.xml", nil, nil); !strings.Contains(r.Body, "/apps/demo/") {
		t.Errorf("published again, the sitemap index: %.300s", r.Body)
	}
}

// A creator's new app starts unpublished: the studio's create form lands
// on the checklist; the creator sees the app with the banner (its pages
// kept by no cache, noindex); a visitor and a signed-in stranger get a
// plain 404 that names nothing; the sitemap index, the app's sitemap, its
// feed and its search are closed. Publish (a form) opens it; Unpublish
// (the JSON call) closes it again, also for a visitor whose page was
// cached. Both are audited.
func TestNewAppStartsUnpublished(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	creator := withSession(sessionFor(t, ts, "member@demo.test"))
	stranger := withSession(sessionFor(t, ts, "follower@demo.test"))

	r := ts.do(t, "POST", "/apps", strings.NewReader("name=quiet-launch&displayName=Quiet+Zebra+Launch"), form(creator))
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/apps/quiet-launch/studio/launch?notice=created" {
		t.Fatalf("create: %d %s", r.Status, r.Header.Get("Location"))
	}
	app, err := ts.store.AppByIDOrName(ctx, "quiet-launch")
	if err != nil || !app.Unpublished {
		t.Fatalf("a new app: unpublished=%v %v", app != nil && app.Unpublished, err)
	}
	r = ts.do(t, "GET", "/apps/quiet-launch/studio/launch?notice=created", nil, creator)
	if r.Status != 200 || !strings.Contains(r.Body, "Launch your app") || !strings.Contains(r.Body, ">Publish</button>") ||
		!strings.Contains(r.Body, "0 of 5 steps done") {
		t.Fatalf("checklist: %d %.300s", r.Status, r.Body)
	}

	pages := []string{"/apps/quiet-launch", "/apps/quiet-launch/community", "/apps/quiet-launch/store", "/apps/quiet-launch/events"}
	for _, p := range pages {
		r := ts.do(t, "GET", p, nil, creator)
		if r.Status != 200 || !strings.Contains(r.Body, "This app is not published yet") || !strings.Contains(r.Body, `href="/apps/quiet-launch/studio/launch"`) {
			t.Errorf("the creator's %s: %d, banner %v", p, r.Status, strings.Contains(r.Body, "not published yet"))
		}
		if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") || r.Header.Get("X-Robots-Tag") != "noindex" {
			t.Errorf("the creator's %s: Cache-Control %q, X-Robots-Tag %q", p, cc, r.Header.Get("X-Robots-Tag"))
		}
		for name, h := range map[string]map[string]string{"visitor": nil, "stranger": stranger} {
			for range 2 {
				r := ts.do(t, "GET", p, nil, h)
				if r.Status != 404 || strings.Contains(r.Body, "Quiet Zebra") || strings.Contains(r.Body, "not published") {
					t.Errorf("a %s's %s: %d %.200s", name, p, r.Status, r.Body)
				}
			}
		}
	}
	for _, p := range []string{"/api/app/quiet-launch/landing", "/api/search/apps/quiet-launch?q=zebra", "/apps/quiet-launch/sitemap.xml",
		"/apps/quiet-launch/feed.xml", "/apps/quiet-launch/manifest.webmanifest", "/apps/quiet-launch/icons/icon-192.png"} {
		if r := ts.do(t, "GET", p, nil, stranger); r.Status != 404 || strings.Contains(r.Body, "Quiet Zebra") {
			t.Errorf("a stranger's %s: %d %.200s", p, r.Status, r.Body)
		}
	}
	if r := ts.do(t, "GET", "/api/app/quiet-launch/landing", nil, creator); r.Status != 200 || !strings.Contains(r.Body, `"unpublished":true`) {
		t.Errorf("the creator's landing call: %d %.200s", r.Status, r.Body)
	}
	if r := ts.do(t, "GET", "/sitemap.xml", nil, nil); strings.Contains(r.Body, "quiet-launch") {
		t.Errorf("the sitemap index lists an unpublished app")
	}
	// Its branded sign-in is its staff's too; /apps tells the creator.
	for _, h := range []map[string]string{nil, stranger} {
		if r := ts.do(t, "GET", "/authenticate/signin?app=quiet-launch", nil, h); r.Status != 200 || strings.Contains(r.Body, "Quiet Zebra") {
			t.Errorf("the sign-in page of an unpublished app: %d, brand shown %v", r.Status, strings.Contains(r.Body, "Quiet Zebra"))
		}
	}
	if r := ts.do(t, "GET", "/apps", nil, creator); !strings.Contains(r.Body, "Not published yet") || !strings.Contains(r.Body, `href="/apps/quiet-launch/studio/launch"`) {
		t.Errorf("/apps does not say the app is unpublished")
	}

	// Publish from the checklist (a plain form).
	r = ts.do(t, "POST", "/apps/quiet-launch/studio/launch", strings.NewReader("action=publish"), form(creator))
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/apps/quiet-launch/studio/launch?notice=published" {
		t.Fatalf("publish: %d %s %.200s", r.Status, r.Header.Get("Location"), r.Body)
	}
	r = ts.do(t, "GET", "/apps/quiet-launch/studio/launch?notice=published", nil, creator)
	if !strings.Contains(r.Body, "Your app is published") || !strings.Contains(r.Body, ">Unpublish</button>") {
		t.Fatalf("checklist once published: %.300s", r.Body)
	}
	for _, p := range pages {
		for range 2 { // the second from the page cache
			r := ts.do(t, "GET", p, nil, nil)
			if r.Status != 200 || !strings.Contains(r.Body, "Quiet Zebra") || strings.Contains(r.Body, "not published") {
				t.Errorf("published, a visitor's %s: %d", p, r.Status)
			}
		}
	}
	if r := ts.do(t, "GET", "/sitemap.xml", nil, nil); !strings.Contains(r.Body, "/apps/quiet-launch/sitemap.xml") {
		t.Errorf("published, the sitemap index: %.300s", r.Body)
	}
	if r := ts.do(t, "GET", "/apps/quiet-launch/sitemap.xml", nil, nil); r.Status != 200 {
		t.Errorf("published, the app's sitemap: %d", r.Status)
	}

	// Unpublish through the JSON API: the visitor's cached pages go too.
	r = ts.do(t, "PUT", "/api/studio/apps/"+app.ID+"/launch", strings.NewReader(`{"published":false}`), jsonHeaders(creator))
	if r.Status != 200 || !strings.Contains(r.Body, `"published":false`) {
		t.Fatalf("unpublish: %d %s", r.Status, r.Body)
	}
	for _, p := range pages {
		if r := ts.do(t, "GET", p, nil, nil); r.Status != 404 || strings.Contains(r.Body, "Quiet Zebra") {
			t.Errorf("unpublished again, a visitor's %s: %d", p, r.Status)
		}
	}
	if r := ts.do(t, "PUT", "/api/studio/apps/"+app.ID+"/launch", strings.NewReader(`{}`), jsonHeaders(creator)); r.Status != 400 {
		t.Errorf("no published field: %d %s", r.Status, r.Body)
	}
	if r := ts.do(t, "PUT", "/api/studio/apps/"+app.ID+"/launch", strings.NewReader(`{"published":true}`), jsonHeaders(stranger)); r.Status != 404 {
		t.Errorf("a stranger publishes: %d %s", r.Status, r.Body)
	}
	log, err := ts.store.AuditLog(ctx, app.ID, 20)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range log {
		if strings.HasPrefix(a.Action, "app.") {
			actions = append(actions, a.Action+" by "+a.Actor)
		}
	}
	if got := strings.Join(actions, ", "); got != "app.unpublish by member, app.publish by member, app.create by member" {
		t.Errorf("audit: %s", got)
	}
}

// Existing apps stay published (the migration's default), and the CLI's
// and fixtures' way: CreatePublishedApp.
func TestExistingAppsStayPublished(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	for _, name := range []string{"demo", "acme"} {
		app, err := ts.store.AppByIDOrName(ctx, name)
		if err != nil || app.Unpublished {
			t.Errorf("%s: unpublished=%v %v", name, app != nil && app.Unpublished, err)
		}
	}
	u, _ := ts.store.UserByEmail(ctx, "member@demo.test")
	open, err := ts.store.CreatePublishedApp(ctx, "open-at-once", u.ID)
	if err != nil || open.Unpublished {
		t.Fatalf("published app: %v", err)
	}
	if r := ts.do(t, "GET", "/apps/open-at-once", nil, nil); r.Status != 200 {
		t.Errorf("a published new app: %d", r.Status)
	}
	closed, err := ts.store.CreateApp(ctx, "closed-at-first", u.ID)
	if err != nil || !closed.Unpublished {
		t.Fatalf("CreateApp: unpublished=%v %v", closed != nil && closed.Unpublished, err)
	}
}

// Fifty concurrent Publish calls: every one answers 200 and the app is
// published once (one audit line).
func TestConcurrentPublish(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	u, _ := ts.store.UserByEmail(ctx, "member@demo.test")
	app, err := ts.store.CreateApp(ctx, "race-publish", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := jsonHeaders(withSession(sessionFor(t, ts, "member@demo.test")))
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = ts.do(t, "PUT", "/api/studio/apps/"+app.ID+"/launch", strings.NewReader(`{"published":true}`), h).Status
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Errorf("call %d: %d", i, s)
		}
	}
	n, err := ts.store.DB().NewSelect().Table("moderation_log").Where("app_id = ? AND action = ?", app.ID, "app.publish").Count(ctx)
	if err != nil || n != 1 {
		t.Errorf("publish audit lines: %d %v", n, err)
	}
	if r := ts.do(t, "GET", "/apps/race-publish", nil, nil); r.Status != 200 {
		t.Errorf("published: %d", r.Status)
	}
}

// The checklist follows the app's data, step by step, in the page and
// the JSON call alike.
func TestLaunchChecklistSteps(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	u, _ := ts.store.UserByEmail(ctx, "member@demo.test")
	app, err := ts.store.CreateApp(ctx, "steps-app", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := withSession(sessionFor(t, ts, "member@demo.test"))
	done := func() map[string]bool {
		t.Helper()
		l, err := ts.store.LaunchOf(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, s := range l.Steps {
			out[s.Key] = s.Done
		}
		r := ts.do(t, "GET", "/api/studio/apps/"+app.ID+"/launch", nil, h)
		if r.Status != 200 || !strings.Contains(r.Body, fmt.Sprintf(`"done":%d`, l.Done)) {
			t.Fatalf("launch call: %d %s", r.Status, r.Body)
		}
		page := ts.do(t, "GET", "/apps/steps-app/studio/launch", nil, h)
		for _, s := range l.Steps {
			cls := `class="launch-step" data-step="` + s.Key + `"`
			if s.Done {
				cls = `class="launch-step done" data-step="` + s.Key + `"`
			}
			if !strings.Contains(page.Body, cls) {
				t.Errorf("page: step %s (done %v) is not shown so", s.Key, s.Done)
			}
		}
		return out
	}
	want := map[string]bool{}
	check := func(when string) {
		t.Helper()
		got := done()
		for _, k := range []string{store.StepProfile, store.StepEarn, store.StepPayouts, store.StepPost, store.StepPreview} {
			if got[k] != want[k] {
				t.Errorf("%s: step %s done=%v, want %v", when, k, got[k], want[k])
			}
		}
	}
	check("new")

	// Profile and look: a bio alone is half of it; a theme completes it.
	if err := ts.store.SetAppField(ctx, "steps-app", "bio", "Songs from the shed"); err != nil {
		t.Fatal(err)
	}
	check("bio only")
	if err := ts.store.SetAppField(ctx, "steps-app", "theme.primaryColor", "#0b6e4f"); err != nil {
		t.Fatal(err)
	}
	want[store.StepProfile] = true
	check("bio and theme")

	if err := ts.store.SetAppField(ctx, "steps-app", "features.donations.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	want[store.StepEarn] = true
	check("donations on")

	if _, err := ts.store.SetPayPalPayee(ctx, app.ID, u.ID, "", "shed@example.com"); err != nil {
		t.Fatal(err)
	}
	want[store.StepPayouts] = true
	check("PayPal")

	community, err := ts.store.Landing(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"Hello shed","type":"POST","communityId":"`+community.Community.ID+`"}`),
		jsonHeaders(h)); r.Status != 201 {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	want[store.StepPost] = true
	check("a post")

	for _, mode := range []string{"visitor", "member"} {
		r := ts.do(t, "POST", "/apps/steps-app/studio/preview", strings.NewReader("mode="+mode), form(h))
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/apps/steps-app" {
			t.Fatalf("preview %s: %d %s", mode, r.Status, r.Header.Get("Location"))
		}
	}
	want[store.StepPreview] = true
	check("previewed")
	if l, _ := ts.store.LaunchOf(ctx, app.ID); l.Done != 5 || l.Published {
		t.Errorf("all done: %+v", l)
	}
}

// previewCookieOf is the cookie a preview form set.
func previewCookieOf(t *testing.T, r response) string {
	t.Helper()
	for _, sc := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(sc, previewCookie+"=") {
			v, _, _ := strings.Cut(strings.TrimPrefix(sc, previewCookie+"="), ";")
			return v
		}
	}
	t.Fatalf("no preview cookie: %v", r.Header.Values("Set-Cookie"))
	return ""
}

// Preview as a visitor and as a member: the pages are rendered as that
// viewer gets them (a members' post locked for the visitor, open for the
// member; no staff controls), with the bar that ends the preview, and no
// cache keeps or serves them; the cookie means nothing to anyone else, and
// the studio and writes stay the staff member's own.
func TestPreviewAsVisitorAndMember(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, err := ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	creatorSession := sessionFor(t, ts, "creator@demo.test")
	creator := withSession(creatorSession)
	r := ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"Platypus-members-secret for members","type":"POST","communityId":"`+
		demo.Community.ID+`","teaser":"A members teaser","access":{"audience":"MEMBERS","minTierId":null}}`), jsonHeaders(creator))
	if r.Status != 201 {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	postID := created.Data.ID
	postPath := "/apps/demo/posts/" + postID

	// The creator's own view: the post and the store's staff buttons.
	if r := ts.do(t, "GET", postPath, nil, creator); !strings.Contains(r.Body, "Platypus-members-secret") || strings.Contains(r.Body, "Previewing") {
		t.Fatalf("the creator's post: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/demo/store", nil, creator); !strings.Contains(r.Body, "New Item") {
		t.Fatal("the creator's store has no New Item")
	}

	switchTo := func(mode, back string) string {
		t.Helper()
		r := ts.do(t, "POST", "/apps/demo/studio/preview", strings.NewReader("mode="+mode+"&back="+url.QueryEscape(back)), form(creator))
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != back {
			t.Fatalf("preview %s: %d %s %.200s", mode, r.Status, r.Header.Get("Location"), r.Body)
		}
		return previewCookieOf(t, r)
	}
	with := func(cookie string) map[string]string {
		return map[string]string{"Cookie": sessionCookie + "=" + creatorSession + "; " + previewCookie + "=" + cookie}
	}

	visitor := switchTo("visitor", postPath)
	for range 2 {
		r = ts.do(t, "GET", postPath, nil, with(visitor))
		if r.Status != 200 || strings.Contains(r.Body, "Platypus-members-secret") || !strings.Contains(r.Body, `data-testid="locked-post"`) ||
			!strings.Contains(r.Body, "Previewing as a visitor") || !strings.Contains(r.Body, "Exit preview") {
			t.Fatalf("previewed as a visitor: %d locked=%v bar=%v", r.Status, strings.Contains(r.Body, "locked-post"), strings.Contains(r.Body, "Previewing"))
		}
		if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") || r.Header.Get("X-Page-Cache") == "hit" {
			t.Fatalf("a preview is cached: %q %q", cc, r.Header.Get("X-Page-Cache"))
		}
	}
	if r := ts.do(t, "GET", "/apps/demo/store", nil, with(visitor)); strings.Contains(r.Body, "New Item") || !strings.Contains(r.Body, "Store Access Required") {
		t.Error("the visitor's preview of the store shows staff buttons or no sign-in prompt")
	}
	// The studio stays the creator's.
	if r := ts.do(t, "GET", "/apps/demo/studio/launch", nil, with(visitor)); r.Status != 200 || !strings.Contains(r.Body, "Your app is published") {
		t.Errorf("the studio during a preview: %d", r.Status)
	}

	member := switchTo("member", "/apps/demo/store")
	r = ts.do(t, "GET", postPath, nil, with(member))
	if !strings.Contains(r.Body, "Platypus-members-secret") || strings.Contains(r.Body, `data-testid="locked-post"`) || !strings.Contains(r.Body, "Previewing as a member") {
		t.Errorf("previewed as a member: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/demo/store", nil, with(member)); strings.Contains(r.Body, "New Item") || !strings.Contains(r.Body, "Previewing as a member") {
		t.Error("the member's preview of the store shows staff buttons")
	}

	// Nobody else is served a preview, whatever cookie they send.
	for _, who := range []struct {
		name string
		h    map[string]string
	}{
		{"visitor", map[string]string{"Cookie": previewCookie + "=" + member}},
		{"follower", map[string]string{"Cookie": sessionCookie + "=" + sessionFor(t, ts, "follower@demo.test") + "; " + previewCookie + "=" + member}},
		{"moderator", map[string]string{"Cookie": sessionCookie + "=" + sessionFor(t, ts, "moderator@demo.test") + "; " + previewCookie + "=" + visitor}},
	} {
		for _, p := range []string{postPath, "/apps/demo/community", "/apps/demo"} {
			r := ts.do(t, "GET", p, nil, who.h)
			if strings.Contains(r.Body, "Previewing") || (who.name != "moderator" && strings.Contains(r.Body, "Platypus-members-secret")) {
				t.Errorf("the %s's %s shows a preview", who.name, p)
			}
		}
	}

	// Exit: back to the page, cookie gone, the creator's own view.
	r = ts.do(t, "POST", "/apps/demo/studio/preview", strings.NewReader("mode=off&back="+url.QueryEscape(postPath)), form(with(member)))
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != postPath || !strings.Contains(strings.Join(r.Header.Values("Set-Cookie"), ";"), "Max-Age=0") {
		t.Fatalf("exit: %d %s %v", r.Status, r.Header.Get("Location"), r.Header.Values("Set-Cookie"))
	}
	// A back address outside the app is not followed.
	r = ts.do(t, "POST", "/apps/demo/studio/preview", strings.NewReader("mode=visitor&back="+url.QueryEscape("https://evil.test/apps/demo")), form(creator))
	if r.Header.Get("Location") != "/apps/demo" {
		t.Errorf("back outside the app: %s", r.Header.Get("Location"))
	}
	// Below admin, no preview.
	if r := ts.do(t, "POST", "/apps/demo/studio/preview", strings.NewReader("mode=visitor"), form(withSession(sessionFor(t, ts, "moderator@demo.test")))); r.Status != 403 {
		t.Errorf("a moderator previews: %d", r.Status)
	}
}

// A preview reaches every read of the app, pages and JSON alike: none of
// them fails for the creator previewing as a visitor or as a member (the
// scope is a visitor's, without a user, behind a signed-in request).
func TestPreviewOnEveryRead(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	fx, viewers, follower := newRoleFixture(t, ts, db)
	var creator *roleViewer
	for _, v := range viewers {
		if v.role == store.RoleCreator {
			creator = v
		}
	}
	for _, mode := range []string{store.PreviewVisitor, store.PreviewMember} {
		for _, row := range roleTable(fx, follower) {
			key := row.method + " " + row.path
			if row.site != "main" || row.method != http.MethodGet || notAnAppsRoute[key] {
				continue
			}
			target, _ := row.req(creator)
			h := creator.headers()
			h["Cookie"] += "; " + previewCookie + "=" + mode + "." + fx.appID
			r := ts.do(t, row.method, target, nil, h)
			if r.Status >= 500 {
				t.Errorf("%s previewed as a %s: %d %.300s", key, mode, r.Status, r.Body)
			}
			if r.Header.Get("X-Page-Cache") == "hit" {
				t.Errorf("%s previewed as a %s: answered from the page cache", key, mode)
			}
		}
	}
}

// While an app is unpublished it announces nothing to its members below
// staff (a post's notice goes to its moderators and admins only); once
// published again, to everyone.
func TestUnpublishedAppAnnouncesToStaffOnly(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, err := ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	creator := jsonHeaders(withSession(sessionFor(t, ts, "creator@demo.test")))
	announce := func(text string) {
		t.Helper()
		if r := ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"`+text+`","type":"POST","communityId":"`+demo.Community.ID+`"}`), creator); r.Status != 201 {
			t.Fatalf("post: %d %s", r.Status, r.Body)
		}
		var jobs []store.JobOutbox
		if err := ts.store.DB().NewSelect().Model(&jobs).Where("kind = ?", store.JobNotifyFanOut).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			var n store.Notice
			if err := json.Unmarshal([]byte(j.Args), &n); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(n.Text, text) {
				if _, err := ts.store.FanOut(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	got := func(email, text string) bool {
		n, err := ts.store.DB().NewSelect().Table("notifications").Where("app_id = ? AND user_id = ? AND content LIKE ?",
			demo.ID, ts.userID(t, email), "%"+text+"%").Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if _, err := ts.store.SetAppPublished(ctx, demo.ID, "", false); err != nil {
		t.Fatal(err)
	}
	announce("Quokka-while-unpublished")
	for email, want := range map[string]bool{"follower@demo.test": false, "subscriber@demo.test": false, "moderator@demo.test": true, "admin@demo.test": true} {
		if g := got(email, "Quokka-while-unpublished"); g != want {
			t.Errorf("unpublished: %s notified %v, want %v", email, g, want)
		}
	}
	if _, err := ts.store.SetAppPublished(ctx, demo.ID, "", true); err != nil {
		t.Fatal(err)
	}
	announce("Quokka-published")
	if !got("follower@demo.test", "Quokka-published") {
		t.Error("published: the follower is not notified")
	}
}
