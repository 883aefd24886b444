package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"golang.org/x/net/dns/dnsmessage"

	"marquee/server/domains"
	"marquee/server/jobs"
	"marquee/store"
)

const fans = "fans.example.test"

// onHost is a request's headers on a host other than main.test.
func onHost(host string, extra ...string) map[string]string {
	h := map[string]string{"Host": host}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

func (ts *testServer) addVerifiedDomain(t *testing.T, appName, domain string) *store.AppDomain {
	t.Helper()
	app, err := ts.store.AppByIDOrName(context.Background(), appName)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ts.addDomain(context.Background(), app.ID, "", domain, true)
	if err != nil {
		t.Fatalf("add %s to %s: %v", domain, appName, err)
	}
	return d
}

func firstPostID(t *testing.T, ts *testServer) string {
	t.Helper()
	demo, err := ts.store.Landing(context.Background(), "demo")
	if err != nil || len(demo.RecentPosts) == 0 {
		t.Fatalf("demo posts: %v", err)
	}
	return demo.RecentPosts[0].ID
}

// A verified domain serves its app at its root (issue 42 item 3): the
// landing, the community and a post, with links without /apps/{name} and
// every absolute URL (canonical, Open Graph, JSON-LD, sitemap, Atom feed,
// calendar, robots.txt) on the domain; /apps/{app} on the main host answers
// 301 there; an unknown host, an unverified domain and another app's paths
// answer 404; removing the domain brings the app back to /apps/{app}.
func TestCustomDomainServesApp(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	postID := firstPostID(t, ts)
	// Cached on the main host first: the domain's pages must not reuse them.
	for _, p := range []string{"/apps/demo", "/apps/demo/community", "/apps/demo/posts/" + postID} {
		ts.do(t, "GET", p, nil, nil)
		ts.do(t, "GET", p, nil, nil)
	}
	ts.addVerifiedDomain(t, "demo", fans)
	origin := "http://" + fans

	for _, p := range []string{"/", "/community", "/posts/" + postID, "/store", "/events"} {
		for round := 0; round < 2; round++ { // a miss, then the page cache (and its fast path)
			r := ts.do(t, "GET", p, nil, onHost(fans))
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s on %s: %d %.300s", p, fans, r.Status, r.Body)
			}
			if !strings.Contains(r.Body, `rel="canonical" href="`+origin) {
				t.Errorf("GET %s on %s: canonical not on the domain: %.2000s", p, fans, r.Body)
			}
			if !strings.Contains(r.Body, `property="og:url" content="`+origin) {
				t.Errorf("GET %s on %s: og:url not on the domain", p, fans)
			}
			if strings.Contains(r.Body, `href="/apps/demo/community"`) || strings.Contains(r.Body, `href="http://main.test/apps/demo`) {
				t.Errorf("GET %s on %s: links to the main site's app paths", p, fans)
			}
			if !strings.Contains(r.Body, `href="/community"`) {
				t.Errorf("GET %s on %s: no link to /community", p, fans)
			}
		}
	}
	// A member's pages, islands included (forms, like buttons, the header's
	// actions), link the domain's own paths too.
	member := sessionFor(t, ts, "creator@demo.test")
	for _, p := range []string{"/", "/posts/" + postID, "/profile", "/store", "/events"} {
		r := ts.do(t, "GET", p, nil, onHost(fans, "Cookie", sessionCookie+"="+member))
		if r.Status != http.StatusOK && r.Status != http.StatusNotFound {
			t.Errorf("GET %s as a member on %s: %d", p, fans, r.Status)
		}
		for _, bad := range []string{`href="/apps/demo`, `action="/apps/demo`} {
			if strings.Contains(r.Body, bad) {
				i := strings.Index(r.Body, bad)
				t.Errorf("GET %s as a member on %s: %s...: %.200s", p, fans, bad, r.Body[i:])
			}
		}
		if r.Status == http.StatusOK && !strings.Contains(r.Body, `class="on-domain"`) && !strings.Contains(r.Body, ` on-domain"`) {
			t.Errorf("GET %s on %s: the body does not say it is on the domain", p, fans)
		}
	}
	if r := ts.do(t, "GET", "/posts/"+postID, nil, onHost(fans)); !strings.Contains(r.Body, origin+"/posts/"+postID) {
		t.Errorf("post JSON-LD/canonical not on the domain: %.3000s", r.Body)
	}

	// Feeds and crawlers.
	if r := ts.do(t, "GET", "/sitemap.xml", nil, onHost(fans)); r.Status != 200 || !strings.Contains(r.Body, "<loc>"+origin+"/</loc>") ||
		!strings.Contains(r.Body, origin+"/posts/") || strings.Contains(r.Body, "main.test") {
		t.Errorf("sitemap on the domain: %d %.1500s", r.Status, r.Body)
	}
	if r := ts.do(t, "GET", "/feed.xml", nil, onHost(fans)); r.Status != 200 || !strings.Contains(r.Body, origin+"/posts/") || strings.Contains(r.Body, "main.test/apps") {
		t.Errorf("Atom feed on the domain: %d %.1500s", r.Status, r.Body)
	}
	if r := ts.do(t, "GET", "/robots.txt", nil, onHost(fans)); !strings.Contains(r.Body, "Sitemap: "+origin+"/sitemap.xml") {
		t.Errorf("robots.txt on the domain: %.500s", r.Body)
	}
	if r := ts.do(t, "GET", "/sitemap.xml", nil, nil); strings.Contains(r.Body, "/apps/demo/sitemap.xml") {
		t.Errorf("the main sitemap index still lists the app: %.500s", r.Body)
	}
	var eventID string
	if err := ts.store.DB().NewSelect().Table("events").Column("id").Where("app_id = (SELECT id FROM apps WHERE name = 'demo')").
		Where("access_audience = '' OR access_audience = 'PUBLIC' OR access_audience IS NULL").Limit(1).Scan(context.Background(), &eventID); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "GET", "/events/"+eventID+"/calendar.ics", nil, onHost(fans)); r.Status != 200 || !strings.Contains(r.Body, origin+"/events/"+eventID) {
		t.Errorf("calendar file on the domain: %d %.800s", r.Status, r.Body)
	}

	// The installed app's scope is the domain's root.
	if r := ts.do(t, "GET", "/manifest.webmanifest", nil, onHost(fans)); r.Status != 200 ||
		!strings.Contains(r.Body, `"start_url":"/"`) || !strings.Contains(r.Body, `"scope":"/"`) {
		t.Errorf("manifest on the domain: %d %.500s", r.Status, r.Body)
	}

	// The main host sends the app's pages to the domain.
	for p, want := range map[string]string{"/apps/demo": origin + "/", "/apps/demo/community": origin + "/community",
		"/apps/demo/posts/" + postID + "?x=1": origin + "/posts/" + postID + "?x=1"} {
		r := ts.do(t, "GET", p, nil, nil)
		if r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != want {
			t.Errorf("GET %s on the main host: %d %q, want 301 to %s", p, r.Status, r.Header.Get("Location"), want)
		}
	}
	// On the domain, a script's /apps/demo/x link goes to /x.
	if r := ts.do(t, "GET", "/apps/demo/store", nil, onHost(fans)); r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != "/store" {
		t.Errorf("/apps/demo/store on the domain: %d %q", r.Status, r.Header.Get("Location"))
	}
	// Never another app, never the main site.
	for _, p := range []string{"/apps/acme", "/apps/acme/community", "/apps", "/metrics", "/internal/domains/allowed?domain=" + fans} {
		if r := ts.do(t, "GET", p, nil, onHost(fans)); r.Status != http.StatusNotFound {
			t.Errorf("GET %s on %s: %d, want 404", p, fans, r.Status)
		}
	}
	other, err := ts.store.Landing(context.Background(), "acme")
	if err == nil {
		if r := ts.do(t, "GET", "/api/app/"+other.ID+"/landing", nil, onHost(fans)); r.Status != http.StatusNotFound {
			t.Errorf("another app's landing API on %s: %d, want 404", fans, r.Status)
		}
	}
	if r := ts.do(t, "GET", "/api/app/demo/landing", nil, onHost(fans)); r.Status != http.StatusOK {
		t.Errorf("the app's own API on its domain: %d", r.Status)
	}
	for _, host := range []string{"unknown.example.test", "www." + fans} {
		if r := ts.do(t, "GET", "/", nil, onHost(host)); r.Status != http.StatusNotFound || strings.Contains(r.Body, "Demo") {
			t.Errorf("unknown host %s: %d %.200s", host, r.Status, r.Body)
		}
	}

	// An unverified domain serves nothing.
	app2, err := ts.store.AppByIDOrName(context.Background(), "acme")
	if err == nil {
		if _, err := ts.addDomain(context.Background(), app2.ID, "", "pending.example.test", false); err != nil {
			t.Fatal(err)
		}
		if r := ts.do(t, "GET", "/", nil, onHost("pending.example.test")); r.Status != http.StatusNotFound {
			t.Errorf("unverified domain: %d, want 404", r.Status)
		}
		if r := ts.do(t, "GET", "/apps/acme", nil, nil); r.Status != http.StatusOK {
			t.Errorf("an app with an unverified domain stays on the main site: %d", r.Status)
		}
	}

	// Removing the domain returns the app to /apps/demo.
	demo, _ := ts.store.AppByIDOrName(context.Background(), "demo")
	if err := ts.removeDomain(context.Background(), demo.ID, ""); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "GET", "/", nil, onHost(fans)); r.Status != http.StatusNotFound {
		t.Errorf("removed domain: %d, want 404", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/demo/community", nil, nil); r.Status != http.StatusOK || !strings.Contains(r.Body, `href="/apps/demo/community"`) ||
		!strings.Contains(r.Body, `rel="canonical" href="http://main.test/apps/demo/community"`) {
		t.Errorf("after removal, /apps/demo/community: %d", r.Status)
	}
}

// A domain belongs to one app: of 50 apps adding one domain at once
// through the API, exactly one gets it; the others are told why (409).
func TestCustomDomainOneApp(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	creator, err := ts.store.UserByEmail(ctx, "creator@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	token := sessionFor(t, ts, "creator@demo.test")
	const n = 50
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("race%02d", i)
		if _, err := ts.store.CreateApp(ctx, names[i], creator.ID); err != nil {
			t.Fatal(err)
		}
	}
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range names {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := ts.do(t, "PUT", "/api/studio/apps/"+names[i]+"/domain", strings.NewReader(`{"domain":"Race.Example.test."}`),
				withSession(token, "Content-Type", "application/json"))
			statuses[i] = r.Status
			if r.Status == http.StatusConflict && !strings.Contains(r.Body, "used by another app") {
				t.Errorf("409 without why: %s", r.Body)
			}
		}(i)
	}
	wg.Wait()
	won := 0
	for i, st := range statuses {
		switch st {
		case http.StatusOK:
			won++
		case http.StatusConflict:
		default:
			t.Errorf("%s: %d", names[i], st)
		}
	}
	if won != 1 {
		t.Fatalf("%d apps got the domain, want 1: %v", won, statuses)
	}
	list, err := ts.store.ListDomains(ctx)
	if err != nil || len(list) != 1 || list[0].Domain != "race.example.test" {
		t.Fatalf("domains: %+v %v", list, err)
	}
	// The studio form says the same beside the field.
	loser := names[0]
	if list[0].AppName == loser {
		loser = names[1]
	}
	r := ts.do(t, "POST", "/apps/"+loser+"/studio/domain", strings.NewReader("domain=race.example.test"),
		withSession(token, "Content-Type", "application/x-www-form-urlencoded"))
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, "already used by another app") {
		t.Errorf("studio form for a taken domain: %d %.300s", r.Status, r.Body)
	}
	// Bad names and the platform's own hosts are refused.
	for _, bad := range []string{"", "https://x.example.com/", "localhost", "127.0.0.1", "main.test", "auth.test", "nodot", "-a.example.com"} {
		r := ts.do(t, "PUT", "/api/studio/apps/"+loser+"/domain", strings.NewReader(`{"domain":"`+bad+`"}`),
			withSession(token, "Content-Type", "application/json"))
		if r.Status != http.StatusBadRequest {
			t.Errorf("domain %q: %d %s", bad, r.Status, r.Body)
		}
	}
}

// dnsServer is a tiny DNS server answering TXT questions from txt (by name,
// with the final dot), for the domain verification tests.
type dnsServer struct {
	addr string
	mu   sync.Mutex
	txt  map[string][]string
}

func startDNS(t *testing.T) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	d := &dnsServer{addr: pc.LocalAddr().String(), txt: map[string][]string{}}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.EnableCompression()
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			d.mu.Lock()
			values, ok := d.txt[q.Name.String()]
			d.mu.Unlock()
			if ok && q.Type == dnsmessage.TypeTXT {
				for _, v := range values { // one record each
					b.TXTResource(dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeTXT, Class: dnsmessage.ClassINET, TTL: 1},
						dnsmessage.TXTResource{TXT: []string{v}})
				}
			}
			out, err := b.Finish()
			if err != nil {
				continue
			}
			if !ok {
				out[3] = out[3]&0xf0 | 3 // NXDOMAIN
			}
			pc.WriteTo(out, from)
		}
	}()
	return d
}

func (d *dnsServer) set(name string, values ...string) {
	d.mu.Lock()
	d.txt[name+"."] = values
	d.mu.Unlock()
}

// A domain is verified by its TXT record, asked of the resolver
// DNS_RESOLVER names: the verify_domain job fails (and river retries it)
// until the record appears, recording why; then the domain serves its
// app. Check now (form and API) asks at once; a resolver that never answers
// fails within DNS_TIMEOUT.
func TestCustomDomainVerification(t *testing.T) {
	t.Parallel()
	dns := startDNS(t)
	ts := newTestServerWith(t, demoDB(t), func(c *Config) { c.DNSResolver, c.DNSTimeout = dns.addr, 2*time.Second })
	ctx := context.Background()
	token := sessionFor(t, ts, "creator@demo.test")
	form := withSession(token, "Content-Type", "application/x-www-form-urlencoded")

	r := ts.do(t, "POST", "/apps/demo/studio/domain", strings.NewReader("domain=Fans.Example.Test"), form)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("add: %d %.300s", r.Status, r.Body)
	}
	page := ts.do(t, "GET", "/apps/demo/studio/domain", nil, withSession(token))
	d, err := ts.store.DomainOfApp(ctx, mustApp(t, ts, "demo").ID)
	if err != nil || d.State != store.DomainPending {
		t.Fatalf("domain after add: %+v %v", d, err)
	}
	for _, want := range []string{"_marquee-verify." + fans, "marquee-verify=" + d.Token, "CNAME", "main.test", "Check now"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("studio domain screen lacks %q", want)
		}
	}
	// The job was enqueued with the write.
	var kinds []string
	if err := ts.store.DB().NewSelect().Table("job_outbox").Column("kind").Scan(ctx, &kinds); err != nil || !strings.Contains(strings.Join(kinds, ","), "verify_domain") {
		t.Errorf("verify_domain not enqueued: %v %v", kinds, err)
	}

	worker := &jobs.VerifyDomainWorker{Store: ts.store, Checker: domains.Checker{Resolver: dns.addr, Timeout: 2 * time.Second}}
	job := &river.Job[jobs.VerifyDomainArgs]{Args: jobs.VerifyDomainArgs{AppID: d.AppID, Domain: fans}}
	if err := worker.Work(ctx, job); err == nil {
		t.Fatal("verified without a TXT record")
	}
	d, _ = ts.store.DomainOfApp(ctx, d.AppID)
	if d.State != store.DomainFailed || !strings.Contains(d.LastError, "no TXT record") {
		t.Errorf("after a failed check: %+v", d)
	}
	if r := ts.do(t, "GET", "/", nil, onHost(fans)); r.Status != http.StatusNotFound {
		t.Errorf("unverified domain served: %d", r.Status)
	}
	// A wrong value is named.
	dns.set("_marquee-verify."+fans, "marquee-verify=wrong")
	if r := ts.do(t, "POST", "/apps/demo/studio/domain/check", nil, form); r.Status != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "domain-unverified") {
		t.Errorf("Check now with a wrong record: %d %s", r.Status, r.Header.Get("Location"))
	}
	if page := ts.do(t, "GET", "/apps/demo/studio/domain", nil, withSession(token)); !strings.Contains(page.Body, "does not say") {
		t.Errorf("the screen does not say why: %.3000s", page.Body)
	}
	// The record appears: the job verifies, and the domain serves the app.
	dns.set("_marquee-verify."+fans, "v=spf1 -all", "marquee-verify="+d.Token)
	if err := worker.Work(ctx, job); err != nil {
		t.Fatalf("job with the record: %v", err)
	}
	if d, _ = ts.store.DomainOfApp(ctx, d.AppID); d.State != store.DomainVerified || d.VerifiedAt == nil {
		t.Fatalf("after the record: %+v", d)
	}
	ts.domains.changed(ctx) // the job ran outside the server (another process)
	if r := ts.do(t, "GET", "/", nil, onHost(fans)); r.Status != http.StatusOK {
		t.Errorf("verified domain: %d", r.Status)
	}
	// The API answers the same.
	api := ts.do(t, "GET", "/api/studio/apps/demo/domain", nil, withSession(token))
	if api.Status != 200 || !strings.Contains(api.Body, `"state":"verified"`) || !strings.Contains(api.Body, `"url":"http://`+fans+`/"`) {
		t.Errorf("GET domain API: %d %s", api.Status, api.Body)
	}

	// Check now through the API, against a resolver that never answers.
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	slow := domains.Checker{Resolver: silent.LocalAddr().String(), Timeout: 500 * time.Millisecond}
	start := time.Now()
	err = slow.Check(ctx, "other.example.test", "x")
	if err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(start) > 3*time.Second {
		t.Errorf("silent resolver: %v after %s", err, time.Since(start))
	}
	if r := ts.do(t, "POST", "/api/studio/apps/acme/domain/check", nil, withSession(token)); r.Status != http.StatusNotFound && r.Status != http.StatusForbidden {
		t.Errorf("check without a domain: %d %s", r.Status, r.Body)
	}
}

func mustApp(t *testing.T, ts *testServer, name string) *store.App {
	t.Helper()
	a, err := ts.store.AppByIDOrName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Signing in from a custom domain: the auth host hands the sign-in over
// with a one-time code, which the domain exchanges server-side for a
// cookie of its own (host-only). The code works once, for its domain, for
// a minute; signing out on the domain ends the auth host's session too.
func TestCustomDomainSignIn(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	ts.addVerifiedDomain(t, "demo", fans)

	// Signing in starts on the domain: its pages link its own
	// /authenticate/signin, which keeps a state and goes to the auth host.
	if r := ts.do(t, "GET", "/", nil, onHost(fans)); !strings.Contains(r.Body, `href="/authenticate/signin?app=demo"`) {
		t.Errorf("the domain's sign-in link: %.3000s", r.Body)
	}
	start := func() (state string) {
		t.Helper()
		r := ts.doSite(t, "main", "GET", "/authenticate/signin?app=demo", nil, onHost(fans))
		loc, _ := url.Parse(r.Header.Get("Location"))
		if r.Status != http.StatusSeeOther || loc == nil || loc.Host != "auth.test" || loc.Path != "/authenticate/continue" || loc.Query().Get("state") == "" {
			t.Fatalf("start on the domain: %d %q", r.Status, r.Header.Get("Location"))
		}
		for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
			if ck.Name == stateCookie && ck.Value == loc.Query().Get("state") && ck.Domain == "" && ck.HttpOnly {
				return ck.Value
			}
		}
		t.Fatalf("no state cookie: %v", r.Header.Values("Set-Cookie"))
		return ""
	}
	state := start()
	// A visitor at continue is sent to sign in, the state kept on the auth host.
	r := ts.do(t, "GET", "/authenticate/continue?app=demo&page=signin&state="+url.QueryEscape(state), nil, nil)
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "http://auth.test/authenticate/signin?app=demo" ||
		!strings.Contains(strings.Join(r.Header.Values("Set-Cookie"), ";"), handoffCookie+"="+state) {
		t.Fatalf("continue as a visitor: %d %q %v", r.Status, r.Header.Get("Location"), r.Header.Values("Set-Cookie"))
	}
	res := ts.do(t, "POST", "/authenticate/signin?app=demo",
		strings.NewReader(url.Values{"email": {"creator@demo.test"}, "password": {"demo-password"}}.Encode()), formHeaders)
	if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "http://auth.test/authenticate/continue?app=demo" {
		t.Fatalf("sign in: %d %q", res.Status, res.Header.Get("Location"))
	}
	authToken := cookieValue(t, res.Header)
	code := func(state string) string {
		t.Helper()
		r := ts.do(t, "GET", "/authenticate/continue?app=demo", nil, withSession(authToken, "Cookie", sessionCookie+"="+authToken+"; "+handoffCookie+"="+state))
		loc, _ := url.Parse(r.Header.Get("Location"))
		if r.Status != http.StatusSeeOther || loc == nil || loc.Host != fans || loc.Path != "/auth/callback" || loc.Query().Get("code") == "" || loc.Query().Get("state") != state {
			t.Fatalf("continue: %d %q", r.Status, r.Header.Get("Location"))
		}
		return loc.Query().Get("code")
	}
	callback := func(host, code, state, cookieState string) response {
		t.Helper()
		h := onHost(host)
		if cookieState != "" {
			h["Cookie"] = stateCookie + "=" + cookieState
		}
		return ts.do(t, "GET", "/auth/callback?"+url.Values{"code": {code}, "state": {state}}.Encode(), nil, h)
	}
	c1 := code(state)
	// Someone else's code, without this browser's state: refused
	// (login CSRF), and not spent.
	if r := callback(fans, c1, state, ""); r.Status != http.StatusBadRequest {
		t.Errorf("callback without the state cookie: %d", r.Status)
	}
	if r := callback(fans, c1, state, "other-state"); r.Status != http.StatusBadRequest {
		t.Errorf("callback with another state: %d", r.Status)
	}
	cb := callback(fans, c1, state, state)
	if cb.Status != http.StatusSeeOther || cb.Header.Get("Location") != "/" {
		t.Fatalf("callback: %d %q %.300s", cb.Status, cb.Header.Get("Location"), cb.Body)
	}
	var domainToken string
	for _, ck := range (&http.Response{Header: cb.Header}).Cookies() {
		if ck.Name == sessionCookie {
			domainToken = ck.Value
			if ck.Domain != "" || !ck.HttpOnly {
				t.Errorf("domain cookie: %+v", ck)
			}
		}
	}
	if domainToken == "" || domainToken == authToken {
		t.Fatalf("no session of the domain's own: %q", domainToken)
	}
	me := ts.do(t, "GET", "/api/auth/me", nil, onHost(fans, "Cookie", sessionCookie+"="+domainToken))
	if me.Status != 200 || !strings.Contains(me.Body, "creator") {
		t.Fatalf("me on the domain: %d %s", me.Status, me.Body)
	}
	// Once only.
	if r := callback(fans, c1, state, state); r.Status != http.StatusBadRequest {
		t.Errorf("code used twice: %d", r.Status)
	}
	// For one domain: another app's domain refuses it (and it is spent).
	ts.addVerifiedDomain(t, "acme", "other.example.test")
	s2 := start()
	c2 := code(s2)
	if r := callback("other.example.test", c2, s2, s2); r.Status != http.StatusBadRequest {
		t.Errorf("code on another domain: %d", r.Status)
	}
	if r := callback(fans, c2, s2, s2); r.Status != http.StatusBadRequest {
		t.Errorf("code tried on another domain still works: %d", r.Status)
	}
	// For a minute.
	s3 := start()
	c3 := code(s3)
	if _, err := ts.store.DB().NewUpdate().Table("domain_sign_ins").Set("expires_at = ?", time.Now().Add(-time.Second)).Where("1 = 1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r := callback(fans, c3, s3, s3); r.Status != http.StatusBadRequest {
		t.Errorf("expired code: %d", r.Status)
	}
	// The main site has no callback.
	if r := ts.do(t, "GET", "/apps/acme/auth/callback?code=x", nil, nil); r.Status != http.StatusNotFound && r.Status != http.StatusMovedPermanently {
		t.Errorf("callback on the main site: %d", r.Status)
	}
	// A sign-in that did not start on the domain is sent there to start.
	if r := ts.do(t, "GET", "/authenticate/continue?app=demo", nil, withSession(authToken)); r.Header.Get("Location") != "http://"+fans+"/authenticate/signin" {
		t.Errorf("continue without a state: %d %q", r.Status, r.Header.Get("Location"))
	}

	// Signing out on the domain ends both sessions.
	out := ts.do(t, "POST", "/api/auth/logout", nil, onHost(fans, "Cookie", sessionCookie+"="+domainToken))
	if out.Status != 200 {
		t.Fatalf("logout on the domain: %d %s", out.Status, out.Body)
	}
	for _, tok := range []string{domainToken, authToken} {
		if _, err := ts.store.SessionUser(ctx, tok); err == nil {
			t.Errorf("a session survived the sign-out")
		}
	}
}

// GET /internal/domains/allowed?domain= (Caddy's on-demand TLS ask): 200
// for a verified domain, 404 for any other.
func TestInternalDomainsAllowed(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ts.addVerifiedDomain(t, "demo", fans)
	if _, err := ts.addDomain(context.Background(), mustApp(t, ts, "acme").ID, "", "pending.example.test", false); err != nil {
		t.Fatal(err)
	}
	for domain, want := range map[string]int{fans: 200, "FANS.example.test.": 200, "pending.example.test": 404, "unknown.example.test": 404, "": 404, "main.test": 404} {
		if r := ts.do(t, "GET", "/internal/domains/allowed?domain="+url.QueryEscape(domain), nil, nil); r.Status != want {
			t.Errorf("allowed?domain=%s: %d, want %d", domain, r.Status, want)
		}
	}
}
