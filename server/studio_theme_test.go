package server

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"

	"marquee/store"
)

// TestStudioTheme: the creator saves a theme from the studio form (no
// JavaScript) and by the JSON call; a colour that fails contrast is refused
// with 400, the ratio and a passing suggestion, and nothing is saved. The
// saved theme is in the server HTML of the app's pages (custom properties
// in the head, the theme-color meta, the font from our own origin), in
// the app's cached landing at once (the page cache is dropped), in the
// app's sign-in page on the auth site, in the app JSON and in the manifest.
// The preview page wears a proposal without saving it. Followers are refused.
func TestStudioTheme(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	creator, fan := ts.as(t, "creator@demo.test"), ts.as(t, follower)
	page := "/apps/demo/studio/theme"

	if r := send(t, fan, "GET", page, ""); r.Status != 403 {
		t.Fatalf("a follower opened the theme screen: %d", r.Status)
	}
	if r := send(t, creator, "GET", page, ""); r.Status != 200 || !strings.Contains(r.Body, `name="primaryColor"`) || !strings.Contains(r.Body, `value="#7c3aed"`) {
		t.Fatalf("screen: %d %.300s", r.Status, r.Body)
	}
	// The landing is cached for visitors before the change.
	ts.visit(t, "/apps/demo", "")
	if body := ts.visit(t, "/apps/demo", "hit"); strings.Contains(body, "#0b6e4f") {
		t.Fatal("the landing has the new colour before it is set")
	}

	bad := url.Values{"primaryColor": {"#8b9dff"}, "accentColor": {"#0b6e4f"}, "scheme": {"light"}, "font": {"lora"}, "corners": {"square"}}
	r := send(t, creator, "POST", page, bad.Encode())
	if r.Status != 400 || !strings.Contains(r.Body, "2.51:1") || !strings.Contains(r.Body, "Try #5a66a6") || !strings.Contains(r.Body, `value="#8b9dff"`) {
		t.Fatalf("refused form: %d %.600s", r.Status, r.Body)
	}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); app.Settings.Theme != (store.ThemeSettings{}) {
		t.Fatalf("a refused form saved %+v", app.Settings.Theme)
	}

	// The preview page wears the proposal, unsaved.
	preview := url.Values{"primaryColor": {"#0b6e4f"}, "accentColor": {"#9a3412"}, "scheme": {"light"}, "font": {"lora"}, "corners": {"square"}}
	r = send(t, creator, "GET", page+"/preview?"+preview.Encode(), "")
	if r.Status != 200 || !strings.Contains(r.Body, "--accent:#0b6e4f") || !strings.Contains(r.Body, "Preview:") {
		t.Fatalf("preview: %d %.600s", r.Status, r.Body)
	}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); app.Settings.Theme != (store.ThemeSettings{}) {
		t.Fatalf("the preview saved %+v", app.Settings.Theme)
	}

	r = send(t, creator, "POST", page, preview.Encode())
	if r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), page+"?notice=saved") {
		t.Fatalf("saved form: %d %s %.300s", r.Status, r.Header.Get("Location"), r.Body)
	}
	want := store.ThemeSettings{PrimaryColor: "#0b6e4f", AccentColor: "#9a3412", Scheme: "light", Font: "lora", Corners: "square"}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); app.Settings.Theme != want {
		t.Fatalf("saved %+v", app.Settings.Theme)
	}

	// Every app page has it in its head, without JavaScript; the cached
	// landing was dropped.
	for _, path := range []string{"/apps/demo", "/apps/demo/community", "/apps/demo/store"} {
		body := ts.visit(t, path, "")
		head := body[:strings.Index(body, "</head>")]
		for _, w := range []string{`<style id="theme">`, "--accent:#0b6e4f", "--accent2:#9a3412", "--radius:2px", `"Lora"`,
			`src:url(/static/fonts/lora-latin-wght-normal.woff2)`, `<meta name="theme-color" content="#0b6e4f">`} {
			if !strings.Contains(head, w) {
				t.Errorf("%s head lacks %s", path, w)
			}
		}
	}
	// Each bundled font is a woff2 file in public/ (served at /static).
	for _, f := range store.ThemeFonts[1:] {
		b, err := os.ReadFile("../public" + strings.TrimPrefix(f.File, "/static"))
		if err != nil || len(b) < 10000 || string(b[:4]) != "wOF2" {
			t.Errorf("font %s: %v (%d bytes)", f.File, err, len(b))
		}
	}
	// An error page inside the app too.
	if r := ts.do(t, "GET", "/apps/demo/posts/aaaaaaaaaaaaaaaaaaaaaaaaaa", nil, nil); r.Status != 404 || !strings.Contains(r.Body, "--accent:#0b6e4f") {
		t.Errorf("the app's 404 page lacks the theme: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/nosuchapp", nil, nil); r.Status != 404 || strings.Contains(r.Body, `<style id="theme">`) {
		t.Errorf("an unknown app's 404 wears a theme: %d", r.Status)
	}
	// The app's sign-in on the auth site.
	if r := ts.do(t, "GET", "/authenticate/signin?app=demo", nil, nil); r.Status != 200 || !strings.Contains(r.Body, "--accent:#0b6e4f") {
		t.Errorf("sign-in page lacks the theme: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/authenticate/signin", nil, nil); strings.Contains(r.Body, "--accent:#0b6e4f") {
		t.Error("the site's own sign-in wears an app's theme")
	}
	// The manifest.
	m := ts.do(t, "GET", "/apps/demo/manifest.webmanifest", nil, nil)
	var man webManifest
	if err := json.Unmarshal([]byte(m.Body), &man); err != nil || man.ThemeColor != "#0b6e4f" || man.BackgroundColor != "#ffffff" {
		t.Errorf("manifest: %v %+v", err, man)
	}

	// The JSON call: refused with the ratio, saved, and in the app JSON.
	resp := send(t, creator, "PUT", "/api/studio/apps/demo/theme", `{"primaryColor":"#0b6e4f","scheme":"dark"}`)
	if resp.Status != 400 || !strings.Contains(resp.Body, `"primaryColor"`) || !strings.Contains(resp.Body, "#111827") || !strings.Contains(resp.Body, "Try #") {
		t.Fatalf("dark green on dark: %d %s", resp.Status, resp.Body)
	}
	resp = send(t, creator, "PUT", "/api/studio/apps/demo/theme", `{"primaryColor":"#8b9dff","accentColor":"#fbbf24","scheme":"dark","font":"inter"}`)
	if resp.Status != 200 || !strings.Contains(resp.Body, `"primaryColor":"#8b9dff"`) || !strings.Contains(resp.Body, `"corners":"rounded"`) {
		t.Fatalf("PUT: %d %s", resp.Status, resp.Body)
	}
	landing := ts.do(t, "GET", "/api/app/demo/landing", nil, nil)
	if !strings.Contains(landing.Body, `"theme":{"primaryColor":"#8b9dff","accentColor":"#fbbf24","scheme":"dark","font":"inter","corners":""}`) {
		t.Errorf("app JSON lacks the theme: %.300s", landing.Body[strings.Index(landing.Body, `"settings"`):])
	}
	body := ts.visit(t, "/apps/demo", "")
	if !strings.Contains(body, "--bg:#111827") || !strings.Contains(body, "--accent-fg:#111827") || !strings.Contains(body, "color-scheme:dark") {
		t.Errorf("dark landing lacks its colours")
	}
	m = ts.do(t, "GET", "/apps/demo/manifest.webmanifest", nil, nil)
	if err := json.Unmarshal([]byte(m.Body), &man); err != nil || man.ThemeColor != "#8b9dff" || man.BackgroundColor != "#111827" {
		t.Errorf("dark manifest: %v %+v", err, man)
	}
	if r := send(t, fan, "PUT", "/api/studio/apps/demo/theme", `{}`); r.Status != 403 {
		t.Errorf("a follower saved a theme: %d", r.Status)
	}
}
