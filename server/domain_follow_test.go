package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// Issue 42 item 5: everything else follows an app to its custom domain.

var canonicalRe = regexp.MustCompile(`<link rel="canonical" href="([^"]*)"`)

// A custom domain and the main host never share a viewer's bytes: the same
// app page asked on both hosts, for a visitor and a member, each time twice
// (a miss, then the page cache), answers each host's own canonical link,
// links and media, never the other's, in both directions (pages cached on
// the main host before the domain was verified, pages cached on the domain
// before it was removed). The JSON API on the domain names media on the
// domain too, and the domain serves them.
func TestCustomDomainAndMainHostNeverShareBytes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	postID := firstPostID(t, ts)
	member := sessionFor(t, ts, "follower@demo.test")
	paths := []string{"", "/community", "/posts/" + postID, "/store", "/events"}
	viewers := map[string]func(host string) map[string]string{
		"visitor": func(host string) map[string]string { return onHost(host) },
		"member":  func(host string) map[string]string { return onHost(host, "Cookie", sessionCookie+"="+member) },
	}
	const mainOrigin, domainOrigin = "http://main.test", "http://" + fans
	onMain := func(round string) {
		t.Helper()
		for who, h := range viewers {
			for _, p := range paths {
				for i := 0; i < 2; i++ {
					r := ts.do(t, "GET", "/apps/demo"+p, nil, h("main.test"))
					if r.Status != http.StatusOK {
						t.Fatalf("%s: main %s as %s: %d", round, p, who, r.Status)
					}
					m := canonicalRe.FindStringSubmatch(r.Body)
					if m == nil || m[1] != mainOrigin+"/apps/demo"+p {
						t.Errorf("%s: main %s as %s: canonical %v", round, p, who, m)
					}
					if strings.Contains(r.Body, fans) {
						t.Errorf("%s: main %s as %s names the domain", round, p, who)
					}
					if p == "" && !strings.Contains(r.Body, mainOrigin+"/media/i/") {
						t.Errorf("%s: main landing as %s: no media on the main host", round, who)
					}
				}
			}
		}
	}
	onDomain := func(round string) {
		t.Helper()
		for who, h := range viewers {
			for _, p := range paths {
				for i := 0; i < 2; i++ {
					dp := p
					if dp == "" {
						dp = "/"
					}
					r := ts.do(t, "GET", dp, nil, h(fans))
					if r.Status != http.StatusOK {
						t.Fatalf("%s: %s %s as %s: %d", round, fans, dp, who, r.Status)
					}
					m := canonicalRe.FindStringSubmatch(r.Body)
					if m == nil || m[1] != domainOrigin+dp && !(dp == "/" && m[1] == domainOrigin) {
						t.Errorf("%s: %s %s as %s: canonical %v", round, fans, dp, who, m)
					}
					for _, bad := range []string{"main.test/apps/", "main.test/media/", `href="/apps/demo`} {
						if i := strings.Index(r.Body, bad); i >= 0 {
							t.Errorf("%s: %s %s as %s carries %s: %.120s", round, fans, dp, who, bad, r.Body[max(0, i-60):])
						}
					}
					if p == "" && !strings.Contains(r.Body, domainOrigin+"/media/i/") {
						t.Errorf("%s: the domain's landing as %s: no media on the domain", round, who)
					}
				}
			}
		}
	}

	onMain("before the domain")
	ts.addVerifiedDomain(t, "demo", fans)
	onDomain("domain verified")

	// Media: the page's og:image, the landing's JSON and its images are
	// on the domain, and the domain serves them.
	landing := ts.do(t, "GET", "/", nil, onHost(fans))
	og := regexp.MustCompile(`<meta property="og:image" content="([^"]*)"`).FindStringSubmatch(landing.Body)
	if og == nil || !strings.HasPrefix(og[1], domainOrigin+"/media/i/") {
		t.Errorf("og:image on the domain: %v", og)
	}
	api := ts.do(t, "GET", "/api/app/demo/landing", nil, onHost(fans))
	if api.Status != http.StatusOK || strings.Contains(api.Body, "main.test/media/") || !strings.Contains(api.Body, `"`+domainOrigin+`/media/i/`) {
		t.Errorf("landing JSON on the domain: %d %.400s", api.Status, api.Body)
	}
	if main := ts.do(t, "GET", "/api/app/demo/landing", nil, nil); strings.Contains(main.Body, fans) {
		t.Errorf("the main host's landing JSON names the domain")
	}
	var view struct {
		Data struct {
			Banner *store.MediaView `json:"banner"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(api.Body), &view); err != nil || view.Data.Banner == nil {
		t.Fatalf("landing JSON: %v", err)
	}
	path := strings.TrimPrefix(view.Data.Banner.SignedURL, domainOrigin)
	if r := ts.do(t, "GET", path, nil, onHost(fans)); r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "image/") {
		t.Errorf("the banner on the domain (%s): %d %s", path, r.Status, r.Header.Get("Content-Type"))
	}
	// The service worker is the domain's own (a push subscription belongs
	// to the origin whose worker made it): TestServiceWorkerPerOrigin.
	if r := ts.do(t, "GET", "/sw.js", nil, onHost(fans)); r.Status != http.StatusOK || r.Header.Get("Service-Worker-Allowed") != "/" {
		t.Errorf("sw.js on the domain: %d, Service-Worker-Allowed %q", r.Status, r.Header.Get("Service-Worker-Allowed"))
	}
	// Payment returns come back to the domain.
	sc := &Scope{App: &store.AppView{ID: mustApp(t, ts, "demo").ID, Name: "demo"}}
	if got := ts.appURL(sc, "/payment-success", nil); got != domainOrigin+"/payment-success" {
		t.Errorf("payment return URL: %s", got)
	}

	demoID := mustApp(t, ts, "demo").ID
	if err := ts.removeDomain(context.Background(), demoID, ""); err != nil {
		t.Fatal(err)
	}
	onMain("domain removed")
	if got := ts.appURL(sc, "/payment-success", nil); got != mainOrigin+"/apps/demo/payment-success" {
		t.Errorf("payment return URL after removal: %s", got)
	}
	ts.addVerifiedDomain(t, "demo", fans)
	onDomain("domain added again")
}

// Rate limits count a member's writes wherever they are made: a comment on
// the app's domain and one on the main host draw on the same allowance (a
// second host never doubles it).
func TestCustomDomainSharesRateLimits(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ts.limits.Comments = Rate{2, time.Minute}
	ids := commLoad(t, ts)
	// Before the domain serves the app, a comment on the main host.
	token := sessionFor(t, ts, "follower@demo.test")
	comment := fmt.Sprintf(`{"content":"nice","parentMessageId":%q}`, ids.demoPost)
	if r := ts.do(t, "POST", "/api/messages", strings.NewReader(comment), withSession(token, "Content-Type", "application/json")); r.Status != http.StatusCreated {
		t.Fatalf("comment on the main host: %d %s", r.Status, r.Body)
	}
	ts.addVerifiedDomain(t, "demo", fans)
	onFans := onHost(fans, "Cookie", sessionCookie+"="+token, "Content-Type", "application/json", "Origin", "http://"+fans)
	if r := ts.do(t, "POST", "/api/messages", strings.NewReader(comment), onFans); r.Status != http.StatusCreated {
		t.Fatalf("comment on the domain: %d %s", r.Status, r.Body)
	}
	if r := ts.do(t, "POST", "/api/messages", strings.NewReader(comment), onFans); r.Status != http.StatusTooManyRequests {
		t.Errorf("third comment, on the domain: %d, want 429", r.Status)
	}
	if r := ts.do(t, "POST", "/api/messages", strings.NewReader(comment), withSession(token, "Content-Type", "application/json")); r.Status != http.StatusTooManyRequests {
		t.Errorf("third comment, on the main host: %d, want 429", r.Status)
	}
}

// A push's link opens the app's domain straight away (no redirect through
// the main host), from a subscription made on either origin.
func TestPushLinksOnTheAppsDomain(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ts.cfg.PushAllowLoopbackHTTP = true
	ts.push.Client = &http.Client{Timeout: 15 * time.Second}
	startJobs(t, ts, db)
	ids := commLoad(t, ts)
	ts.addVerifiedDomain(t, "demo", fans)
	pr := newPushReceiver(t)
	auth := base64.RawURLEncoding.EncodeToString(pr.auth)
	follower := sessionFor(t, ts, "follower@demo.test")
	// One subscription from the main site's worker (made before the
	// domain), one from the domain's: the link is the domain's either way,
	// and the domain's subscription is the one used.
	for _, h := range []map[string]string{
		withSession(follower, "Content-Type", "application/json"),
		onHost(fans, "Cookie", sessionCookie+"="+follower, "Content-Type", "application/json", "Origin", "http://"+fans),
	} {
		ep := pr.srv.URL + "/" + h["Host"]
		r := ts.do(t, "POST", "/api/notifications/enable-push/demo", body(map[string]string{"endpoint": ep, "p256dh": pr.p256dh(), "auth": auth}), h)
		if r.Status != http.StatusCreated {
			t.Fatalf("enable push (%s): %d %s", h["Host"], r.Status, r.Body)
		}
	}
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Doors open at 7", "type": "POST", "communityId": ids.demoCommunity}), commUser(t, ts, "creator@demo.test"))
	if r.Status != http.StatusCreated {
		t.Fatal(r.Body)
	}
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	eventually(t, "the push", func() bool {
		pr.mu.Lock()
		defer pr.mu.Unlock()
		return len(pr.payloads)+len(pr.errs) >= 1
	})
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if len(pr.errs) > 0 {
		t.Fatalf("receiver: %v", pr.errs)
	}
	// Once, to the domain's worker (TestPushOncePerMemberAcrossOrigins).
	for _, p := range pr.paths {
		if p != "/"+fans {
			t.Errorf("a push went to %s, not the domain's subscription", p)
		}
	}
	for _, raw := range pr.payloads {
		var p struct{ URL string }
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatal(err)
		}
		if p.URL != "http://"+fans+"/posts/"+created.Data.ID {
			t.Errorf("push link: %s", p.URL)
		}
	}
}

// A custom domain added, verified and removed is in the app's audit log,
// with who did it: the creator in the studio, the verify_domain job or the
// operator's CLI as nobody in particular.
func TestDomainChangesInAuditLog(t *testing.T) {
	t.Parallel()
	dns := startDNS(t)
	ts := newTestServerWith(t, demoDB(t), func(c *Config) { c.DNSResolver, c.DNSTimeout = dns.addr, 2*time.Second })
	ctx := context.Background()
	demo := mustApp(t, ts, "demo")
	token := sessionFor(t, ts, "creator@demo.test")
	form := withSession(token, "Content-Type", "application/x-www-form-urlencoded")
	lines := func() []store.AuditView {
		t.Helper()
		all, err := ts.store.AuditLog(ctx, demo.ID, 50)
		if err != nil {
			t.Fatal(err)
		}
		var out []store.AuditView
		for _, a := range all {
			if strings.HasPrefix(a.Action, "domain.") {
				out = append(out, a)
			}
		}
		return out
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/domain", strings.NewReader("domain="+fans), form); r.Status != http.StatusSeeOther {
		t.Fatalf("add: %d", r.Status)
	}
	// Check now, twice without the record (no line), then with it (one).
	ts.do(t, "POST", "/apps/demo/studio/domain/check", nil, form)
	d, _ := ts.store.DomainOfApp(ctx, demo.ID)
	dns.set("_marquee-verify."+fans, "marquee-verify="+d.Token)
	for i := 0; i < 2; i++ {
		if r := ts.do(t, "POST", "/apps/demo/studio/domain/check", nil, form); !strings.Contains(r.Header.Get("Location"), "domain-verified") {
			t.Fatalf("check: %d %s", r.Status, r.Header.Get("Location"))
		}
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/domain/remove", nil, form); r.Status != http.StatusSeeOther {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	// The operator adds another, verified, and takes it away again.
	if _, err := AddAppDomain(ctx, ts.cfg, ts.store, demo.ID, "", "www.example.test", true); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.RemoveDomain(ctx, demo.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.RemoveDomain(ctx, demo.ID, ""); err != nil { // none left: no line
		t.Fatal(err)
	}
	got := lines()
	want := []struct{ actor, action, detail string }{ // newest first
		{"", store.ActionDomainRemove, "www.example.test"},
		{"", store.ActionDomainAdd, "www.example.test (verified by the operator)"},
		{"creator", store.ActionDomainRemove, fans},
		{"creator", store.ActionDomainVerify, fans + ": its TXT record was found"},
		{"creator", store.ActionDomainAdd, fans},
	}
	if len(got) != len(want) {
		t.Fatalf("audit lines: %+v", got)
	}
	for i, w := range want {
		if got[i].Actor != w.actor || got[i].Action != w.action || got[i].Detail != w.detail {
			t.Errorf("line %d: %+v, want %+v", i, got[i], w)
		}
	}
	// The studio's audit log shows them.
	if r := ts.do(t, "GET", "/apps/demo/studio/moderation", nil, withSession(token)); !strings.Contains(r.Body, "domain.verify") || !strings.Contains(r.Body, fans) {
		t.Errorf("the studio's audit log lacks the domain's lines")
	}
}
