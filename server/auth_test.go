package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

const demoPassword = "demo-password"

var formHeaders = map[string]string{"Content-Type": "application/x-www-form-urlencoded"}

// signInToken signs in through the auth site's form and returns the token
// of the cookie it set.
func signInToken(t *testing.T, ts *testServer, login, password string) string {
	t.Helper()
	res := ts.do(t, "POST", "/authenticate/signin?app=demo",
		strings.NewReader(url.Values{"email": {login}, "password": {password}}.Encode()), formHeaders)
	if res.Status != http.StatusSeeOther {
		t.Fatalf("sign in %s: status %d: %s", login, res.Status, res.Body)
	}
	return cookieValue(t, res.Header)
}

func cookieValue(t *testing.T, h http.Header) string {
	t.Helper()
	for _, ck := range (&http.Response{Header: h}).Cookies() {
		if ck.Name == sessionCookie {
			return ck.Value
		}
	}
	t.Fatalf("no %s cookie in %v", sessionCookie, h.Values("Set-Cookie"))
	return ""
}

func withSession(token string, extra ...string) map[string]string {
	h := map[string]string{"Cookie": sessionCookie + "=" + token}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

func TestSignUpSignInAndOut(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)

	page := ts.do(t, "GET", "/authenticate/signup?app=demo", nil, nil)
	if page.Status != http.StatusOK {
		t.Fatalf("signup page: %d", page.Status)
	}
	for _, want := range []string{"Demo Studio", `action="/authenticate/signup?app=demo"`, `name="username"`, "Sign Up",
		`<link rel="manifest" href="/manifest.webmanifest">`} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("signup page lacks %q", want)
		}
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "form-action") {
		t.Errorf("CSP on auth page: %q", csp)
	}

	// A failed sign-up shows the errors and keeps what was typed, never the password.
	bad := ts.do(t, "POST", "/authenticate/signup?app=demo", strings.NewReader(url.Values{
		"email": {"new@demo.test"}, "username": {"x"}, "password": {"short-secret"[:5]}}.Encode()), formHeaders)
	if bad.Status != http.StatusBadRequest {
		t.Fatalf("bad signup status %d", bad.Status)
	}
	for _, want := range []string{`value="new@demo.test"`, "Use 3 to 30 letters", "at least 8 characters"} {
		if !strings.Contains(bad.Body, want) {
			t.Errorf("bad signup page lacks %q", want)
		}
	}
	if strings.Contains(bad.Body, `value="short"`) {
		t.Error("the password was echoed back")
	}
	taken := ts.do(t, "POST", "/authenticate/signup", strings.NewReader(url.Values{
		"email": {"Creator@Demo.test"}, "username": {"someone"}, "password": {"long-enough-pw"}}.Encode()), formHeaders)
	if taken.Status != http.StatusConflict || !strings.Contains(taken.Body, "already exists") {
		t.Errorf("taken email: %d", taken.Status)
	}

	// Sign-up succeeds: 303 to the page that says where the confirmation
	// mail went (TestSignUpSaysWhereTheMailWent), with a session cookie.
	ok := ts.do(t, "POST", "/authenticate/signup?app=demo", strings.NewReader(url.Values{
		"email": {"New@Demo.test"}, "username": {"newbie"}, "password": {"long-enough-pw"}}.Encode()), formHeaders)
	if ok.Status != http.StatusSeeOther || ok.Header.Get("Location") != "/authenticate/welcome?app=demo" {
		t.Fatalf("signup: %d to %q: %s", ok.Status, ok.Header.Get("Location"), ok.Body)
	}
	raw := ok.Header.Get("Set-Cookie")
	for _, flag := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(raw, flag) {
			t.Errorf("cookie %q lacks %s", raw, flag)
		}
	}
	if strings.Contains(raw, "Secure") {
		t.Errorf("cookie over http must not be Secure: %q", raw)
	}
	first := cookieValue(t, ok.Header)
	if len(first) < 22 { // 22 base64 characters carry 128 bits
		t.Errorf("token too short: %d characters", len(first))
	}
	// The new password is hashed at the server's Config.PasswordCost (the
	// tests' cheap one), recorded in the hash.
	var stored string
	if err := db.NewSelect().Model((*store.User)(nil)).Column("password_hash").Where("username = ?", "newbie").Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=", testPasswordCost.MemoryKiB, testPasswordCost.Passes); !strings.HasPrefix(stored, want) {
		t.Errorf("stored hash %.40q, want the configured cost %q", stored, want)
	}
	me := ts.do(t, "GET", "/api/auth/me", nil, withSession(first))
	if me.Status != http.StatusOK || !strings.Contains(me.Body, `"username":"newbie"`) || !strings.Contains(me.Body, `"email":{"email":"new@demo.test"}`) {
		t.Fatalf("me after signup: %d %s", me.Status, me.Body)
	}

	// Token rotation: every sign-in (by email or username) gets a new token;
	// the old one stays valid until it is logged out itself.
	second := signInToken(t, ts, "newbie", "long-enough-pw")
	third := signInToken(t, ts, "NEW@demo.test", "long-enough-pw")
	if second == first || third == second {
		t.Fatal("sign-in reused a token")
	}
	if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(first)); res.Status != http.StatusOK {
		t.Errorf("old token before its logout: %d", res.Status)
	}
	out := ts.do(t, "POST", "/api/auth/logout", nil, withSession(first))
	if out.Status != http.StatusOK || !strings.Contains(out.Body, `"success":true`) || !strings.Contains(out.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %s %q", out.Status, out.Body, out.Header.Get("Set-Cookie"))
	}
	// Replay after logout answers 401; the other sessions live on.
	replay := ts.do(t, "GET", "/api/auth/me", nil, withSession(first))
	if replay.Status != http.StatusUnauthorized || !strings.Contains(replay.Body, `"success":false`) {
		t.Errorf("replay after logout: %d %s", replay.Status, replay.Body)
	}
	if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(second)); res.Status != http.StatusOK {
		t.Errorf("other session after logout: %d", res.Status)
	}

	// Wrong password re-renders the form with the login kept; JSON works too.
	wrong := ts.do(t, "POST", "/authenticate/signin?app=demo",
		strings.NewReader(url.Values{"email": {"newbie"}, "password": {"wrong-password"}}.Encode()), formHeaders)
	if wrong.Status != http.StatusUnauthorized || !strings.Contains(wrong.Body, `value="newbie"`) || !strings.Contains(wrong.Body, "Invalid email") {
		t.Errorf("wrong password: %d", wrong.Status)
	}
	js := ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(`{"email":"creator@demo.test","password":"demo-password"}`),
		map[string]string{"Content-Type": "application/json"})
	if js.Status != http.StatusOK || !strings.Contains(js.Body, `"redirectTo":"http://main.test/apps/demo"`) {
		t.Errorf("json sign-in: %d %s", js.Status, js.Body)
	}

	// ?app= only ever names an existing app: anything else goes to the root.
	for _, app := range []string{"https://evil.example", "//evil.example", "nope"} {
		res := ts.do(t, "POST", "/authenticate/signin?app="+url.QueryEscape(app),
			strings.NewReader(url.Values{"email": {"newbie"}, "password": {"long-enough-pw"}}.Encode()), formHeaders)
		if res.Header.Get("Location") != "http://main.test/" {
			t.Errorf("app=%s redirected to %q", app, res.Header.Get("Location"))
		}
	}

	// Main-site entry points send the browser to the auth site.
	for target, want := range map[string]string{
		"/signin":           "http://auth.test/authenticate/signin",
		"/signin?app=demo":  "http://auth.test/authenticate/signin?app=demo",
		"/apps/demo/signin": "http://auth.test/authenticate/signin?app=demo",
	} {
		res := ts.do(t, "GET", target, nil, nil)
		if res.Status != http.StatusFound || res.Header.Get("Location") != want {
			t.Errorf("%s: %d to %q, want %q", target, res.Status, res.Header.Get("Location"), want)
		}
	}
	if res := ts.do(t, "GET", "/apps/nope/signin", nil, nil); res.Status != http.StatusNotFound {
		t.Errorf("unknown app signin: %d", res.Status)
	}
}

func TestSecureSharedCookieOverHTTPS(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ts.cfg.PublicURL = "https://main.test"
	ts.cfg.CookieDomain = "main.test"
	res := ts.do(t, "POST", "/authenticate/signin", strings.NewReader(url.Values{"email": {"creator@demo.test"}, "password": {demoPassword}}.Encode()), formHeaders)
	cookie := res.Header.Get("Set-Cookie")
	if res.Status != http.StatusSeeOther || !strings.Contains(cookie, "; Secure") || !strings.Contains(cookie, "Domain=main.test") {
		t.Errorf("https cookie shared with the parent domain: %d %q", res.Status, cookie)
	}
}

func TestCrossSiteWritesRefused(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	member, err := ts.store.UserByEmail(ctx, "member@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	token := signInToken(t, ts, "member@demo.test", demoPassword)
	demo, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	crossSite := []map[string]string{
		withSession(token, "Sec-Fetch-Site", "cross-site"),
		withSession(token, "Origin", "https://evil.example"),
	}
	for _, h := range crossSite {
		for _, target := range []string{"/api/notifications/follow/demo", "/api/auth/logout", "/api/messages"} {
			if res := ts.do(t, "POST", target, strings.NewReader("{}"), h); res.Status != http.StatusForbidden {
				t.Errorf("cross-site POST %s with %v: %d", target, h, res.Status)
			}
		}
		res := ts.do(t, "POST", "/authenticate/signin", strings.NewReader("email=member%40demo.test&password=demo-password"),
			map[string]string{"Content-Type": formHeaders["Content-Type"], "Sec-Fetch-Site": h["Sec-Fetch-Site"], "Origin": h["Origin"]})
		if res.Status != http.StatusForbidden || res.Header.Get("Set-Cookie") != "" {
			t.Errorf("cross-site sign-in with %v: %d", h, res.Status)
		}
	}
	// Nothing changed: no membership, the session still works.
	if m, err := ts.store.MembershipOf(ctx, demo.ID, member.ID); err != nil || m != nil {
		t.Errorf("cross-site follow created %v (%v)", m, err)
	}
	if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(token)); res.Status != http.StatusOK {
		t.Errorf("cross-site logout ended the session: %d", res.Status)
	}
	// Cross-site reads still work, and the auth site is a trusted origin.
	if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(token, "Sec-Fetch-Site", "cross-site")); res.Status != http.StatusOK {
		t.Errorf("cross-site GET: %d", res.Status)
	}
	res := ts.do(t, "POST", "/api/notifications/follow/demo", strings.NewReader("{}"),
		withSession(token, "Sec-Fetch-Site", "same-site", "Origin", "http://auth.test"))
	if res.Status != http.StatusOK {
		t.Errorf("write from the auth site: %d %s", res.Status, res.Body)
	}
	if res := ts.do(t, "POST", "/api/notifications/unfollow/demo", strings.NewReader("{}"),
		withSession(token, "Sec-Fetch-Site", "same-origin")); res.Status != http.StatusOK {
		t.Errorf("same-origin write: %d", res.Status)
	}
}

// redisRateKeyPrefix is where a server whose store has no namespace (the
// tests') keeps its counters in Redis.
const redisRateKeyPrefix = "rate:marquee:ratelimit:"

func TestSignInRateLimit(t *testing.T) {
	t.Run("in process", func(t *testing.T) { testSignInRateLimit(t, newTestServer(t, demoDB(t))) })
	t.Run("redis", func(t *testing.T) {
		ts := newTestServer(t, demoDB(t))
		rdb := storetest.Redis(t)
		ts.limiter.useRedis(rdb)
		// Counters outlive a run by their window: start and end with none.
		clear := func() {
			if keys, _ := rdb.Keys(context.Background(), redisRateKeyPrefix+"*").Result(); len(keys) > 0 {
				rdb.Del(context.Background(), keys...)
			}
		}
		clear()
		t.Cleanup(clear)
		testSignInRateLimit(t, ts)
		if keys, _ := rdb.Keys(context.Background(), redisRateKeyPrefix+"signin:*").Result(); len(keys) == 0 {
			t.Error("the limit was not counted in redis")
		}
	})
}

func testSignInRateLimit(t *testing.T, ts *testServer) {
	d := DefaultLimits()
	accountLimit, addressLimit := d.SignInAccount.Limit, d.SignInAddress.Limit
	attempt := func(login, password string) response {
		return ts.do(t, "POST", "/authenticate/signin?app=demo",
			strings.NewReader(url.Values{"email": {login}, "password": {password}}.Encode()), formHeaders)
	}
	// Successful sign-ins do not count: more good sign-ins than the limit
	// in one window all work.
	for i := 0; i < accountLimit+5; i++ {
		if res := attempt("follower@demo.test", demoPassword); res.Status != http.StatusSeeOther {
			t.Fatalf("good sign-in %d: %d", i+1, res.Status)
		}
	}
	// Per account: the e-mail and the username of one account share one
	// counter, so alternating them still stops at the limit; the next
	// attempt is refused even with the right password, and says when to
	// come back.
	for i := 0; i < accountLimit; i++ {
		login := "follower@demo.test"
		if i%2 == 1 {
			login = "Follower"
		}
		if res := attempt(login, "wrong-password"); res.Status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, res.Status)
		}
	}
	for _, login := range []string{"follower@demo.test", "follower"} {
		res := attempt(login, demoPassword)
		if res.Status != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || res.Header.Get("Set-Cookie") != "" {
			t.Fatalf("%s over the account limit: %d, Retry-After %q", login, res.Status, res.Header.Get("Retry-After"))
		}
		if !strings.Contains(res.Body, "Too many attempts") {
			t.Error("429 page lacks its message")
		}
	}
	// Another account is untouched by the locked one.
	if res := attempt("subscriber@demo.test", demoPassword); res.Status != http.StatusSeeOther {
		t.Fatalf("other account: %d", res.Status)
	}
	// Per address: failed attempts on other accounts from the same client
	// run out at the address limit (the two refused attempts above counted).
	for i := accountLimit + 2; i < addressLimit; i++ {
		if res := attempt("nobody"+string(rune('a'+i))+"@demo.test", "wrong-password"); res.Status != http.StatusUnauthorized {
			t.Fatalf("address attempt %d: %d", i+1, res.Status)
		}
	}
	js := ts.do(t, "POST", "/authenticate/signin", strings.NewReader(`{"email":"creator@demo.test","password":"demo-password"}`),
		map[string]string{"Content-Type": "application/json"})
	if js.Status != http.StatusTooManyRequests || js.Header.Get("Retry-After") == "" {
		t.Fatalf("over the address limit: %d", js.Status)
	}
	var body struct {
		Success bool
		Message string
	}
	if err := json.Unmarshal([]byte(js.Body), &body); err != nil || body.Success || body.Message == "" {
		t.Errorf("429 JSON: %s", js.Body)
	}
}

func TestSubscriptionGate(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	if err := ts.store.SetAppField(ctx, "demo", "features.subscriptionGating.settings.required", "true"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		email  string
		path   string
		status int
	}{
		{"", "/apps/demo/community", http.StatusFound},
		{"follower@demo.test", "/apps/demo/community", http.StatusFound},
		// Every deeper path SPEC names leads home, the profile included (issue 27).
		{"follower@demo.test", "/apps/demo/profile", http.StatusFound},
		{"follower@demo.test", "/apps/demo", http.StatusOK},
		{"subscriber@demo.test", "/apps/demo/community", http.StatusOK},
		{"moderator@demo.test", "/apps/demo/community", http.StatusOK},
		{"admin@demo.test", "/apps/demo/community", http.StatusOK},
		{"creator@demo.test", "/apps/demo/community", http.StatusOK},
		// acme has no gating: admin@demo.test's follow there is untouched.
		{"admin@demo.test", "/apps/acme/community", http.StatusOK},
	}
	for _, tc := range cases {
		var h map[string]string
		if tc.email != "" {
			h = withSession(sessionFor(t, ts, tc.email))
		}
		res := ts.do(t, "GET", tc.path, nil, h)
		if res.Status != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.email, tc.path, res.Status, tc.status)
		}
		if res.Status == http.StatusFound && res.Header.Get("Location") != "/apps/demo" {
			t.Errorf("%s %s redirected to %q", tc.email, tc.path, res.Header.Get("Location"))
		}
	}
	// The footer hides for a gated viewer, and shows for a subscriber.
	if res := ts.do(t, "GET", "/apps/demo", nil, withSession(sessionFor(t, ts, "follower@demo.test"))); strings.Contains(res.Body, `data-island="Footer"`) {
		t.Error("gated follower sees the footer")
	}
	if res := ts.do(t, "GET", "/apps/demo", nil, withSession(sessionFor(t, ts, "subscriber@demo.test"))); !strings.Contains(res.Body, `data-island="Footer"`) {
		t.Error("subscriber lost the footer")
	}
}

// sessionFor starts a session for a demo user without the sign-in form, so
// table tests do not run into the rate limit.
func sessionFor(t *testing.T, ts *testServer, email string) string {
	t.Helper()
	ctx := context.Background()
	u, err := ts.store.UserByEmail(ctx, email)
	if err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	token, err := ts.store.CreateSession(ctx, u.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// TestSessionsInRedis: with Redis, sessions are kept in the database and
// cached in Redis under the SHA-256 of the token with a bounded TTL.
func TestSessionsInRedis(t *testing.T) {
	rdb := storetest.Redis(t)
	ctx := context.Background()
	db := demoDB(t)
	ts := newTestServerStore(t, db, nil, func(o *store.Options) { o.Redis = rdb })
	// Counters outlive a test run by their window: start from none.
	clearCounters := func() {
		if keys, _ := rdb.Keys(ctx, redisRateKeyPrefix+"signin:*").Result(); len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	}
	clearCounters()
	t.Cleanup(clearCounters)

	token := signInToken(t, ts, "creator@demo.test", demoPassword)
	key := "marquee:session:" + sessionIDForTest(token)
	ttl, err := rdb.TTL(ctx, key).Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("session key %s ttl %v (%v)", key, ttl, err)
	}
	if n, _ := db.NewSelect().Model((*store.Session)(nil)).Where("id = ?", sessionIDForTest(token)).Count(ctx); n != 1 {
		t.Errorf("%d sessions in the database with Redis on, want 1", n)
	}
	if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(token)); res.Status != http.StatusOK {
		t.Fatalf("me with redis session: %d", res.Status)
	}
	if res := ts.do(t, "POST", "/api/auth/logout", nil, withSession(token)); res.Status != http.StatusOK {
		t.Fatalf("logout: %d", res.Status)
	}
	if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(token)); res.Status != http.StatusUnauthorized {
		t.Errorf("replay after logout with redis: %d", res.Status)
	}
	if n, _ := rdb.Exists(ctx, key).Result(); n != 0 {
		t.Error("logout left the session in redis")
	}
	if n, _ := db.NewSelect().Model((*store.Session)(nil)).Where("id = ?", sessionIDForTest(token)).Count(ctx); n != 0 {
		t.Error("logout left the session in the database")
	}
	// The rate limit counts in Redis too.
	keys, _ := rdb.Keys(ctx, redisRateKeyPrefix+"signin:*").Result()
	if len(keys) == 0 {
		t.Error("no rate-limit counters in redis")
	}
	rdb.Del(ctx, keys...)
}

func sessionIDForTest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
