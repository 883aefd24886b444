package server

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The sign-up form goes on to a page that says a confirmation mail was
// sent, to which address, under which subject and where to look for it; the
// mail is there, and once the link is used the page says so.
func TestSignUpSaysWhereTheMailWent(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, func(c *Config) { c.RequireVerifiedEmail = true })
	res := ts.do(t, "POST", "/authenticate/signup?app=demo", strings.NewReader(url.Values{
		"email": {"sent@demo.test"}, "username": {"sent"}, "password": {"sent-password"}}.Encode()), formHeaders)
	if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/authenticate/welcome?app=demo" {
		t.Fatalf("sign up: %d to %q", res.Status, res.Header.Get("Location"))
	}
	tok := cookieValue(t, res.Header)
	page := ts.do(t, "GET", "/authenticate/welcome?app=demo", nil, withSession(tok))
	runMailJobs(t, ts)
	msg := mp.WaitFor(t, "sent@demo.test", 1)
	text := html.UnescapeString(page.Body)
	for _, want := range []string{"Check your inbox", "sent@demo.test", "\u201c" + msg.Subject + "\u201d", "spam", "48 hours",
		"not pay, post or donate", `href="http://main.test/apps/demo"`, "Continue to Demo Studio", `action="/authenticate/verify/resend?app=demo"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the page after sign-up lacks %q", want)
		}
	}
	if page.Status != http.StatusOK {
		t.Fatalf("welcome: %d", page.Status)
	}
	if v := ts.do(t, "GET", "/authenticate/verify?app=demo&token="+tokenIn(t, msg.Text), nil, nil); v.Status != http.StatusOK {
		t.Fatalf("verify: %d", v.Status)
	}
	again := ts.do(t, "GET", "/authenticate/welcome?app=demo", nil, withSession(tok))
	if again.Status != http.StatusOK || !strings.Contains(again.Body, "sent@demo.test is confirmed") || strings.Contains(again.Body, "resend") {
		t.Fatalf("welcome once confirmed: %d %.400s", again.Status, again.Body)
	}
	// Without a session the page sends the visitor to sign in.
	if anon := ts.do(t, "GET", "/authenticate/welcome?app=demo", nil, nil); anon.Status != http.StatusSeeOther ||
		!strings.Contains(anon.Header.Get("Location"), "/authenticate/signin") {
		t.Fatalf("anonymous welcome: %d %s", anon.Status, anon.Header.Get("Location"))
	}
}
