package server

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"marquee/render"
)

var stylesheetLink = regexp.MustCompile(`<link rel="stylesheet" href="(/static/build/styles-[A-Z0-9]+\.css)">`)

// The stylesheet is one hashed file cached for a year; the landing and
// community pages inline only the first screen's rules and link the rest
// after their content; other pages link it in the head.
func TestStylesheetHashedAndCriticalInline(t *testing.T) {
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Echo serves /static from public/ under the working directory it
	// starts in: the project root, as `marquee serve` runs.
	t.Chdir(root)
	ts := newTestServer(t, demoDB(t))
	m := ts.renderer.Manifest()
	full, err := os.ReadFile(filepath.Join(root, m.CSS))
	if err != nil {
		t.Fatal(err)
	}
	wantURL := "/static/build/" + filepath.Base(m.CSS)

	for _, path := range []string{"/apps/demo", "/apps/demo/community"} {
		page := ts.do(t, "GET", path, nil, nil)
		if page.Status != http.StatusOK {
			t.Fatalf("%s: %d", path, page.Status)
		}
		link := stylesheetLink.FindStringSubmatch(page.Body)
		if link == nil || link[1] != wantURL || strings.Count(page.Body, `rel="stylesheet"`) != 1 {
			t.Fatalf("%s must link %s once", path, wantURL)
		}
		head, body, _ := strings.Cut(page.Body, "</head>")
		if !strings.Contains(body, link[0]) || !strings.Contains(body, "</main>") || strings.Index(body, link[0]) < strings.Index(body, "</main>") {
			t.Errorf("%s: the full stylesheet belongs after the content, where it does not hold the first paint", path)
		}
		style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(head)
		if style == nil || !strings.Contains(style[1], ".app-header{") || !strings.Contains(style[1], ".footer{") {
			t.Fatalf("%s: the critical CSS (header, footer) must be inline in the head", path)
		}
		// The whole stylesheet (30 KB) used to be inlined into every page.
		if len(style[1]) > 12_000 || len(style[1])*3 > len(full) {
			t.Errorf("%s: inline CSS is %d bytes of %d", path, len(style[1]), len(full))
		}
		if strings.Count(page.Body, "<style>") != 1 {
			t.Errorf("%s: one inline style only", path)
		}
	}

	// A page the critical CSS does not cover waits for the full stylesheet
	// rather than flashing unstyled.
	store := ts.do(t, "GET", "/apps/demo/store", nil, nil)
	head, _, _ := strings.Cut(store.Body, "</head>")
	if store.Status != http.StatusOK || !strings.Contains(head, `<link rel="stylesheet" href="`+wantURL+`">`) || strings.Contains(store.Body, "<style>") {
		t.Errorf("store page: %d, head %s", store.Status, head)
	}

	css := ts.do(t, "GET", wantURL, nil, nil)
	if css.Status != http.StatusOK || css.Body != string(full) {
		t.Fatalf("GET %s: %d (%d bytes)", wantURL, css.Status, len(css.Body))
	}
	if ct := css.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Errorf("content type %q", ct)
	}
	if cc := css.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("cache-control %q", cc)
	}
}
