package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/server/jobs"
	"marquee/server/mail/mailpittest"
	"marquee/store"
)

// mailServer is a test server whose mail goes to its own mailpit.
func mailServer(t *testing.T, configure func(*Config)) (*testServer, *mailpittest.Mailpit) {
	t.Helper()
	mp := mailpittest.Start(t)
	ts := newTestServerWith(t, demoDB(t), func(c *Config) {
		c.SMTPURL, c.MailFrom = mp.SMTPURL, "Ops <mail@marquee.test>"
		if configure != nil {
			configure(c)
		}
	})
	return ts, mp
}

// runMailJobs sends the mails waiting in the outbox as the queue's worker
// would (each send job once), and answers how many jobs ran.
// runResetJobs runs the queued forgot-password jobs as the worker does:
// each address that is an account's gets its reset mail queued.
func runResetJobs(t *testing.T, ts *testServer) int {
	t.Helper()
	ctx := context.Background()
	var resets []store.JobOutbox
	if err := ts.store.DB().NewSelect().Model(&resets).Where("kind = ?", store.JobPasswordReset).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range resets {
		var args jobs.PasswordResetArgs
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
			t.Fatal(err)
		}
		if err := jobs.PasswordReset(ctx, ts.store, args.PasswordResetJob); err != nil {
			t.Fatalf("password reset job: %v", err)
		}
		if _, err := ts.store.DB().NewDelete().Model((*store.JobOutbox)(nil)).Where("id = ?", r.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return len(resets)
}

func runMailJobs(t *testing.T, ts *testServer) int {
	t.Helper()
	ctx := context.Background()
	// Forgot-password requests become their mails first.
	runResetJobs(t, ts)
	var rows []store.JobOutbox
	if err := ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", store.JobSendMail).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var args jobs.SendMailArgs
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
			t.Fatal(err)
		}
		if err := jobs.SendMail(ctx, ts.store, ts.Mailer(), args.MailID); err != nil {
			t.Fatalf("send mail: %v", err)
		}
		if _, err := ts.store.DB().NewDelete().Model((*store.JobOutbox)(nil)).Where("id = ?", r.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return len(rows)
}

var linkToken = regexp.MustCompile(`token=([A-Za-z0-9_-]+)`)

func tokenIn(t *testing.T, text string) string {
	t.Helper()
	m := linkToken.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no token link in %q", text)
	}
	return m[1]
}

func userByEmail(t *testing.T, ts *testServer, email string) *store.User {
	t.Helper()
	u, err := ts.store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return u
}

// TestMailSentOnceInTheAppsNameWithOneClickUnsubscribe: a mail is written
// once per key with its job, sent once however often the job runs, in the
// app's name from the operator's address, with text and HTML parts; a
// non-transactional one carries List-Unsubscribe and List-Unsubscribe-Post
// and its one-click POST switches that e-mail off.
func TestMailSentOnceInTheAppsNameWithOneClickUnsubscribe(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	app, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	u := userByEmail(t, ts, "follower@demo.test")
	queue := func(key string, transactional bool) bool {
		ok, err := store.MailMember(ctx, ts.store.DB(), store.OutgoingMail{Key: key, Kind: store.KindNewOrder, AppID: app.ID, UserID: u.ID,
			Transactional: transactional, Content: store.MailContent{Subject: "Subject " + key, Heading: "Hello",
				Paragraphs: []string{"Body of " + key}, Rows: []store.MailRow{{Label: "Total", Value: "$5.00", Strong: true}},
				Action: &store.MailLink{Label: "Open", Path: "/apps/demo/orders"}}})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !queue("k1", false) || queue("k1", false) {
		t.Fatal("the same key must queue exactly once")
	}
	if n := runMailJobs(t, ts); n != 1 {
		t.Fatalf("send jobs %d, want 1", n)
	}
	// The job running again (a retry after a crash) sends nothing more.
	var m store.Mail
	if err := ts.store.DB().NewSelect().Model(&m).Where("mail_key = ?", "k1").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if m.SentAt == nil {
		t.Fatal("mail not marked sent")
	}
	if err := jobs.SendMail(ctx, ts.store, ts.Mailer(), m.ID); err != nil {
		t.Fatal(err)
	}
	got := mp.WaitFor(t, "follower@demo.test", 1)
	if n := len(mp.To(t, "follower@demo.test")); n != 1 {
		t.Fatalf("%d mails delivered, want 1", n)
	}
	if got.Subject != "Subject k1" || got.From.Address != "mail@marquee.test" || got.From.Name != "Demo Studio" {
		t.Fatalf("subject/from: %q %+v", got.Subject, got.From)
	}
	if !strings.Contains(got.Text, "Body of k1") || !strings.Contains(got.Text, "Total: $5.00") ||
		!strings.Contains(got.HTML, "Body of k1") || !strings.Contains(got.HTML, "http://main.test/apps/demo/orders") {
		t.Fatalf("parts: text %q html %q", got.Text, got.HTML)
	}
	lu := got.Headers["List-Unsubscribe"]
	if len(lu) != 1 || !strings.HasPrefix(lu[0], "<http://main.test/mail/unsubscribe/") {
		t.Fatalf("List-Unsubscribe %v", got.Headers)
	}
	if p := got.Headers["List-Unsubscribe-Post"]; len(p) != 1 || p[0] != "List-Unsubscribe=One-Click" {
		t.Fatalf("List-Unsubscribe-Post %v", p)
	}
	unsub := strings.TrimSuffix(strings.TrimPrefix(lu[0], "<http://main.test"), ">")

	// The page (GET) changes nothing; the one-click POST, from a mail
	// provider (no browser headers), switches the kind's e-mail off.
	if res := ts.do(t, "GET", unsub, nil, nil); res.Status != http.StatusOK || !strings.Contains(res.Body, "Unsubscribe") {
		t.Fatalf("unsubscribe page %d", res.Status)
	}
	if p, _ := ts.store.NotificationPreferences(ctx, app.ID, u.ID); len(p.EmailMuted()) != 0 {
		t.Fatal("GET must not unsubscribe")
	}
	res := ts.do(t, "POST", unsub, strings.NewReader("List-Unsubscribe=One-Click"), formHeaders)
	if res.Status != http.StatusOK {
		t.Fatalf("one-click: %d %s", res.Status, res.Body)
	}
	if p, _ := ts.store.NotificationPreferences(ctx, app.ID, u.ID); strings.Join(p.EmailMuted(), ",") != store.KindNewOrder {
		t.Fatalf("muted %v", p.EmailMuted())
	}
	if queue("k2", false) {
		t.Fatal("an unsubscribed kind must not be mailed")
	}
	// Transactional mail still goes, without List-Unsubscribe.
	if !queue("k3", true) {
		t.Fatal("transactional mail must be queued")
	}
	runMailJobs(t, ts)
	tx := mp.WaitFor(t, "follower@demo.test", 2)
	if tx.Subject != "Subject k3" || len(tx.Headers["List-Unsubscribe"]) != 0 {
		t.Fatalf("transactional: %q %v", tx.Subject, tx.Headers["List-Unsubscribe"])
	}
	if res := ts.do(t, "POST", "/mail/unsubscribe/nope", strings.NewReader("List-Unsubscribe=One-Click"), formHeaders); res.Status != http.StatusNotFound {
		t.Fatalf("unknown token: %d", res.Status)
	}
}

// TestPasswordReset: "Forgot password?" answers the same for any address,
// mails a single-use link to an account's, and the new password ends every
// other session and signs this browser in.
func TestPasswordReset(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	signin := ts.do(t, "GET", "/authenticate/signin?app=demo", nil, nil)
	if !strings.Contains(signin.Body, `href="/authenticate/forgot?app=demo"`) {
		t.Fatal("sign-in page has no Forgot password? link")
	}
	other1 := signInToken(t, ts, "follower@demo.test", "demo-password")
	other2 := signInToken(t, ts, "follower", "demo-password")

	ask := func(email string) response {
		return ts.do(t, "POST", "/authenticate/forgot?app=demo", strings.NewReader(url.Values{"email": {email}}.Encode()), formHeaders)
	}
	known, unknown := ask("Follower@demo.test"), ask("nobody@demo.test")
	if known.Status != http.StatusOK || unknown.Status != known.Status || !strings.Contains(known.Body, "If an account uses that address") ||
		!strings.Contains(unknown.Body, "If an account uses that address") {
		t.Fatalf("answers differ: %d %d", known.Status, unknown.Status)
	}
	if n := runMailJobs(t, ts); n != 1 {
		t.Fatalf("%d mails, want 1 (none for an unknown address)", n)
	}
	msg := mp.WaitFor(t, "follower@demo.test", 1)
	if msg.Subject != "Reset your password" || !strings.Contains(msg.Text, "http://auth.test/authenticate/reset?token=") {
		t.Fatalf("reset mail: %q %q", msg.Subject, msg.Text)
	}
	token := tokenIn(t, msg.Text)
	stored, _ := ts.store.DB().NewSelect().Model((*store.AccountToken)(nil)).Where("id = ?", token).Count(context.Background())
	if stored != 0 {
		t.Fatal("the token must be stored hashed")
	}
	if page := ts.do(t, "GET", "/authenticate/reset?app=demo&token="+token, nil, nil); page.Status != http.StatusOK || !strings.Contains(page.Body, `name="token"`) {
		t.Fatalf("reset form %d", page.Status)
	}
	weak := ts.do(t, "POST", "/authenticate/reset?app=demo", strings.NewReader(url.Values{"token": {token}, "password": {"short"}}.Encode()), formHeaders)
	if weak.Status != http.StatusBadRequest {
		t.Fatalf("weak password: %d", weak.Status)
	}
	res := ts.do(t, "POST", "/authenticate/reset?app=demo", strings.NewReader(url.Values{"token": {token}, "password": {"brand-new-password"}}.Encode()), formHeaders)
	if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "http://main.test/apps/demo" {
		t.Fatalf("reset: %d %s", res.Status, res.Header.Get("Location"))
	}
	fresh := cookieValue(t, res.Header)
	for _, old := range []string{other1, other2} {
		if me := ts.do(t, "GET", "/api/auth/me", nil, withSession(old)); me.Status != http.StatusUnauthorized {
			t.Fatalf("an old session survived the reset: %d", me.Status)
		}
	}
	if me := ts.do(t, "GET", "/api/auth/me", nil, withSession(fresh)); me.Status != http.StatusOK {
		t.Fatalf("new session: %d", me.Status)
	}
	signInToken(t, ts, "follower@demo.test", "brand-new-password")
	bad := ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(url.Values{"email": {"follower@demo.test"}, "password": {"demo-password"}}.Encode()), formHeaders)
	if bad.Status != http.StatusUnauthorized {
		t.Fatalf("old password still works: %d", bad.Status)
	}
	again := ts.do(t, "POST", "/authenticate/reset?app=demo", strings.NewReader(url.Values{"token": {token}, "password": {"another-password"}}.Encode()), formHeaders)
	if again.Status != http.StatusBadRequest || !strings.Contains(again.Body, "expired") {
		t.Fatalf("reused link: %d", again.Status)
	}
}

// TestPasswordResetLinkWorksOnceUnderConcurrency: 50 browsers posting the
// same link at once: exactly one sets a password.
func TestPasswordResetLinkWorksOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	if err := ts.store.RequestPasswordReset(ctx, "member@demo.test", store.AccountMailContext{}); err != nil {
		t.Fatal(err)
	}
	var m store.Mail
	if err := ts.store.DB().NewSelect().Model(&m).Where("kind = ?", store.MailPasswordReset).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	token := tokenIn(t, m.Content)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := ts.do(t, "POST", "/authenticate/reset", strings.NewReader(url.Values{"token": {token},
				"password": {"parallel-password-" + string(rune('a'+i%26))}}.Encode()), formHeaders)
			mu.Lock()
			codes[res.Status]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if codes[http.StatusSeeOther] != 1 || codes[http.StatusBadRequest] != 49 {
		t.Fatalf("answers %v, want one 303 and 49 400s", codes)
	}
	n, err := ts.store.DB().NewSelect().Model((*store.Session)(nil)).Where("user_id = ?", userByEmail(t, ts, "member@demo.test").ID).Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("sessions after reset %d %v, want 1", n, err)
	}
}

// TestPasswordResetRateLimited: a few reset mails per address an hour, then
// 429, the same for a known and an unknown address.
func TestPasswordResetRateLimited(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	for _, email := range []string{"member@demo.test", "ghost@demo.test"} {
		for i := 0; i < 4; i++ {
			res := ts.do(t, "POST", "/authenticate/forgot", strings.NewReader(url.Values{"email": {email}}.Encode()), formHeaders)
			want := http.StatusOK
			if i == 3 {
				want = http.StatusTooManyRequests
			}
			if res.Status != want {
				t.Fatalf("%s attempt %d: %d, want %d", email, i+1, res.Status, want)
			}
		}
	}
	if n := runResetJobs(t, ts); n != 6 {
		t.Fatalf("%d reset requests queued, want 6", n)
	}
	n, _ := ts.store.DB().NewSelect().Model((*store.Mail)(nil)).Count(context.Background())
	if n != 3 {
		t.Fatalf("%d reset mails, want 3", n)
	}
}

// TestSignUpVerifiesEmail: sign-up mails a verification link; until it is
// used the member can follow but not post, pay or donate; resending is
// limited; the link verifies.
func TestSignUpVerifiesEmail(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, func(c *Config) { c.RequireVerifiedEmail = true })
	res := ts.do(t, "POST", "/authenticate/signup?app=demo", strings.NewReader(url.Values{
		"email": {"fresh@demo.test"}, "username": {"fresh"}, "password": {"fresh-password"}}.Encode()), formHeaders)
	if res.Status != http.StatusSeeOther {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	tok := cookieValue(t, res.Header)
	runMailJobs(t, ts)
	msg := mp.WaitFor(t, "fresh@demo.test", 1)
	if msg.Subject != "Confirm your e-mail address" || msg.From.Name != "Demo Studio" {
		t.Fatalf("verification mail %q from %+v", msg.Subject, msg.From)
	}
	link := tokenIn(t, msg.Text)

	app, _ := ts.store.AppByIDOrName(context.Background(), "demo")
	if f := ts.do(t, "POST", "/api/notifications/follow/"+app.ID, nil, withSession(tok)); f.Status != http.StatusOK {
		t.Fatalf("follow while unverified: %d %s", f.Status, f.Body)
	}
	community, _ := ts.store.CommunityOfApp(context.Background(), app.ID)
	var parent string
	if err := ts.store.DB().NewSelect().Table("messages").Column("id").Where("community_id = ? AND type = 'POST'", community.ID).
		Limit(1).Scan(context.Background(), &parent); err != nil {
		t.Fatal(err)
	}
	post := func() response {
		return ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"hello","type":"REPLY","parentMessageId":"`+parent+`","communityId":"`+community.ID+`"}`),
			withSession(tok, "Content-Type", "application/json"))
	}
	if p := post(); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "confirm your email") {
		t.Fatalf("post while unverified: %d %s", p.Status, p.Body)
	}
	if d := ts.do(t, "POST", "/api/donations/create", strings.NewReader(`{"appId":"`+app.ID+`","amount":500}`),
		withSession(tok, "Content-Type", "application/json")); d.Status != http.StatusForbidden {
		t.Fatalf("donate while unverified: %d", d.Status)
	}
	for i := 0; i < 4; i++ {
		r := ts.do(t, "POST", "/authenticate/verify/resend?app=demo", nil, withSession(tok))
		want := http.StatusOK
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		if r.Status != want {
			t.Fatalf("resend %d: %d, want %d", i+1, r.Status, want)
		}
	}
	if n := runMailJobs(t, ts); n != 3 {
		t.Fatalf("resent %d, want 3", n)
	}
	v := ts.do(t, "GET", "/authenticate/verify?app=demo&token="+link, nil, nil)
	if v.Status != http.StatusOK || !strings.Contains(v.Body, "fresh@demo.test is confirmed") {
		t.Fatalf("verify: %d", v.Status)
	}
	if !userByEmail(t, ts, "fresh@demo.test").EmailVerified {
		t.Fatal("not verified")
	}
	if p := post(); p.Status != http.StatusCreated && p.Status != http.StatusOK {
		t.Fatalf("post once verified: %d %s", p.Status, p.Body)
	}
	if again := ts.do(t, "GET", "/authenticate/verify?app=demo&token="+link, nil, nil); again.Status != http.StatusBadRequest {
		t.Fatalf("used link: %d", again.Status)
	}
}

// TestOrderMessages: paying, shipping, refunding and cancelling an order
// each reach the buyer in the app and by e-mail (the receipt with its lines,
// totals and address; the tracking number; the refund's amount and reason),
// and a paid order reaches the creator; the member's e-mail switch stops
// the mail but not the notification.
func TestOrderMessages(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	shop := loadShop(t, ts)
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	buyer, creator := ts.as(t, follower), ts.as(t, "creator@demo.test")
	base := "/api/store/" + shop.demo
	pins := shop.items["PIN-SET-01"]

	buyer.must(200, "POST", base+"/cart/items", addBody(pins, "", 2))
	order := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"shippingAddress":`+shipTo+`}`))
	id, number := order["id"].(string), order["orderNumber"].(string)
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+id+`"}`)
	runMailJobs(t, ts)
	receipt := mp.WaitFor(t, follower, 1)
	if receipt.Subject != "Your receipt for order "+number {
		t.Fatalf("receipt subject %q", receipt.Subject)
	}
	for _, want := range []string{"× 2: $24.00", "Subtotal: $24.00", "Total: $24.00", "Ada Lovelace, 1 Main St, Portland OR 97201",
		"http://main.test/apps/demo/orders/" + id, "from your wallet"} {
		if !strings.Contains(receipt.Text, want) {
			t.Fatalf("receipt lacks %q:\n%s", want, receipt.Text)
		}
	}
	if !strings.Contains(receipt.HTML, "$24.00") || len(receipt.Headers["List-Unsubscribe"]) != 0 {
		t.Fatal("receipt HTML or headers wrong")
	}
	staff := mp.WaitFor(t, "creator@demo.test", 1)
	if staff.Subject != "New order "+number || len(staff.Headers["List-Unsubscribe"]) != 1 {
		t.Fatalf("creator mail %q %v", staff.Subject, staff.Headers["List-Unsubscribe"])
	}
	kinds := func(email string) map[string]int {
		var rows []store.Notification
		if err := ts.store.DB().NewSelect().Model(&rows).Where("app_id = ? AND user_id = ?", app.ID, ts.userID(t, email)).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, r := range rows {
			out[r.Kind]++
		}
		return out
	}
	if k := kinds(follower); k[store.KindOrderStatus] != 1 {
		t.Fatalf("buyer notifications %v", k)
	}
	if k := kinds("creator@demo.test"); k[store.KindNewOrder] != 1 {
		t.Fatalf("creator notifications %v", k)
	}

	status := func(to, extra string) {
		creator.must(200, "PUT", base+"/orders/"+id+"/status", `{"status":"`+to+`"`+extra+`}`)
	}
	status("PROCESSING", "")
	status("SHIPPED", `,"trackingNumber":"1Z999AA10123456784"`)
	runMailJobs(t, ts)
	shipped := mp.WaitFor(t, follower, 2)
	if shipped.Subject != "Order "+number+" has shipped" || !strings.Contains(shipped.Text, "Tracking number: 1Z999AA10123456784") {
		t.Fatalf("shipped mail %q\n%s", shipped.Subject, shipped.Text)
	}

	// E-mail about orders off: the refund notice still reaches the app,
	// and the refund's receipt (transactional) still comes by e-mail.
	if _, err := ts.store.SetEmailPreferences(ctx, app.ID, ts.userID(t, follower), false, []string{store.KindOrderStatus}); err != nil {
		t.Fatal(err)
	}
	creator.must(200, "POST", base+"/orders/"+id+"/refund", `{"reason":"Arrived damaged"}`)
	runMailJobs(t, ts)
	refund := mp.WaitFor(t, follower, 3)
	if refund.Subject != "Refund for order "+number || !strings.Contains(refund.Text, "Refunded: $24.00") || !strings.Contains(refund.Text, "Reason: Arrived damaged") {
		t.Fatalf("refund mail %q\n%s", refund.Subject, refund.Text)
	}
	if k := kinds(follower); k[store.KindOrderStatus] != 3 {
		t.Fatalf("buyer notifications %v", k)
	}
	// A cancelled order (not transactional) is not mailed while muted.
	buyer.must(200, "POST", base+"/cart/items", addBody(pins, "", 1))
	second := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"shippingAddress":`+shipTo+`}`))
	buyer.must(200, "POST", base+"/orders/"+second["id"].(string)+"/cancel", "")
	if n := runMailJobs(t, ts); n != 0 {
		t.Fatalf("%d mails for a muted cancellation", n)
	}
	if k := kinds(follower); k[store.KindOrderStatus] != 4 {
		t.Fatalf("buyer notifications %v", k)
	}
}

// TestAccountSettings: the settings page lists the sessions with device and
// last use; the e-mail changes only once the new address confirms (the old
// one is told); the username changes; the password needs the current one
// and signs out every other session; "sign out everywhere else" does too.
func TestAccountSettings(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	if r := ts.do(t, "GET", "/authenticate/account?app=demo", nil, nil); r.Status != http.StatusFound || !strings.Contains(r.Header.Get("Location"), "/authenticate/signin") {
		t.Fatalf("visitor: %d %s", r.Status, r.Header.Get("Location"))
	}
	phone := ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(url.Values{"email": {"member@demo.test"}, "password": {"demo-password"}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1"})
	me := cookieValue(t, phone.Header)
	laptop := ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(url.Values{"email": {"member@demo.test"}, "password": {"demo-password"}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"})
	other := cookieValue(t, laptop.Header)

	page := ts.do(t, "GET", "/authenticate/account?app=demo", nil, withSession(me))
	for _, want := range []string{"member@demo.test", "Safari on iPhone", "Chrome on Windows", "This device", "Last used", "Sign out everywhere else (1)"} {
		if !strings.Contains(page.Body, want) {
			t.Fatalf("account page lacks %q", want)
		}
	}
	post := func(path string, form url.Values, token string) response {
		return ts.do(t, "POST", path+"?app=demo", strings.NewReader(form.Encode()), withSession(token, "Content-Type", "application/x-www-form-urlencoded"))
	}

	// E-mail: taken, then a new one confirmed by its link.
	if r := post("/authenticate/account/email", url.Values{"email": {"creator@demo.test"}, "emailPassword": {"demo-password"}}, me); r.Status != http.StatusConflict {
		t.Fatalf("taken e-mail: %d", r.Status)
	}
	if r := post("/authenticate/account/email", url.Values{"email": {"new-me@demo.test"}, "emailPassword": {"demo-password"}}, me); r.Status != http.StatusSeeOther {
		t.Fatalf("change e-mail: %d %s", r.Status, r.Body)
	}
	if userByEmail(t, ts, "member@demo.test").Username != "member" {
		t.Fatal("the address changed before it was confirmed")
	}
	runMailJobs(t, ts)
	confirm := mp.WaitFor(t, "new-me@demo.test", 1)
	if v := ts.do(t, "GET", "/authenticate/verify?app=demo&token="+tokenIn(t, confirm.Text), nil, nil); v.Status != http.StatusOK {
		t.Fatalf("confirm: %d", v.Status)
	}
	if u := userByEmail(t, ts, "new-me@demo.test"); !u.EmailVerified {
		t.Fatal("new address not verified")
	}
	runMailJobs(t, ts)
	if told := mp.WaitFor(t, "member@demo.test", 1); told.Subject != "Your e-mail address was changed" || !strings.Contains(told.Text, "new-me@demo.test") {
		t.Fatalf("old address told %q", told.Subject)
	}

	// Username.
	if r := post("/authenticate/account/username", url.Values{"username": {"Creator"}}, me); r.Status != http.StatusConflict {
		t.Fatalf("taken username: %d", r.Status)
	}
	if r := post("/authenticate/account/username", url.Values{"username": {"member_two"}}, me); r.Status != http.StatusSeeOther {
		t.Fatalf("username: %d", r.Status)
	}
	if userByEmail(t, ts, "new-me@demo.test").Username != "member_two" {
		t.Fatal("username not changed")
	}

	// Password: the current one is required; the others are signed out.
	if r := post("/authenticate/account/password", url.Values{"currentPassword": {"wrong-password"}, "newPassword": {"another-password"}}, me); r.Status != http.StatusBadRequest ||
		!strings.Contains(r.Body, "current password is not right") {
		t.Fatalf("wrong current password: %d", r.Status)
	}
	if r := post("/authenticate/account/password", url.Values{"currentPassword": {"demo-password"}, "newPassword": {"another-password"}}, me); r.Status != http.StatusSeeOther {
		t.Fatalf("password: %d %s", r.Status, r.Body)
	}
	if r := ts.do(t, "GET", "/api/auth/me", nil, withSession(other)); r.Status != http.StatusUnauthorized {
		t.Fatalf("other session after password change: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/api/auth/me", nil, withSession(me)); r.Status != http.StatusOK {
		t.Fatalf("this session after password change: %d", r.Status)
	}

	// Sign out everywhere else.
	third := signInToken(t, ts, "new-me@demo.test", "another-password")
	if r := post("/authenticate/account/signout-others", url.Values{}, me); r.Status != http.StatusSeeOther {
		t.Fatalf("sign out others: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/api/auth/me", nil, withSession(third)); r.Status != http.StatusUnauthorized {
		t.Fatalf("third session: %d", r.Status)
	}
	n, _ := ts.store.DB().NewSelect().Model((*store.Session)(nil)).Where("user_id = ?", userByEmail(t, ts, "new-me@demo.test").ID).Count(ctx)
	if n != 1 {
		t.Fatalf("%d sessions left, want 1", n)
	}
}

// TestDataExportAndAccountDeletion: the archive is prepared by the job,
// mailed as a link that only its member can open, and holds what they put
// in and bought; deleting the account needs the password, refuses a
// creator, removes personal data and sessions, and keeps the orders with
// an anonymous buyer.
func TestDataExportAndAccountDeletion(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	shop := loadShop(t, ts)
	buyer := ts.as(t, follower)
	base := "/api/store/" + shop.demo
	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["PIN-SET-01"], "", 1))
	order := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"shippingAddress":`+shipTo+`}`))
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+order["id"].(string)+`"}`)
	u := userByEmail(t, ts, follower)
	runMailJobs(t, ts) // the receipt and the creator's notice

	form := func(path string, values url.Values, token string) response {
		return ts.do(t, "POST", path+"?app=demo", strings.NewReader(values.Encode()), withSession(token, "Content-Type", "application/x-www-form-urlencoded"))
	}
	if r := form("/authenticate/account/export", url.Values{}, buyer.token); r.Status != http.StatusSeeOther {
		t.Fatalf("export: %d", r.Status)
	}
	var rows []store.JobOutbox
	if err := ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", store.JobExportAccount).Scan(ctx); err != nil || len(rows) != 1 {
		t.Fatalf("export jobs %d %v", len(rows), err)
	}
	var args jobs.ExportAccountArgs
	if err := json.Unmarshal([]byte(rows[0].Args), &args); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // a retried job mails once
		if err := jobs.ExportAccount(ctx, ts.store, args.ExportJob); err != nil {
			t.Fatal(err)
		}
	}
	if n := runMailJobs(t, ts); n != 1 {
		t.Fatalf("export mails %d, want 1", n)
	}
	var msg *mailpittest.Message
	for _, s := range mp.To(t, follower) {
		if s.Subject == "Your data is ready" {
			msg = mp.Message(t, s.ID)
		}
	}
	if msg == nil {
		mp.WaitFor(t, follower, 2)
		t.Fatal("no export mail")
	}
	link := strings.TrimPrefix(regexp.MustCompile(`http://auth\.test(/authenticate/account/export\?token=[A-Za-z0-9_-]+&app=demo)`).FindStringSubmatch(msg.Text)[1], "")
	if r := ts.do(t, "GET", link, nil, withSession(sessionFor(t, ts, subscriber))); r.Status != http.StatusNotFound {
		t.Fatalf("someone else's link: %d", r.Status)
	}
	dl := ts.do(t, "GET", link, nil, withSession(buyer.token))
	if dl.Status != http.StatusOK || !strings.Contains(dl.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("download: %d %v", dl.Status, dl.Header)
	}
	var archive struct {
		Profile map[string]any   `json:"profile"`
		Orders  []map[string]any `json:"orders"`
		Members []map[string]any `json:"memberships"`
		// Free trials and offer codes (none here, but listed).
		Trials []map[string]any `json:"trials"`
		Offers []map[string]any `json:"offerRedemptions"`
	}
	if err := json.Unmarshal([]byte(dl.Body), &archive); err != nil {
		t.Fatal(err)
	}
	if archive.Profile["email"] != follower || len(archive.Orders) != 1 || !strings.Contains(fmt.Sprint(archive.Orders[0]["shipping_address"]), "Lovelace") ||
		len(archive.Orders[0]["items"].([]any)) != 1 || len(archive.Members) == 0 || archive.Trials == nil || archive.Offers == nil {
		t.Fatalf("archive %s", dl.Body)
	}

	// Deletion: the password is required; a creator is refused.
	if r := form("/authenticate/account/delete", url.Values{"currentPassword": {"wrong"}}, buyer.token); r.Status != http.StatusBadRequest {
		t.Fatalf("wrong password: %d", r.Status)
	}
	creator := sessionFor(t, ts, "creator@demo.test")
	if r := form("/authenticate/account/delete", url.Values{"currentPassword": {"demo-password"}}, creator); r.Status != http.StatusConflict ||
		!strings.Contains(r.Body, "hand it over or delete it") {
		t.Fatalf("creator deletion: %d", r.Status)
	}
	other := sessionFor(t, ts, follower)
	if r := form("/authenticate/account/delete", url.Values{"currentPassword": {"demo-password"}}, buyer.token); r.Status != http.StatusOK ||
		!strings.Contains(r.Body, "Your account was deleted") {
		t.Fatalf("delete: %d", r.Status)
	}
	for _, tok := range []string{buyer.token, other} {
		if r := ts.do(t, "GET", "/api/auth/me", nil, withSession(tok)); r.Status != http.StatusUnauthorized {
			t.Fatalf("session after deletion: %d", r.Status)
		}
	}
	gone, err := ts.store.UserByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if gone.DeletedAt == nil || strings.Contains(gone.Email, "follower") || gone.Username == "follower" || gone.PasswordHash != "" {
		t.Fatalf("not anonymised: %+v", gone)
	}
	for table, where := range map[string]string{"memberships": "user_id", "messages": "sender_id", "reactions": "sender_id",
		"attendees": "user_id", "notification_preferences": "user_id", "sessions": "user_id"} {
		n, err := ts.store.DB().NewSelect().Table(table).Where(where+" = ?", u.ID).Count(ctx)
		if err != nil || n != 0 {
			t.Fatalf("%s rows left: %d %v", table, n, err)
		}
	}
	n, _ := ts.store.DB().NewSelect().Table("orders").Where("user_id = ?", u.ID).Count(ctx)
	if n != 1 {
		t.Fatalf("orders kept %d, want 1", n)
	}
	if r := ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(url.Values{"email": {follower}, "password": {"demo-password"}}.Encode()), formHeaders); r.Status != http.StatusUnauthorized {
		t.Fatalf("sign-in after deletion: %d", r.Status)
	}
}

// TestEmailSwitches: the profile's e-mail switches are kept apart from the
// in-app ones, by the API and by the form; a call that leaves them out
// keeps them.
func TestEmailSwitches(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	m := ts.as(t, follower)
	path := "/api/notifications/preferences/" + app.ID
	got := dataOf(m.must(200, "PUT", path, `{"mutedAll":false,"mutedKinds":["NEW_POST"],"emailMutedKinds":["NEW_ORDER","DONATION"]}`))
	if fmt.Sprint(got["mutedKinds"]) != "[NEW_POST]" || fmt.Sprint(got["emailMutedKinds"]) != "[DONATION NEW_ORDER]" {
		t.Fatalf("saved %v", got)
	}
	got = dataOf(m.must(200, "PUT", path, `{"mutedAll":true,"mutedKinds":[]}`))
	if got["mutedAll"] != true || fmt.Sprint(got["emailMutedKinds"]) != "[DONATION NEW_ORDER]" {
		t.Fatalf("e-mail switches lost: %v", got)
	}
	m.must(400, "PUT", path, `{"mutedKinds":[],"emailMutedKinds":["NOPE"]}`)
	r := ts.do(t, "POST", "/apps/demo/notifications/settings", strings.NewReader("emailForm=1&emailMutedAll=1"),
		withSession(m.token, "Content-Type", "application/x-www-form-urlencoded"))
	if r.Status != http.StatusSeeOther {
		t.Fatalf("form: %d", r.Status)
	}
	p, _ := ts.store.NotificationPreferences(ctx, app.ID, ts.userID(t, follower))
	if !p.EmailMutedAll || len(p.EmailMuted()) != 0 || p.MutedAll {
		t.Fatalf("form saved %+v", p)
	}
	if page := ts.do(t, "GET", "/apps/demo/profile", nil, withSession(m.token)); !strings.Contains(page.Body, `name="emailMutedAll"`) {
		t.Fatal("the profile has no e-mail switches")
	}
}

// TestDonationAndEventMessages: a paid donation gives the donor a receipt
// (in the app and by e-mail) and tells the creator; a changed event mails
// its attendees (with one-click unsubscribe, since it is optional).
func TestDonationAndEventMessages(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	donor, creator := ts.as(t, follower), ts.as(t, "creator@demo.test")
	d := dataOf(donor.must(201, "POST", "/api/donations/create", `{"appId":"`+app.ID+`","amount":750,"message":"Keep going"}`))
	if d == nil {
		t.Fatal("no donation")
	}
	id, _ := d["id"].(string)
	if id == "" {
		id, _ = d["donation"].(map[string]any)["id"].(string)
	}
	donor.must(200, "POST", "/api/donations/process", `{"donationId":"`+id+`","paymentMethod":"musepay"}`)
	runMailJobs(t, ts)
	receipt := mp.WaitFor(t, follower, 1)
	if receipt.Subject != "Your donation receipt" || !strings.Contains(receipt.Text, "Donation: $7.50") || !strings.Contains(receipt.Text, "Keep going") {
		t.Fatalf("donation receipt %q\n%s", receipt.Subject, receipt.Text)
	}
	if staff := mp.WaitFor(t, "creator@demo.test", 1); staff.Subject != "New donation: $7.50" {
		t.Fatalf("creator mail %q", staff.Subject)
	}

	start := time.Now().Add(72 * time.Hour).UTC()
	ev := dataOf(creator.must(201, "POST", "/api/events/apps/"+app.ID+"/events", fmt.Sprintf(`{"name":"Mail meetup","startDate":%q,"endDate":%q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339))))
	evID := ev["id"].(string)
	donor.must(200, "POST", "/api/events/"+evID+"/join", "")
	runMailJobs(t, ts)
	creator.must(200, "PUT", "/api/events/"+evID, `{"location":"Room 2"}`)
	runMailJobs(t, ts)
	changed := mp.WaitFor(t, follower, 2)
	if changed.Subject != "Change to Mail meetup" || len(changed.Headers["List-Unsubscribe"]) != 1 {
		t.Fatalf("event mail %q %v", changed.Subject, changed.Headers["List-Unsubscribe"])
	}
}

// mailWith waits (a generous deadline guards against a hang) for a mail
// to addr with subject, among at least n to addr, and answers it.
func mailWith(t *testing.T, mp *mailpittest.Mailpit, addr string, n int, subject string) *mailpittest.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list := mp.To(t, addr)
		var got []string
		for _, s := range list {
			if s.Subject == subject && len(list) >= n {
				return mp.Message(t, s.ID)
			}
			got = append(got, s.Subject)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mail %q among %d to %s (want %d): %q", subject, len(list), addr, n, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMembershipMessages: a membership started, renewed, whose renewal
// failed (with the grace's end and the way to fix it) and that ended each
// reach the member in the app and by e-mail; a new member reaches the
// creator and admins. The member's e-mail switch stops the optional mail
// (the end) but not the notice; a staff member who muted new members in
// the app and by e-mail gets neither; a card failure names the card.
func TestMembershipMessages(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	st := ts.store
	app, _ := st.AppByIDOrName(ctx, "demo")
	var planItem string
	if err := st.DB().NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = 'SUBSCRIPTION' AND sku = 'SUB-SC-01'", app.ID).Limit(1).Scan(ctx, &planItem); err != nil {
		t.Fatal(err)
	}
	var price int64
	if err := st.DB().NewSelect().Table("store_items").Column("price").Where("id = ?", planItem).Scan(ctx, &price); err != nil {
		t.Fatal(err)
	}
	member := ts.userID(t, follower)
	drainWallet(t, st, app.ID, member)
	if _, _, err := st.CreditWallet(ctx, app.ID, member, 2*price+100, "test-credit-membership-messages", "test"); err != nil {
		t.Fatal(err)
	}
	admin := ts.userID(t, "admin@demo.test")
	if _, err := st.SetNotificationPreferences(ctx, app.ID, admin, false, []string{store.KindNewMember}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetEmailPreferences(ctx, app.ID, admin, false, []string{store.KindNewMember}); err != nil {
		t.Fatal(err)
	}
	notices := func(userID, kind string) []string {
		var rows []store.Notification
		if err := st.DB().NewSelect().Model(&rows).Where("app_id = ? AND user_id = ? AND kind = ?", app.ID, userID, kind).Order("created_at").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.Content)
		}
		return out
	}
	sub := func() *store.Subscription {
		s, err := st.SubscriptionOf(ctx, app.ID, member)
		if err != nil || s == nil {
			t.Fatalf("subscription: %v %v", s, err)
		}
		return s
	}
	amount := store.Money(price, "USD")
	day := func(tm time.Time) string { return tm.UTC().Format("Jan 2, 2006") }

	// Started: the member's welcome (after the order's receipt), the
	// creator's new member; the admin muted it.
	m := ts.as(t, follower)
	m.must(200, "POST", "/api/subscriptions/apps/"+app.ID+"/subscribe", `{"itemId":"`+planItem+`"}`)
	runMailJobs(t, ts)
	first := sub()
	brand, _ := st.MailBrandOf(ctx, app.ID)
	welcome := mailWith(t, mp, follower, 2, "Your membership of "+brand.DisplayName)
	for _, want := range []string{"Paid: " + amount, "Active until: " + day(first.CurrentPeriodEnd), "http://main.test/apps/demo/profile"} {
		if !strings.Contains(welcome.Text, want) {
			t.Fatalf("welcome lacks %q:\n%s", want, welcome.Text)
		}
	}
	if len(welcome.Headers["List-Unsubscribe"]) != 0 {
		t.Fatal("a membership receipt is transactional")
	}
	staff := mailWith(t, mp, "creator@demo.test", 2, "New member: @follower")
	if !strings.Contains(staff.Text, "http://main.test/apps/demo/studio/members") || len(staff.Headers["List-Unsubscribe"]) != 1 {
		t.Fatalf("creator's mail:\n%s", staff.Text)
	}
	if n := notices(ts.userID(t, "creator@demo.test"), store.KindNewMember); len(n) != 1 || !strings.Contains(n[0], "@follower") {
		t.Fatalf("creator notices %q", n)
	}
	if n := notices(admin, store.KindNewMember); len(n) != 0 {
		t.Fatalf("a muted admin got %q", n)
	}
	for _, s := range mp.To(t, "admin@demo.test") {
		if strings.HasPrefix(s.Subject, "New member") {
			t.Fatal("a muted admin got the new member mail")
		}
	}

	// Renewed from the wallet, however many runs race: one notice, one mail.
	for i := 0; i < 3; i++ {
		if _, err := st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: first.CurrentPeriodEnd.Add(-30 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := runMailJobs(t, ts); n != 1 {
		t.Fatalf("renewal mails %d, want 1", n)
	}
	second := sub()
	renewed := mailWith(t, mp, follower, 3, "Your membership was renewed")
	if !strings.Contains(renewed.Text, "Paid: "+amount) || !strings.Contains(renewed.Text, "Active until: "+day(second.CurrentPeriodEnd)) {
		t.Fatalf("renewal mail:\n%s", renewed.Text)
	}

	// Failed: the wallet cannot pay; the grace's end and the way to fix it.
	if _, err := st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: second.CurrentPeriodEnd.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	runMailJobs(t, ts)
	grace := second.CurrentPeriodEnd.Add(store.DefaultGracePeriod)
	failed := mailWith(t, mp, follower, 4, "Your membership payment failed")
	for _, want := range []string{"Access until: " + day(grace), "Top up before " + day(grace), "Fix your payment", "http://main.test/apps/demo/profile"} {
		if !strings.Contains(failed.Text, want) {
			t.Fatalf("failure mail lacks %q:\n%s", want, failed.Text)
		}
	}

	// Ended, with the member's membership e-mail off: the notice, no mail.
	if _, err := st.SetEmailPreferences(ctx, app.ID, member, false, []string{store.KindMembershipLapsing}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: grace.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if n := runMailJobs(t, ts); n != 0 {
		t.Fatalf("%d mails for an ended membership whose mail is off", n)
	}
	got := notices(member, store.KindMembershipLapsing)
	if len(got) != 4 || !strings.HasPrefix(got[0], "Welcome!") || !strings.Contains(got[1], "was renewed") ||
		!strings.Contains(got[2], "Top up before "+day(grace)) || !strings.Contains(got[3], "has ended") {
		t.Fatalf("member notices %q", got)
	}

	// Started again, then renewed by a card that fails: the notice names the
	// card; the in-app switch, once off, stops the notice.
	if _, err := st.SetEmailPreferences(ctx, app.ID, member, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreditWallet(ctx, app.ID, member, price, "test-credit-membership-messages-2", "test"); err != nil {
		t.Fatal(err)
	}
	m.must(200, "POST", "/api/subscriptions/apps/"+app.ID+"/subscribe", `{"itemId":"`+planItem+`"}`)
	third := sub()
	if _, err := st.DB().NewUpdate().Model((*store.Subscription)(nil)).Set("provider = 'stripe', provider_ref = 'sub_test_messages'").
		Where("id = ?", third.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	runMailJobs(t, ts)
	if _, err := st.ApplyProviderRenewal(ctx, "sub_test_messages", "failed", third.CurrentPeriodEnd, 0); err != nil {
		t.Fatal(err)
	}
	runMailJobs(t, ts)
	cardGrace := third.CurrentPeriodEnd.Add(st.GracePeriod())
	card := mailWith(t, mp, follower, 7, "Your membership payment failed")
	if !strings.Contains(card.Text, "update your card before "+day(cardGrace)) {
		t.Fatalf("card failure mail:\n%s", card.Text)
	}
	if _, err := st.SetNotificationPreferences(ctx, app.ID, member, false, []string{store.KindMembershipLapsing}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ApplyProviderRenewal(ctx, "sub_test_messages", "paid", third.CurrentPeriodEnd.AddDate(0, 1, 0), 0); err != nil {
		t.Fatal(err)
	}
	if n := runMailJobs(t, ts); n != 1 {
		t.Fatalf("card renewal mails %d, want 1 (the receipt)", n)
	}
	if got := notices(member, store.KindMembershipLapsing); len(got) != 6 {
		t.Fatalf("notices after muting: %q", got)
	}
}

// TestOrderAndEventMessagesToo covers the rest of the messages that
// matter: the receipt of an order with a digital item links to its
// downloads; delivered; an order that expired unpaid; an event cancelled
// for its attendees.
func TestOrderAndEventMessagesToo(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	shop := loadShop(t, ts)
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	buyer, creator := ts.as(t, follower), ts.as(t, "creator@demo.test")
	base := "/api/store/" + shop.demo

	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["DIG-MB-01"], "", 1))
	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["PIN-SET-01"], "", 1))
	order := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"shippingAddress":`+shipTo+`}`))
	id, number := order["id"].(string), order["orderNumber"].(string)
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+id+`"}`)
	runMailJobs(t, ts)
	receipt := mailWith(t, mp, follower, 1, "Your receipt for order "+number)
	for _, want := range []string{"Midnight Bloom: Digital Album × 1: $9.99", "Total: $21.99", "Download your files: http://main.test/apps/demo/orders/" + id} {
		if !strings.Contains(receipt.Text, want) {
			t.Fatalf("receipt lacks %q:\n%s", want, receipt.Text)
		}
	}
	for _, to := range []string{`"PROCESSING"`, `"SHIPPED","trackingNumber":"1Z999"`, `"DELIVERED"`} {
		creator.must(200, "PUT", base+"/orders/"+id+"/status", `{"status":`+to+`}`)
	}
	runMailJobs(t, ts)
	delivered := mailWith(t, mp, follower, 3, "Order "+number+" was delivered")
	if !strings.Contains(delivered.Text, "was delivered") || len(delivered.Headers["List-Unsubscribe"]) != 1 {
		t.Fatalf("delivered mail:\n%s", delivered.Text)
	}

	// An order left unpaid expires: cancelled, in the app and by e-mail.
	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["PIN-SET-01"], "", 1))
	stale := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"shippingAddress":`+shipTo+`}`))
	if _, err := ts.store.DB().NewUpdate().Table("orders").Set("created_at = ?", time.Now().UTC().Add(-48*time.Hour)).
		Where("id = ?", stale["id"]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := ts.store.ExpirePendingOrders(ctx, time.Hour); err != nil || n != 1 {
		t.Fatalf("expired %d %v", n, err)
	}
	runMailJobs(t, ts)
	expired := mailWith(t, mp, follower, 4, "Order "+stale["orderNumber"].(string)+" was cancelled")
	if !strings.Contains(expired.Text, "nothing was charged") {
		t.Fatalf("expired mail:\n%s", expired.Text)
	}

	// An event cancelled: its attendees hear of it.
	start := time.Now().Add(72 * time.Hour).UTC()
	ev := dataOf(creator.must(201, "POST", "/api/events/apps/"+app.ID+"/events", fmt.Sprintf(`{"name":"Doomed meetup","startDate":%q,"endDate":%q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339))))
	buyer.must(200, "POST", "/api/events/"+ev["id"].(string)+"/join", "")
	runMailJobs(t, ts)
	creator.must(200, "DELETE", "/api/events/"+ev["id"].(string), "")
	runMailJobs(t, ts)
	cancelled := mailWith(t, mp, follower, 5, "Change to Doomed meetup")
	if !strings.Contains(cancelled.Text, "Event cancelled: Doomed meetup") {
		t.Fatalf("event cancelled mail:\n%s", cancelled.Text)
	}
	n, err := ts.store.DB().NewSelect().Table("notifications").Where("app_id = ? AND user_id = ? AND kind = ? AND content LIKE ?",
		app.ID, ts.userID(t, follower), store.KindEventUpdate, "Event cancelled%").Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("event cancelled notices %d %v", n, err)
	}
}
