package server

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"marquee/store"
)

// Issue 43 item 3: a creator credits a member's wallet from the studio's
// members screen (amount and note, in the audit log), and fifty identical
// sends of the form credit once; the API answers the same key once too.
func TestStudioCreditsAMemberOnce(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	creator := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	fan := idOfUser(t, ts, "follower@demo.test")
	before, err := ts.store.WalletBalance(ctx, demo.ID, fan)
	if err != nil {
		t.Fatal(err)
	}

	page := ts.do(t, "GET", "/apps/demo/studio/members", nil, creator)
	m := regexp.MustCompile(`<input type="hidden" name="key" value="([^"]+)"`).FindStringSubmatch(page.Body)
	if page.Status != 200 || m == nil || !strings.Contains(page.Body, `action="/apps/demo/studio/members/`+fan+`/credit"`) ||
		!strings.Contains(page.Body, "Welcome credit for new members") {
		t.Fatalf("members screen: %d, key %v", page.Status, m)
	}
	body := url.Values{"amount": {"5"}, "note": {"Thanks for the bug report"}, "key": {m[1]}, "back": {"?q=follower"}}.Encode()
	var wg sync.WaitGroup
	locations := make(chan string, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := ts.do(t, "POST", "/apps/demo/studio/members/"+fan+"/credit", strings.NewReader(body), creator)
			if r.Status != http.StatusSeeOther {
				t.Errorf("credit: %d %.300s", r.Status, r.Body)
			}
			locations <- r.Header.Get("Location")
		}()
	}
	wg.Wait()
	close(locations)
	credited, replayed := 0, 0
	for l := range locations {
		switch {
		case strings.HasSuffix(l, "/studio/members?q=follower&notice=credited"):
			credited++
		case strings.HasSuffix(l, "notice=credit-replayed"):
			replayed++
		default:
			t.Errorf("back to %q", l)
		}
	}
	after, _ := ts.store.WalletBalance(ctx, demo.ID, fan)
	if credited != 1 || replayed != 49 || after-before != 500 {
		t.Fatalf("50 sends: %d credited, %d replayed, balance %d -> %d", credited, replayed, before, after)
	}
	var audit []store.ModerationEntry
	if err := ts.store.DB().NewSelect().Model(&audit).Where("app_id = ? AND action = ?", demo.ID, store.ActionWalletCredit).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].TargetUserID != fan || audit[0].ActorID != idOfUser(t, ts, "creator@demo.test") ||
		!strings.Contains(audit[0].Reason, "$5.00") || !strings.Contains(audit[0].Reason, "Thanks for the bug report") {
		t.Fatalf("audit: %+v", audit)
	}
	// The member sees it, with the note, in their wallet.
	w := ts.do(t, "GET", "/apps/demo/transactions", nil, withSession(sessionFor(t, ts, "follower@demo.test")))
	if !strings.Contains(w.Body, "Thanks for the bug report") {
		t.Fatal("the member's wallet does not show the credit's note")
	}
	// The screen shows the credit in its audit log and says it was credited.
	if r := ts.do(t, "GET", "/apps/demo/studio/members?notice=credited", nil, creator); !strings.Contains(r.Body, "Credit added to the member&#x27;s wallet") {
		t.Fatalf("notice: %.300s", r.Body)
	}

	// Refused: no amount, too much, no key, someone who is no member, the
	// admin (money is the creator's to give); the form comes back as typed.
	for _, c := range []struct {
		user, amount, key string
		h                 map[string]string
		status            int
		says              string
	}{
		{fan, "", "k1", creator, 400, "Enter an amount above $0"},
		{fan, "abc", "k1", creator, 400, "Enter an amount in dollars"},
		{fan, "1000.01", "k1", creator, 400, "One credit is at most $1000.00"},
		{fan, "5", "", creator, 400, "reload the page"},
		{idOfUser(t, ts, "member@demo.test"), "5", "k2", creator, 404, "Member not found"},
		{fan, "5", "k3", form(withSession(sessionFor(t, ts, "admin@demo.test"))), 403, "Only the creator"},
	} {
		r := ts.do(t, "POST", "/apps/demo/studio/members/"+c.user+"/credit",
			strings.NewReader(url.Values{"amount": {c.amount}, "note": {"kept note"}, "key": {c.key}}.Encode()), c.h)
		if r.Status != c.status || !strings.Contains(r.Body, c.says) {
			t.Errorf("credit %q key %q: %d, want %d %q: %.300s", c.amount, c.key, r.Status, c.status, c.says, r.Body)
		}
		if c.status == 400 && (!strings.Contains(r.Body, `value="kept note"`) || !strings.Contains(r.Body, "<details class=\"credit-fold\" open")) {
			t.Errorf("the refused credit form lost what was typed: %.200s", r.Body)
		}
	}
	if after2, _ := ts.store.WalletBalance(ctx, demo.ID, fan); after2 != after {
		t.Fatalf("a refused credit moved money: %d -> %d", after, after2)
	}

	// The JSON call: 201 once, 200 with replayed for the same key.
	api := withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/json")
	call := `{"amount":250,"note":"API credit","idempotencyKey":"api-key-1"}`
	r := ts.do(t, "POST", "/api/studio/apps/"+demo.ID+"/members/"+fan+"/credit", strings.NewReader(call), api)
	if r.Status != http.StatusCreated || !strings.Contains(r.Body, `"replayed":false`) || !strings.Contains(r.Body, `"amount":250`) {
		t.Fatalf("API credit: %d %s", r.Status, r.Body)
	}
	r = ts.do(t, "POST", "/api/studio/apps/"+demo.ID+"/members/"+fan+"/credit", strings.NewReader(call), api)
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `"replayed":true`) {
		t.Fatalf("API credit again: %d %s", r.Status, r.Body)
	}
	if final, _ := ts.store.WalletBalance(ctx, demo.ID, fan); final != after+250 {
		t.Fatalf("API credits: %d -> %d", after, final)
	}
	r = ts.do(t, "POST", "/api/studio/apps/"+demo.ID+"/members/"+fan+"/credit", strings.NewReader(`{"amount":250}`), api)
	if r.Status != http.StatusBadRequest {
		t.Fatalf("API credit without a key: %d %s", r.Status, r.Body)
	}
}

// The welcome credit is a studio setting: saved from the members screen
// (audited), and what a member who follows next finds in their wallet.
func TestWelcomeCreditIsAStudioSetting(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	creator := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	for _, bad := range []string{"abc", "1000.01", "-5"} {
		r := ts.do(t, "POST", "/apps/demo/studio/wallet", strings.NewReader("welcomeCredit="+url.QueryEscape(bad)), creator)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `value="`+bad+`"`) {
			t.Errorf("welcome credit %q: %d %.300s", bad, r.Status, r.Body)
		}
	}
	r := ts.do(t, "POST", "/apps/demo/studio/wallet", strings.NewReader("welcomeCredit=7.50"), creator)
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/apps/demo/studio/members?notice=welcome-saved" {
		t.Fatalf("save: %d %s %.300s", r.Status, r.Header.Get("Location"), r.Body)
	}
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	if demo.Settings.Wallet.WelcomeCredit != 750 {
		t.Fatalf("welcome credit %d", demo.Settings.Wallet.WelcomeCredit)
	}
	if page := ts.do(t, "GET", "/apps/demo/studio/members", nil, creator); !strings.Contains(page.Body, `id="welcomeCredit" name="welcomeCredit" inputMode="decimal" value="7.50"`) &&
		!strings.Contains(page.Body, `value="7.50"`) {
		t.Fatal("the screen does not show the saved welcome credit")
	}
	n, err := ts.store.DB().NewSelect().Model((*store.ModerationEntry)(nil)).Where("app_id = ? AND action = ?", demo.ID, store.ActionWelcomeCredit).Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("audit lines: %d %v", n, err)
	}
	newcomer := idOfUser(t, ts, "member@demo.test")
	before, _ := ts.store.WalletBalance(ctx, demo.ID, newcomer)
	if f := ts.do(t, "POST", "/api/notifications/follow/"+demo.ID, nil, withSession(sessionFor(t, ts, "member@demo.test"))); f.Status != http.StatusOK {
		t.Fatalf("follow: %d %s", f.Status, f.Body)
	}
	if after, _ := ts.store.WalletBalance(ctx, demo.ID, newcomer); after-before != 750 {
		t.Fatalf("the newcomer's wallet: %d -> %d", before, after)
	}
}
