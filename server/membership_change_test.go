package server

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
)

// Issue 40 item 4: moving between tiers. These run on SQLite and
// PostgreSQL (demoBoth).

type tierChangeAnswer struct {
	Data    TierChangeData `json:"data"`
	Message string         `json:"message"`
}

func (f *tierFixture) change(t *testing.T, h map[string]string, itemID string) (int, tierChangeAnswer) {
	t.Helper()
	var got tierChangeAnswer
	r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.app.ID+"/change", body(map[string]any{"itemId": itemID}), h)
	if r.Status == 200 {
		commJSON(t, r, &got)
	} else {
		got.Message = r.Body
	}
	return r.Status, got
}

func (f *tierFixture) joinWallet(t *testing.T, h map[string]string, itemID, cycle string) {
	t.Helper()
	r := f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", body(map[string]any{"itemId": itemID, "paymentMethod": store.WalletMethod, "cycle": cycle}), h)
	if r.Status != 200 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
}

func (f *tierFixture) sub(t *testing.T, userID string) *store.Subscription {
	t.Helper()
	s, err := f.ts.store.SubscriptionOf(context.Background(), f.app.ID, userID)
	if err != nil || s == nil {
		t.Fatalf("subscription: %v %v", s, err)
	}
	return s
}

func (f *tierFixture) balance(t *testing.T, userID string) int64 {
	t.Helper()
	b, err := f.ts.store.WalletBalance(context.Background(), f.app.ID, userID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// prorated is the expected charge, worked out in exact fractions: the
// difference times the seconds left over the seconds of the period,
// rounded up to the cent.
func prorated(diff int64, left, length time.Duration) int64 {
	q := new(big.Rat).SetFrac(big.NewInt(diff*int64(left/time.Second)), big.NewInt(int64(length/time.Second)))
	n := new(big.Int).Quo(q.Num(), q.Denom())
	if new(big.Rat).SetInt(n).Cmp(q) < 0 {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64()
}

// An upgrade paid by the wallet takes effect at once and charges the
// prorated difference once, however many requests race; a downgrade waits
// for the period end, where the renewal charges the lower price; choosing
// the own tier again calls a waiting downgrade off.
func TestTierChangeByWallet(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		circle, backstage := f.tiers[0], f.tiers[1]
		uid, sess := f.fan(t, "mover", 5000)
		h := withSession(sess, "Content-Type", "application/json")
		f.joinWallet(t, h, circle.ItemID, store.CycleMonthly)
		if b := f.balance(t, uid); b != 5000-800 {
			t.Fatalf("after joining: balance %d", b)
		}

		// Half-way through the period: the period ends in 15 days.
		end := time.Now().UTC().Add(15 * 24 * time.Hour).Truncate(time.Second)
		if _, err := db.NewUpdate().Table("subscriptions").Set("current_period_end = ?", end).Where("app_id = ? AND user_id = ?", f.app.ID, uid).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		length := end.Sub(end.AddDate(0, -1, 0))

		// The quote changes nothing.
		var quote tierChangeAnswer
		r := f.ts.do(t, "GET", "/api/memberships/apps/"+f.app.ID+"/change/"+backstage.ItemID, nil, h)
		if r.Status != 200 {
			t.Fatalf("quote: %d %s", r.Status, r.Body)
		}
		commJSON(t, r, &quote)
		q := quote.Data.Change
		lo, hi := prorated(700, time.Until(end)-time.Minute, length), prorated(700, end.Sub(time.Now().Add(-time.Second)), length)
		if q == nil || q.Direction != store.TierUpgrade || q.Price != 1500 || q.Charge < lo || q.Charge > hi || q.Cycle != store.CycleMonthly {
			t.Fatalf("quote: %+v (want a charge within %d..%d)", q, lo, hi)
		}
		if s := f.sub(t, uid); s.PlanID != circle.ID || f.balance(t, uid) != 4200 {
			t.Fatalf("a quote changed the membership: %+v", s)
		}

		// 60 upgrades at once: one charge, one move.
		var wg sync.WaitGroup
		codes := make([]int, 60)
		charges := make([]int64, 60)
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				code, a := f.change(t, h, backstage.ItemID)
				codes[i] = code
				if code == 200 && a.Data.Change.Direction == store.TierUpgrade {
					charges[i] = a.Data.Change.Charge
				}
			}(i)
		}
		wg.Wait()
		var upgrades int
		var charge int64
		for i, c := range codes {
			if c != 200 && c != 409 {
				t.Fatalf("upgrade %d: %d", i, c)
			}
			if charges[i] > 0 {
				upgrades++
				charge = charges[i]
			}
		}
		if upgrades != 1 || charge < lo || charge > hi {
			t.Fatalf("%d upgrades answered, charge %d (want one within %d..%d)", upgrades, charge, lo, hi)
		}
		s := f.sub(t, uid)
		if s.PlanID != backstage.ID || s.Amount != 1500 || !s.CurrentPeriodEnd.Equal(end) || f.balance(t, uid) != 4200-charge {
			t.Fatalf("after the upgrade: %+v balance %d", s, f.balance(t, uid))
		}
		var debits int
		if err := db.NewSelect().Table("wallet_transfers").ColumnExpr("COUNT(*)").Where("reference LIKE ?", "upgrade:"+s.ID+":%").Scan(ctx, &debits); err != nil {
			t.Fatal(err)
		}
		if debits != 1 {
			t.Fatalf("upgrade transfers: %d", debits)
		}
		// The member now sees the tier's content, and the studio counts
		// the member in the new tier at the new price.
		an, err := f.ts.store.AppAnalytics(ctx, f.app.ID, store.AnalyticsRange{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), Bucket: "day"})
		if err != nil {
			t.Fatal(err)
		}
		if !tierHas(an.Recurring, backstage.ID, 1500) {
			t.Fatalf("recurring after the upgrade: %+v", an.Recurring)
		}

		// Downgrade: nothing charged, the tier stays until the period end.
		code, a := f.change(t, h, circle.ItemID)
		if code != 200 || a.Data.Change.Direction != store.TierDowngrade || a.Data.Change.Charge != 0 || !a.Data.Change.EffectiveAt.Equal(end) {
			t.Fatalf("downgrade: %d %+v", code, a)
		}
		if s := f.sub(t, uid); s.PlanID != backstage.ID || f.balance(t, uid) != 4200-charge {
			t.Fatalf("a downgrade took effect at once: %+v", s)
		}
		if d := f.tiersAPI(t, h); d.Next == nil || d.Next.ID != circle.ID || d.Current.ID != backstage.ID || !d.Changeable || d.Cycle != store.CycleMonthly {
			t.Fatalf("tiers after the downgrade: %+v", d)
		}
		// Keep: the waiting downgrade is called off; then downgrade again.
		if code, a := f.change(t, h, backstage.ItemID); code != 200 || a.Data.Change.Direction != store.TierKeep {
			t.Fatalf("keep: %d %+v", code, a)
		}
		if d := f.tiersAPI(t, h); d.Next != nil {
			t.Fatalf("the downgrade was not called off: %+v", d.Next)
		}
		if code, _ := f.change(t, h, circle.ItemID); code != 200 {
			t.Fatalf("downgrade again: %d", code)
		}
		// The renewal at the period end charges the lower price and moves
		// the member to the lower tier.
		before := f.balance(t, uid)
		if res, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: end}); err != nil || res.Renewed != 1 {
			t.Fatalf("renewal: %+v %v", res, err)
		}
		s = f.sub(t, uid)
		if s.PlanID != circle.ID || s.Amount != 800 || s.NextPlanID != nil || f.balance(t, uid) != before-800 || !s.CurrentPeriodEnd.After(end) {
			t.Fatalf("after the renewal: %+v balance %d (was %d)", s, f.balance(t, uid), before)
		}
		if d := f.tiersAPI(t, h); d.Next != nil || d.Current == nil || d.Current.ID != circle.ID {
			t.Fatalf("tiers after the renewal: %+v", d)
		}
	})
}

func tierHas(rec store.Recurring, tierID string, mrr int64) bool {
	for _, t := range rec.Tiers {
		if t.TierID == tierID && t.Paid == 1 && t.MRR == mrr {
			return true
		}
	}
	return false
}

// What cannot move says so and changes nothing: a wallet too low for the
// upgrade (402, with Add funds on the page), no membership (409), a gift
// (409), a free trial (409), a membership cancelled at the period end (409), a draft tier
// (404).
func TestTierChangeRefusals(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		circle, backstage := f.tiers[0], f.tiers[1]
		uid, sess := f.fan(t, "short", 800)
		h := withSession(sess, "Content-Type", "application/json")
		f.joinWallet(t, h, circle.ItemID, store.CycleMonthly)
		if code, a := f.change(t, h, backstage.ItemID); code != 402 || !strings.Contains(a.Message, "wallet") {
			t.Fatalf("upgrade without funds: %d %s", code, a.Message)
		}
		if s := f.sub(t, uid); s.PlanID != circle.ID || s.Amount != 800 {
			t.Fatalf("a refused upgrade changed the membership: %+v", s)
		}
		page := f.ts.do(t, "GET", "/apps/demo/membership/change/"+backstage.ItemID, nil, h)
		if page.Status != 200 || !strings.Contains(page.Body, "Add funds") || !strings.Contains(page.Body, "Upgrade to Backstage Pass") {
			t.Fatalf("confirmation without funds: %d %s", page.Status, page.Body[strings.Index(page.Body, "<h1"):])
		}
		// Without JavaScript the refused form comes back with why.
		post := f.ts.do(t, "POST", "/apps/demo/membership/change/"+backstage.ItemID, strings.NewReader("x=1"), form(withSession(sess)))
		if post.Status != 402 || !strings.Contains(post.Body, msgNotEnoughWallet) {
			t.Fatalf("refused form: %d %.400s", post.Status, post.Body)
		}

		_, stranger := f.fan(t, "stranger", 5000)
		if code, a := f.change(t, withSession(stranger, "Content-Type", "application/json"), backstage.ItemID); code != 409 || !strings.Contains(a.Message, "no active membership") {
			t.Fatalf("no membership: %d %s", code, a.Message)
		}

		gifted, giftSess := f.fan(t, "gifted", 5000)
		if _, err := f.ts.store.GiveComplimentary(ctx, store.Comp{AppID: f.app.ID, ActorID: f.creatorID(t), UserID: gifted, PlanID: circle.ID, Months: 3}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if code, a := f.change(t, withSession(giftSess, "Content-Type", "application/json"), backstage.ItemID); code != 409 || !strings.Contains(a.Message, "gift") {
			t.Fatalf("gift: %d %s", code, a.Message)
		}

		_, trialSess := f.fan(t, "trialist", 5000)
		th := withSession(trialSess, "Content-Type", "application/json")
		f.joinWallet(t, th, backstage.ItemID, store.CycleMonthly)
		if code, a := f.change(t, th, circle.ItemID); code != 409 || !strings.Contains(a.Message, "free trial") {
			t.Fatalf("trial: %d %s", code, a.Message)
		}

		if err := f.ts.store.SetTierState(ctx, f.app.ID, f.creatorID(t), backstage.ItemID, store.TierDraft); err != nil {
			t.Fatal(err)
		}
		if code, _ := f.change(t, h, backstage.ItemID); code != 404 {
			t.Fatalf("draft tier: %d", code)
		}
		if r := f.ts.do(t, "POST", "/api/subscriptions/apps/demo/cancel", body(map[string]any{"cancel": true}), h); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if code, a := f.change(t, h, backstage.ItemID); code != 409 || !strings.Contains(a.Message, "keep it first") {
			t.Fatalf("cancelled: %d %s", code, a.Message)
		}

	})
}

// The membership page leads a member whose membership renews to the
// confirmation (not the plan checkout), which works without JavaScript,
// and then shows the waiting downgrade with a way to keep the tier.
func TestTierChangePages(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		circle, backstage := f.tiers[0], f.tiers[1]
		uid, sess := f.fan(t, "pager", 5000)
		h := withSession(sess, "Content-Type", "application/json")
		// Backstage Pass starts with a free trial: join the first tier and
		// move up to it.
		f.joinWallet(t, h, circle.ItemID, store.CycleMonthly)
		if code, a := f.change(t, h, backstage.ItemID); code != 200 || a.Data.Change.Direction != store.TierUpgrade {
			t.Fatalf("upgrade: %d %+v", code, a)
		}

		page := f.ts.do(t, "GET", "/apps/demo/membership", nil, h)
		if page.Status != 200 || !strings.Contains(page.Body, `href="/apps/demo/membership/change/`+circle.ItemID+`"`) ||
			strings.Contains(page.Body, `action="/apps/demo/checkout/plan/`+circle.ItemID+`"`) {
			t.Fatalf("membership page for a member: %d %.600s", page.Status, page.Body)
		}
		confirm := f.ts.do(t, "GET", "/apps/demo/membership/change/"+circle.ItemID, nil, h)
		if confirm.Status != 200 || !strings.Contains(confirm.Body, "Downgrade to Studio Circle Membership") ||
			!strings.Contains(confirm.Body, `action="/apps/demo/membership/change/`+circle.ItemID+`"`) || !strings.Contains(confirm.Body, "nothing is charged now") {
			t.Fatalf("confirmation: %d %.600s", confirm.Status, confirm.Body)
		}
		post := f.ts.do(t, "POST", "/apps/demo/membership/change/"+circle.ItemID, strings.NewReader("x=1"), form(withSession(sess)))
		if post.Status != 303 || post.Header.Get("Location") != "/apps/demo/membership?notice=downgrade" {
			t.Fatalf("form: %d %s", post.Status, post.Header.Get("Location"))
		}
		page = f.ts.do(t, "GET", "/apps/demo/membership?notice=downgrade", nil, h)
		if !strings.Contains(page.Body, "Your tier changes at the end of the current period.") || !strings.Contains(page.Body, "Moves to") ||
			!strings.Contains(page.Body, "Keep Backstage Pass") {
			t.Fatalf("membership page after the downgrade: %.800s", page.Body)
		}
		if s := f.sub(t, uid); s.PlanID != backstage.ID || s.NextPlanID == nil || *s.NextPlanID != circle.ID {
			t.Fatalf("after the form: %+v", s)
		}
		// A mail and a notice tell the member what happens when.
		var n int
		if err := db.NewSelect().Table("mails").ColumnExpr("COUNT(*)").Where("user_id = ? AND mail_key LIKE ?", uid, "membership:%:changed:%").Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Fatalf("tier change mails: %d, want the upgrade's and the downgrade's", n)
		}
	})
}

func (f *tierFixture) creatorID(t *testing.T) string {
	t.Helper()
	var id string
	if err := f.ts.store.DB().NewSelect().Table("users").Column("id").Where("email = ?", "creator@demo.test").Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// joinByCard has the member (session as) join the demo's tier itemID by
// card and its Stripe subscription start; it answers a reader of the
// member's membership.
func joinByCard(t *testing.T, f *payFixture, as map[string]string, uid, itemID string) func() *store.Subscription {
	t.Helper()
	ctx := context.Background()
	sub := func() *store.Subscription {
		t.Helper()
		s, err := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
		if err != nil || s == nil {
			t.Fatalf("subscription: %v %v", s, err)
		}
		return s
	}
	a := decodePay(t, f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe",
		body(map[string]any{"itemId": itemID, "paymentMethod": "stripe", "cycle": store.CycleMonthly}), as))
	pay, _ := a.Data["payment"].(map[string]any)
	if pay == nil {
		t.Fatalf("subscribe by card: %+v", a)
	}
	if r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pay["ref"], "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	if n := runCardRenewalJobs(t, f); n != 1 {
		t.Fatalf("start_card_renewal jobs: %d", n)
	}
	if sub().ProviderRef == "" {
		t.Fatal("no Stripe subscription")
	}
	return sub
}

// A card membership moves between tiers through its Stripe subscription:
// an upgrade moves the subscription to the new price with always_invoice
// (Stripe invoices the prorated difference, booked once from invoice.paid)
// and the tier changes at once; a downgrade moves the price without
// proration and the tier changes with the next invoice; a change made in
// Stripe's customer portal (customer.subscription.updated) is reflected.
func TestTierChangeByCard(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	tiers, err := f.ts.store.StudioPlans(ctx, f.demo.ID)
	if err != nil || len(tiers) != 3 {
		t.Fatalf("tiers: %v %v", tiers, err)
	}
	circle, backstage := tiers[0], tiers[1]
	sub := joinByCard(t, f, as, uid, circle.ItemID)
	ref := sub().ProviderRef
	seen := len(f.stripe.Events())
	// deliver sends Stripe's events since the last call, each twice (a
	// repeated delivery applies once), and answers their types.
	deliver := func() []string {
		t.Helper()
		evs := f.stripe.Events()[seen:]
		seen += len(evs)
		var types []string
		for _, ev := range evs {
			for range 2 {
				if r := stripeHook(t, f, ev.Payload, ev.Header); r.Status != 200 {
					t.Fatalf("%s: %d %s", ev.Type, r.Status, r.Body)
				}
			}
			types = append(types, ev.Type)
		}
		return types
	}
	upgradeEarnings := func() int64 {
		t.Helper()
		var cents int64
		if err := db.NewSelect().Table("wallet_transfers").ColumnExpr("COALESCE(SUM(amount), 0)").Where("reference LIKE 'upgrade-invoice:%:earning'").Scan(ctx, &cents); err != nil {
			t.Fatal(err)
		}
		return cents
	}

	// Upgrade: the card is invoiced, not the wallet.
	balance := func() int64 {
		b, err := f.ts.store.WalletBalance(ctx, f.demo.ID, uid)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := balance()
	r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": backstage.ItemID}), as)
	if r.Status != 200 {
		t.Fatalf("upgrade: %d %s", r.Status, r.Body)
	}
	s := sub()
	ss := f.stripe.Subscription(ref)
	price := ss["items"].(map[string]any)["data"].([]any)[0].(map[string]any)["price"].(map[string]any)
	if s.PlanID != backstage.ID || s.Amount != 1500 || balance() != before || int64(price["unit_amount"].(float64)) != 1500 ||
		price["metadata"].(map[string]any)["planId"] != backstage.ID {
		t.Fatalf("after the upgrade: %+v stripe price %+v", s, price)
	}
	if types := deliver(); strings.Join(types, ",") != "invoice.paid,customer.subscription.updated" {
		t.Fatalf("stripe events of the upgrade: %v", types)
	}
	// The difference for (almost) the whole month: $7, booked once.
	if got := upgradeEarnings(); got < 699 || got > 700 {
		t.Fatalf("upgrade invoice booked: %d", got)
	}
	if s := sub(); s.PlanID != backstage.ID || s.NextPlanID != nil {
		t.Fatalf("the echo changed the membership: %+v", s)
	}

	// Downgrade: the price moves without proration, the tier waits.
	r = f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": circle.ItemID}), as)
	if r.Status != 200 {
		t.Fatalf("downgrade: %d %s", r.Status, r.Body)
	}
	if types := deliver(); strings.Join(types, ",") != "customer.subscription.updated" {
		t.Fatalf("stripe events of the downgrade: %v", types)
	}
	if s := sub(); s.PlanID != backstage.ID || s.NextPlanID == nil || *s.NextPlanID != circle.ID {
		t.Fatalf("after the downgrade: %+v", s)
	}
	f.stripe.RenewSubscription(ref)
	deliver()
	if s := sub(); s.PlanID != circle.ID || s.Amount != 800 || s.NextPlanID != nil || s.Renewals != 1 {
		t.Fatalf("after the renewal: %+v", s)
	}

	// The customer portal moves the subscription to a higher tier's price:
	// the membership follows at once.
	stripeForm := func(path string, v url.Values) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", f.stripe.URL+path, strings.NewReader(v.Encode()))
		req.Header.Set("Authorization", "Bearer sk_test_portal")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
			t.Fatalf("stripe %s: %d %v %v", path, res.StatusCode, out, err)
		}
		return out
	}
	pr := stripeForm("/v1/prices", url.Values{"currency": {"usd"}, "unit_amount": {"1500"}, "recurring[interval]": {"month"},
		"product_data[name]": {"Backstage Pass"}, "metadata[planId]": {backstage.ID}})
	item := f.stripe.Subscription(ref)["items"].(map[string]any)["data"].([]any)[0].(map[string]any)["id"].(string)
	stripeForm("/v1/subscriptions/"+ref, url.Values{"items[0][id]": {item}, "items[0][price]": {pr["id"].(string)}, "proration_behavior": {"none"}})
	if types := deliver(); strings.Join(types, ",") != "customer.subscription.updated" {
		t.Fatalf("stripe events of the portal change: %v", types)
	}
	if s := sub(); s.PlanID != backstage.ID || s.Amount != 1500 || s.NextPlanID != nil {
		t.Fatalf("after the portal's upgrade: %+v", s)
	}
	// The portal's cancel at period end is reflected too.
	stripeForm("/v1/subscriptions/"+ref, url.Values{"cancel_at_period_end": {"true"}, "items[0][id]": {item}, "items[0][price]": {pr["id"].(string)}})
	deliver()
	if s := sub(); !s.CancelAtPeriodEnd {
		t.Fatalf("the portal's cancel was not reflected: %+v", s)
	}
}

// A member who upgrades sees the new tier's posts on the next page, though
// the page cache remembered their standing (their class) a moment before:
// the form's write marks the browser, and a marked request asks again.
func TestUpgradeShowsTheTierAtOnce(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ctx := context.Background()
	circle, backstage := f.tiers[0], f.tiers[1]
	var communityID string
	if err := f.ts.store.DB().NewSelect().Table("communities").Column("id").Where("app_id = ?", f.app.ID).Limit(1).Scan(ctx, &communityID); err != nil {
		t.Fatal(err)
	}
	creator := jsonHeaders(withSession(sessionFor(t, f.ts, "creator@demo.test")))
	if r := f.ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"Quetzal-backstage-only","type":"POST","communityId":"`+communityID+`","access":{"audience":"MEMBERS","minTierId":"`+backstage.ID+`"}}`), creator); r.Status != 201 {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	_, sess := f.fan(t, "climber", 5000)
	f.joinWallet(t, withSession(sess, "Content-Type", "application/json"), circle.ItemID, store.CycleMonthly)
	if r := f.ts.do(t, "GET", "/apps/demo/community", nil, withSession(sess)); r.Status != 200 || strings.Contains(r.Body, "Quetzal-backstage-only") {
		t.Fatalf("first tier reads the second tier's post: %d", r.Status)
	}
	up := f.ts.do(t, "POST", "/apps/demo/membership/change/"+backstage.ItemID, strings.NewReader("x=1"), form(withSession(sess)))
	fresh := ""
	for _, c := range up.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, freshCookie+"=") {
			fresh = strings.SplitN(c, ";", 2)[0]
		}
	}
	if up.Status != 303 || fresh == "" {
		t.Fatalf("upgrade: %d, cookies %v", up.Status, up.Header.Values("Set-Cookie"))
	}
	h := withSession(sess)
	h["Cookie"] += "; " + fresh
	if r := f.ts.do(t, "GET", "/apps/demo/community", nil, h); !strings.Contains(r.Body, "Quetzal-backstage-only") {
		t.Fatalf("after the upgrade the tier's post is still locked: %d", r.Status)
	}
}
