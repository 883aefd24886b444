package server

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"marquee/server/payments"
	"marquee/store"
)

// Issue 40 item 3: in a gated app a signed-in fan with $0 is never at a
// dead end: the membership page, the plan checkout and the wallet's Add
// funds are open to them; the plan checkout offers the card and PayPal
// besides the wallet, paid on the checkout's payment step; paying opens
// the gate.
func TestGatedFanJoinsEveryWay(t *testing.T) {
	t.Parallel()
	f, db := gatedDemo(t)
	ctx := context.Background()
	u, err := f.ts.store.CreateUser(ctx, "gatedfan@tiers.test", "gatedfan", "not-a-password-hash")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ts.store.Follow(ctx, f.demo.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	drainWallet(t, f.ts.store, f.demo.ID, u.ID)
	token, err := f.ts.store.CreateSession(ctx, u.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	page := withSession(token)
	as := withSession(token, "Content-Type", "application/json")
	var circle string
	if err := db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND sku = 'SUB-SC-01'", f.demo.ID).Scan(ctx, &circle); err != nil {
		t.Fatal(err)
	}

	// The gate holds the fan back from the content...
	if r := f.ts.do(t, "GET", "/apps/demo/community", nil, page); r.Status != 302 {
		t.Fatalf("community for a gated fan: %d", r.Status)
	}
	// ...but not from joining: the membership page, the plan checkout with
	// Add funds and the other methods, and the wallet page.
	if r := f.ts.do(t, "GET", "/apps/demo/membership", nil, page); r.Status != 200 {
		t.Fatalf("membership page: %d", r.Status)
	}
	co := f.ts.do(t, "GET", "/apps/demo/checkout/plan/"+circle+"?cycle=MONTHLY", nil, page)
	if co.Status != 200 || !strings.Contains(co.Body, `href="/apps/demo/transactions?return=membership#add-funds"`) ||
		!strings.Contains(co.Body, "Pay $8.00 by card or PayPal") {
		t.Fatalf("plan checkout: %d %s", co.Status, co.Body[strings.Index(co.Body, "<main"):])
	}
	wallet := f.ts.do(t, "GET", "/apps/demo/transactions?return=membership", nil, page)
	if wallet.Status != 200 || !strings.Contains(wallet.Body, "Back to Membership") || !strings.Contains(wallet.Body, `id="add-funds"`) {
		t.Fatalf("wallet page for a gated fan: %d", wallet.Status)
	}

	// Card or PayPal: the form makes the membership's order and leads to
	// the checkout's payment step.
	r := f.ts.do(t, "POST", "/apps/demo/checkout/plan/"+circle, strings.NewReader(url.Values{"cycle": {"MONTHLY"}, "pay": {"other"}}.Encode()), form(page))
	loc := r.Header.Get("Location")
	if r.Status != 303 || !strings.HasPrefix(loc, "/apps/demo/checkout?orderId=") || !strings.HasSuffix(loc, "&step=payment") {
		t.Fatalf("pay another way: %d %s", r.Status, loc)
	}
	orderID := strings.TrimSuffix(strings.TrimPrefix(loc, "/apps/demo/checkout?orderId="), "&step=payment")
	step := f.ts.do(t, "GET", loc, nil, page)
	if step.Status != 200 || !strings.Contains(step.Body, "$8.00") || !strings.Contains(step.Body, `value="paypal"`) || !strings.Contains(step.Body, `value="stripe"`) {
		t.Fatalf("payment step: %d %s", step.Status, step.Body[strings.Index(step.Body, "<main"):])
	}
	// A second click pays the same order.
	if r2 := f.ts.do(t, "POST", "/apps/demo/checkout/plan/"+circle, strings.NewReader("cycle=MONTHLY&pay=other"), form(page)); r2.Header.Get("Location") != loc {
		t.Fatalf("second click: %s, want %s", r2.Header.Get("Location"), loc)
	}

	// The card pays it; the membership starts and the gate opens.
	a := decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": orderID}))
	pi, _ := a.Data["paymentIntentId"].(string)
	if pi == "" {
		t.Fatalf("create intent: %+v", a)
	}
	if r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	s, err := f.ts.store.SubscriptionOf(ctx, f.demo.ID, u.ID)
	if err != nil || s == nil || s.Status != store.SubActive || s.Provider != payments.Stripe || s.Amount != 800 {
		t.Fatalf("membership after the card: %+v %v", s, err)
	}
	if r := f.ts.do(t, "GET", "/apps/demo/community", nil, page); r.Status != 200 {
		t.Fatalf("community for the new member: %d", r.Status)
	}

	// Before its Stripe subscription exists there is no portal to open.
	if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/portal", body(map[string]any{}), as); r.Status != 409 {
		t.Fatalf("portal before renewals: %d %s", r.Status, r.Body)
	}
	if n := runCardRenewalJobs(t, f); n != 1 {
		t.Fatalf("start_card_renewal jobs: %d", n)
	}
	// The card member manages the card in Stripe's portal, from the
	// membership page (a form) or the API, and comes back to the page.
	if mp := f.ts.do(t, "GET", "/apps/demo/membership", nil, page); !strings.Contains(mp.Body, `action="/apps/demo/membership/portal"`) {
		t.Fatalf("membership page offers no portal: %s", mp.Body[strings.Index(mp.Body, "<main"):])
	}
	r = f.ts.do(t, "POST", "/apps/demo/membership/portal", strings.NewReader("x=1"), form(page))
	if loc := r.Header.Get("Location"); r.Status != 303 || !strings.HasPrefix(loc, f.stripe.URL+"/p/session/bps_") {
		t.Fatalf("portal form: %d %s", r.Status, loc)
	}
	var portal struct{ Data PortalData }
	pr := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/portal", body(map[string]any{}), as)
	commJSON(t, pr, &portal)
	if pr.Status != 200 || !strings.HasPrefix(portal.Data.URL, f.stripe.URL+"/p/session/bps_") {
		t.Fatalf("portal call: %d %s", pr.Status, pr.Body)
	}
	// A wallet member has no card portal.
	walletMember := commUser(t, f.ts, "subscriber@demo.test")
	if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/portal", body(map[string]any{}), walletMember); r.Status != 409 || !strings.Contains(r.Body, "not renewed by a card") {
		t.Fatalf("portal for a wallet member: %d %s", r.Status, r.Body)
	}
}

// A fan who signed up from a gated app and does not follow it yet is not
// stopped on the way to joining: paying by card or PayPal follows the app
// and leads to a payment step that offers both, and with $0 the plan
// checkout's "Follow and add funds" follows and opens the wallet's Add funds.
func TestJoiningFollowsTheApp(t *testing.T) {
	t.Parallel()
	f, db := gatedDemo(t)
	ctx := context.Background()
	var circle string
	if err := db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND sku = 'SUB-SC-01'", f.demo.ID).Scan(ctx, &circle); err != nil {
		t.Fatal(err)
	}
	newcomer := func(name string) (*store.User, map[string]string) {
		u, err := f.ts.store.CreateUser(ctx, name+"@tiers.test", name, "not-a-password-hash")
		if err != nil {
			t.Fatal(err)
		}
		token, err := f.ts.store.CreateSession(ctx, u.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		return u, withSession(token)
	}
	roleOf := func(u *store.User) string {
		var role string
		db.NewSelect().Table("memberships").Column("role").Where("app_id = ? AND user_id = ?", f.demo.ID, u.ID).Scan(ctx, &role)
		return role
	}

	u, page := newcomer("newcomer")
	co := f.ts.do(t, "GET", "/apps/demo/checkout/plan/"+circle+"?cycle=MONTHLY", nil, page)
	if co.Status != 200 || !strings.Contains(co.Body, "Follow and add funds") || strings.Contains(co.Body, `class="add-funds-link"`) {
		t.Fatalf("plan checkout for a fan who does not follow: %d", co.Status)
	}
	r := f.ts.do(t, "POST", "/apps/demo/checkout/plan/"+circle, strings.NewReader(url.Values{"cycle": {"MONTHLY"}, "pay": {"other"}}.Encode()), form(page))
	loc := r.Header.Get("Location")
	if r.Status != 303 || !strings.HasPrefix(loc, "/apps/demo/checkout?orderId=") || roleOf(u) != store.RoleFollower {
		t.Fatalf("pay another way: %d %s, role %q", r.Status, loc, roleOf(u))
	}
	if step := f.ts.do(t, "GET", loc, nil, page); step.Status != 200 || !strings.Contains(step.Body, `value="stripe"`) || strings.Contains(step.Body, "Follow App to Access Store") {
		t.Fatalf("payment step: %d", step.Status)
	}

	// With $0 and no follow: the plan checkout's form follows and goes to Add funds.
	u2, page2 := newcomer("newcomer2")
	r = f.ts.do(t, "POST", "/apps/demo/follow", strings.NewReader("back=add-funds"), form(page2))
	if loc := r.Header.Get("Location"); r.Status != 303 || loc != "/apps/demo/transactions?return=membership#add-funds" || roleOf(u2) != store.RoleFollower {
		t.Fatalf("follow and add funds: %d %s, role %q", r.Status, loc, roleOf(u2))
	}
	if w := f.ts.do(t, "GET", "/apps/demo/transactions?return=membership", nil, page2); w.Status != 200 || !strings.Contains(w.Body, `id="add-funds"`) {
		t.Fatalf("wallet page after following: %d", w.Status)
	}

	// The gated landing lets a signed-in fan follow for free (then the
	// creator can find them, and give them a tier), and comes back to it.
	u3, page3 := newcomer("newcomer3")
	if l := f.ts.do(t, "GET", "/apps/demo", nil, page3); l.Status != 200 || !strings.Contains(l.Body, "Follow for free") {
		t.Fatalf("gated landing for a fan who does not follow: %d", l.Status)
	}
	r = f.ts.do(t, "POST", "/apps/demo/follow", strings.NewReader("back=landing"), form(page3))
	if loc := r.Header.Get("Location"); r.Status != 303 || loc != "/apps/demo" || roleOf(u3) != store.RoleFollower {
		t.Fatalf("follow from the landing: %d %s, role %q", r.Status, loc, roleOf(u3))
	}
	if l := f.ts.do(t, "GET", "/apps/demo", nil, page3); strings.Contains(l.Body, "Follow for free") || !strings.Contains(l.Body, ">Unfollow<") {
		t.Fatalf("gated landing for a follower still offers to follow")
	}
}

// gatedDemo is a payment fixture whose demo app lets only members past the
// landing page.
func gatedDemo(t *testing.T) (*payFixture, *bun.DB) {
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	if _, err := db.NewUpdate().Model((*store.App)(nil)).Where("id = ?", f.demo.ID).
		Set("settings = ?", gatedSettings(f.demo.Settings)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	f.ts.store.InvalidateLanding(ctx, f.demo.ID)
	return f, db
}
