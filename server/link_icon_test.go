package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/riverqueue/river"

	"marquee/server/jobs"
	"marquee/store"
)

// Link-in-bio favicons (issue 27, item 7) come from our origin: the landing
// page names no third-party service; the first request for a link's icon
// enqueues one durable fetch and gets a placeholder; the fetched image is
// kept and served from then on; only the app's own link domains are served;
// a site without a usable icon keeps the placeholder; and the default
// client never dials a private address.
func TestLinkIconsFromOurOrigin(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	icon := "/apps/demo/link-icons/github.com"
	ts.run(t, []scenario{
		{name: "landing uses our origin", path: "/apps/demo", status: 200,
			contains: []string{icon, "/apps/demo/link-icons/www.youtube.com"}, absent: []string{"google.com/s2/favicons", "favicons?domain"}},
		{name: "a domain the app does not link", path: "/apps/demo/link-icons/evil.test", status: 404},
		{name: "a disabled link's domain", path: "/apps/demo/link-icons/soundcloud.com", status: 404},
	})
	fetches := func() int {
		n, err := ts.store.DB().NewSelect().Model((*store.JobOutbox)(nil)).Where("kind = ?", jobs.FetchLinkIconArgs{}.Kind()).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	for range 3 {
		r := ts.do(t, "GET", icon, nil, nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "image/svg+xml" || r.Header.Get("Cache-Control") != "public, max-age=300" {
			t.Fatalf("pending icon: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
		}
	}
	if n := fetches(); n != 1 {
		t.Fatalf("%d fetches enqueued for one domain, want 1", n)
	}

	// The job fetches it (a local site stands in for github.com).
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/github.com/favicon.ico":
			w.Header().Set("Content-Type", "text/html") // the bytes decide, not the claim
			_, _ = w.Write(png)
		case "/www.youtube.com/favicon.ico":
			_, _ = io.WriteString(w, "<html>not an icon</html>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	worker := &jobs.FetchLinkIconWorker{Store: ts.store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Client: site.Client(),
		URLFor: func(d string) string { return site.URL + "/" + d + "/favicon.ico" }}
	work := func(domain string) error {
		return worker.Work(ctx, &river.Job[jobs.FetchLinkIconArgs]{Args: jobs.FetchLinkIconArgs{Domain: domain}})
	}
	if err := work("github.com"); err != nil {
		t.Fatal(err)
	}
	r := ts.do(t, "GET", icon, nil, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/png" || !bytes.Equal([]byte(r.Body), png) {
		t.Fatalf("fetched icon: %d %s %d bytes", r.Status, r.Header.Get("Content-Type"), len(r.Body))
	}
	if r.Header.Get("Cache-Control") != "public, max-age=604800" {
		t.Fatalf("fetched icon cache: %s", r.Header.Get("Cache-Control"))
	}

	// A site answering with something that is not an image has no icon.
	ts.do(t, "GET", "/apps/demo/link-icons/www.youtube.com", nil, nil)
	if err := work("www.youtube.com"); err != nil {
		t.Fatal(err)
	}
	if ic, err := ts.store.LinkIcon(ctx, "www.youtube.com"); err != nil || ic.Status != store.LinkIconMissing {
		t.Fatalf("youtube icon: %+v %v", ic, err)
	}
	r = ts.do(t, "GET", "/apps/demo/link-icons/www.youtube.com", nil, nil)
	if r.Header.Get("Content-Type") != "image/svg+xml" || r.Header.Get("Cache-Control") != "public, max-age=86400" {
		t.Fatalf("missing icon: %s %s", r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
	}

	// The real client refuses a name that resolves to this machine: marked
	// missing, never fetched.
	ts.do(t, "GET", "/apps/demo/link-icons/example.com", nil, nil)
	local := &jobs.FetchLinkIconWorker{Store: ts.store, Logger: worker.Logger, URLFor: func(string) string { return site.URL + "/github.com/favicon.ico" }}
	if err := local.Work(ctx, &river.Job[jobs.FetchLinkIconArgs]{Args: jobs.FetchLinkIconArgs{Domain: "example.com"}}); err != nil {
		t.Fatal(err)
	}
	if ic, err := ts.store.LinkIcon(ctx, "example.com"); err != nil || ic.Status != store.LinkIconMissing {
		t.Fatalf("a local address was fetched: %+v %v", ic, err)
	}
}
