package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// A session cookie alone cannot take an account by changing its e-mail
// address: the change needs the current password (without it, or with a
// wrong one, nothing is sent), and the old address gets a link that, for 7
// days, takes the address back, signs every session out and makes whoever
// holds the old address choose a new password (the attacker's password,
// set through the new address, stops working). Before, the change needed
// the session only and the old address could do nothing.
func TestEmailChangeNeedsPasswordAndCanBeUndone(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	stolen := signInToken(t, ts, "member@demo.test", "demo-password")
	post := func(path string, form url.Values, token string) response {
		return ts.do(t, "POST", path+"?app=demo", strings.NewReader(form.Encode()), withSession(token, "Content-Type", "application/x-www-form-urlencoded"))
	}
	for _, pw := range []string{"", "wrong-password"} {
		r := post("/authenticate/account/email", url.Values{"email": {"thief@evil.test"}, "emailPassword": {pw}}, stolen)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "current password") {
			t.Fatalf("e-mail change with password %q: %d", pw, r.Status)
		}
	}
	if n, _ := ts.store.DB().NewSelect().Model((*store.AccountToken)(nil)).Where("purpose = ?", store.TokenEmailChange).Count(ctx); n != 0 {
		t.Fatalf("%d e-mail change links written without the password", n)
	}
	// JSON clients send currentPassword.
	if r := ts.do(t, "POST", "/authenticate/account/email?app=demo", body(map[string]any{"email": "thief@evil.test"}),
		withSession(stolen, "Content-Type", "application/json", "Accept", "application/json")); r.Status != http.StatusBadRequest {
		t.Fatalf("JSON e-mail change without password: %d", r.Status)
	}

	// With the password (say it leaked too), the thief changes the address
	// and sets a password of their own.
	if r := post("/authenticate/account/email", url.Values{"email": {"thief@evil.test"}, "emailPassword": {"demo-password"}}, stolen); r.Status != http.StatusSeeOther {
		t.Fatalf("change: %d %s", r.Status, r.Body)
	}
	runMailJobs(t, ts)
	if v := ts.do(t, "GET", "/authenticate/verify?app=demo&token="+tokenIn(t, mp.WaitFor(t, "thief@evil.test", 1).Text), nil, nil); v.Status != http.StatusOK {
		t.Fatalf("confirm: %d", v.Status)
	}
	if r := post("/authenticate/account/password", url.Values{"currentPassword": {"demo-password"}, "newPassword": {"thief-password"}}, stolen); r.Status != http.StatusSeeOther {
		t.Fatalf("thief's password: %d", r.Status)
	}
	runMailJobs(t, ts)
	told := mp.WaitFor(t, "member@demo.test", 1)
	if !strings.Contains(told.Text, "/authenticate/email/undo?token=") || !strings.Contains(told.Text, "7 days") {
		t.Fatalf("the old address got no undo link: %s", told.Text)
	}
	undo := tokenIn(t, told.Text[strings.Index(told.Text, "/authenticate/email/undo"):])
	var tok store.AccountToken
	if err := ts.store.DB().NewSelect().Model(&tok).Where("purpose = ?", store.TokenEmailUndo).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(tok.ExpiresAt); d < 7*24*time.Hour-time.Hour || d > 7*24*time.Hour+time.Hour {
		t.Fatalf("undo link valid for %s", d)
	}

	// Following the link only asks (a mail scanner undoes nothing).
	page := ts.do(t, "GET", "/authenticate/email/undo?app=demo&token="+undo, nil, nil)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `method="post"`) || userByEmail(t, ts, "thief@evil.test") == nil {
		t.Fatalf("undo page: %d", page.Status)
	}
	r := ts.do(t, "POST", "/authenticate/email/undo?app=demo&token="+undo, strings.NewReader(""), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	loc := r.Header.Get("Location")
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/authenticate/reset?token=") {
		t.Fatalf("undo: %d %q", r.Status, loc)
	}
	u := userByEmail(t, ts, "member@demo.test")
	if u == nil || u.Username != "member" || !u.EmailVerified {
		t.Fatalf("the address was not taken back: %+v", u)
	}
	if me := ts.do(t, "GET", "/api/auth/me", nil, withSession(stolen)); me.Status != http.StatusUnauthorized {
		t.Fatalf("the thief's session after the undo: %d", me.Status)
	}
	bad := ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(url.Values{"email": {"member@demo.test"}, "password": {"thief-password"}}.Encode()), formHeaders)
	if bad.Status == http.StatusSeeOther {
		t.Fatal("the thief's password still signs in")
	}
	// The owner chooses a new password from where the undo sent them.
	reset, _ := url.Parse(loc)
	if r := ts.do(t, "POST", "/authenticate/reset?app=demo", strings.NewReader(url.Values{"token": {reset.Query().Get("token")},
		"password": {"owner-password-2"}}.Encode()), formHeaders); r.Status != http.StatusSeeOther {
		t.Fatalf("reset after undo: %d %s", r.Status, r.Body)
	}
	signInToken(t, ts, "member@demo.test", "owner-password-2")
	// The link works once.
	if r := ts.do(t, "POST", "/authenticate/email/undo?app=demo&token="+undo, strings.NewReader(""), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}); r.Status != http.StatusBadRequest {
		t.Fatalf("second undo: %d", r.Status)
	}
}
