package server

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/payments/stripe"
	"marquee/store"
)

// Offer codes on upgrades (issue 40 item 5): an upgrade paid by the wallet
// takes a code (50% off the first month): the upgrade's charge is the
// prorated difference with the code, the renewal within the month is at
// the code's price and the next at the full one; 50 upgrades at once with
// the code redeem it once and charge once; the code is refused on a
// downgrade and a second time; the tier change page takes the code without
// JavaScript (a GET form prices it, the confirmation posts it).
func TestTierUpgradeWithCode(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		circle, backstage := f.tiers[0], f.tiers[1]
		offer, err := f.ts.store.CreateOffer(ctx, f.app.ID, f.userIDOf(t, "creator@demo.test"),
			store.OfferInput{Code: "HALFUP", PercentOff: 50, Duration: store.OfferRepeating, DurationMonths: 1}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		uid, sess := f.fan(t, "codeup", 5000)
		h := withSession(sess, "Content-Type", "application/json")
		f.joinWallet(t, h, circle.ItemID, store.CycleMonthly)
		end := time.Now().UTC().Add(15 * 24 * time.Hour).Truncate(time.Second)
		if _, err := db.NewUpdate().Table("subscriptions").Set("current_period_end = ?", end).Where("app_id = ? AND user_id = ?", f.app.ID, uid).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		length := end.Sub(end.AddDate(0, -1, 0))

		// The page, without JavaScript: the code field, and the price with it.
		page := f.ts.do(t, "GET", "/apps/demo/membership/change/"+backstage.ItemID+"?code=halfup", nil, withSession(sess))
		if page.Status != 200 || !strings.Contains(page.Body, "Have a code?") || !strings.Contains(page.Body, "HALFUP: 50% off the first month") ||
			!strings.Contains(page.Body, `type="hidden" name="code" value="HALFUP"`) || !strings.Contains(page.Body, "while the code runs, then $15.00") {
			t.Fatalf("the tier change page with a code: %d", page.Status)
		}
		if bad := f.ts.do(t, "GET", "/apps/demo/membership/change/"+backstage.ItemID+"?code=nope", nil, withSession(sess)); bad.Status != 400 ||
			!strings.Contains(bad.Body, "This code is not valid for this app") || !strings.Contains(bad.Body, "Confirm upgrade") {
			t.Fatalf("an unknown code on the page: %d", bad.Status)
		}
		// A downgrade takes no code.
		if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.app.ID+"/change", body(map[string]any{"itemId": circle.ItemID, "code": "HALFUP"}), h); r.Status != 200 {
			// the own tier (KEEP) ignores it
			t.Fatalf("keep with a code: %d %s", r.Status, r.Body)
		}

		// 50 upgrades at once with the code: one redemption, one charge.
		before := f.balance(t, uid)
		var wg sync.WaitGroup
		statuses := make([]int, 50)
		bodies := make([]string, 50)
		var mu sync.Mutex
		var got *store.TierChange
		for i := range statuses {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.app.ID+"/change", body(map[string]any{"itemId": backstage.ItemID, "code": "HALFUP"}), h)
				statuses[i], bodies[i] = r.Status, r.Body
				if r.Status == 200 {
					var a tierChangeAnswer
					commJSON(t, r, &a)
					if a.Data.Change.Direction == store.TierUpgrade {
						mu.Lock()
						got = a.Data.Change
						mu.Unlock()
					}
				}
			}(i)
		}
		wg.Wait()
		for i, st := range statuses {
			if st != 200 && st != 409 {
				t.Fatalf("upgrade %d answered %d: %s", i, st, bodies[i])
			}
		}
		if got == nil || got.Offer == nil || got.Offer.Code != "HALFUP" {
			t.Fatalf("no upgrade with the code: %v %+v", statuses, got)
		}
		full := got.Offer.ListPrice
		lo, hi := prorated(700, time.Until(end)-time.Minute, length), prorated(700, end.Sub(time.Now().Add(-time.Second)), length)
		if full < lo || full > hi || got.Charge != full-(full*50+50)/100 || got.Offer.Discount != full-got.Charge || got.NextCharge != 750 || got.Price != 1500 {
			t.Fatalf("the upgrade with HALFUP: %+v %+v (full within %d..%d)", got, got.Offer, lo, hi)
		}
		if b := f.balance(t, uid); b != before-got.Charge {
			t.Fatalf("charged %d, want %d", before-b, got.Charge)
		}
		var o store.Offer
		if err := db.NewSelect().Model(&o).Where("id = ?", offer.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		n, _ := db.NewSelect().Table("offer_redemptions").Where("offer_id = ? AND user_id = ?", offer.ID, uid).Count(ctx)
		if o.Redemptions != 1 || n != 1 {
			t.Fatalf("HALFUP redeemed %d times (%d rows)", o.Redemptions, n)
		}
		s := f.sub(t, uid)
		if s.PlanID != backstage.ID || s.Amount != 750 || s.ListAmount != 1500 || s.DiscountLeft != 1 || s.OfferID == nil || *s.OfferID != offer.ID {
			t.Fatalf("the membership after the upgrade: %+v", s)
		}
		// The renewal within the month at $7.50, the next at $15.
		for _, want := range []int64{750, 1500} {
			before := f.balance(t, uid)
			cur := f.sub(t, uid)
			if res, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: cur.CurrentPeriodEnd.Add(-10 * time.Minute)}); err != nil || res.Renewed != 1 {
				t.Fatalf("renewal: %+v %v", res, err)
			}
			if d := before - f.balance(t, uid); d != want {
				t.Fatalf("renewal charged %d, want %d", d, want)
			}
		}
		// A downgrade refuses a code.
		if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.app.ID+"/change", body(map[string]any{"itemId": circle.ItemID, "code": "HALFUP"}), h); r.Status != 409 ||
			!strings.Contains(r.Body, "applies to an upgrade") {
			t.Fatalf("a downgrade with a code: %d %s", r.Status, r.Body)
		}

		// The form, without JavaScript: a second fan upgrades with the code.
		uid2, sess2 := f.fan(t, "codeform", 5000)
		f.joinWallet(t, withSession(sess2, "Content-Type", "application/json"), circle.ItemID, store.CycleMonthly)
		seeOther(t, f.ts.do(t, "POST", "/apps/demo/membership/change/"+backstage.ItemID, strings.NewReader("code=HALFUP"), form(withSession(sess2))),
			"/apps/demo/membership?notice=upgrade")
		if s := f.sub(t, uid2); s.PlanID != backstage.ID || s.OfferID == nil || *s.OfferID != offer.ID {
			t.Fatalf("the form's upgrade: %+v", s)
		}
	})
}

// An upgrade by card with a code: the code is reserved before Stripe is
// asked, the Stripe subscription moves to the new price with the offer's
// coupon as its discount (one coupon for the offer, by its own id, reused
// by a second member), and the upgrade's invoice is discounted; 20
// upgrades at once redeem once.
func TestTierUpgradeWithCodeByCard(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	tiers, err := f.ts.store.StudioPlans(ctx, f.demo.ID)
	if err != nil || len(tiers) != 3 {
		t.Fatalf("tiers: %v %v", tiers, err)
	}
	circle, backstage := tiers[0], tiers[1]
	offer, err := f.ts.store.CreateOffer(ctx, f.demo.ID, f.userID(t, "creator@demo.test"),
		store.OfferInput{Code: "HALFUP", PercentOff: 50, Duration: store.OfferRepeating, DurationMonths: 1}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var coupon string
	for _, email := range []string{"follower@demo.test", "member@demo.test"} {
		as := commUser(t, f.ts, email)
		uid := f.userID(t, email)
		if _, err := f.ts.store.Follow(ctx, f.demo.ID, uid); err != nil {
			t.Fatal(err)
		}
		if cur, _ := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid); cur != nil && cur.Status == store.SubActive {
			if _, err := db.NewDelete().Table("subscriptions").Where("id = ?", cur.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		a := decodePay(t, f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe",
			body(map[string]any{"itemId": circle.ItemID, "paymentMethod": "stripe", "cycle": store.CycleMonthly}), as))
		pay, _ := a.Data["payment"].(map[string]any)
		if pay == nil {
			t.Fatalf("%s: subscribe by card: %+v", email, a)
		}
		if r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pay["ref"], "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
			t.Fatalf("%s: confirm: %d %s", email, r.Status, r.Body)
		}
		runCardRenewalJobs(t, f)
		sub, _ := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
		if sub == nil || sub.ProviderRef == "" {
			t.Fatalf("%s: no Stripe subscription: %+v", email, sub)
		}
		ref := sub.ProviderRef
		seen := len(f.stripe.Events())
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		for i := range statuses {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": backstage.ItemID, "code": "halfup"}), as).Status
			}(i)
		}
		wg.Wait()
		ok := 0
		for _, st := range statuses {
			switch st {
			case 200:
				ok++
			case 409:
			default:
				t.Fatalf("%s: an upgrade answered %d: %v", email, st, statuses)
			}
		}
		if ok < 1 {
			t.Fatalf("%s: no upgrade went through: %v", email, statuses)
		}
		if n, _ := db.NewSelect().Table("offer_redemptions").Where("offer_id = ? AND user_id = ? AND method = 'stripe'", offer.ID, uid).Count(ctx); n != 1 {
			t.Fatalf("%s: %d redemptions", email, n)
		}
		sub, _ = f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
		if sub.PlanID != backstage.ID || sub.OfferID == nil || *sub.OfferID != offer.ID || sub.ListAmount != 1500 || sub.Amount != 750 {
			t.Fatalf("%s: after the upgrade: %+v", email, sub)
		}
		c := f.stripe.SubscriptionCoupon(ref)
		if c != stripe.CouponID(&stripe.Coupon{OfferID: offer.ID, Duration: "repeating", Months: 1}, "USD") {
			t.Fatalf("%s: the subscription's coupon %q", email, c)
		}
		if coupon != "" && c != coupon {
			t.Fatalf("a second coupon for one offer: %s and %s", coupon, c)
		}
		coupon = c
		if co := f.stripe.Coupon(c); co["percent_off"] != 50.0 || co["duration"] != "repeating" || num(co["duration_in_months"]) != 1 {
			t.Fatalf("the coupon: %+v", co)
		}
		// The upgrade's invoice: half the prorated $7 (almost a month left).
		var paid int64 = -1
		for _, ev := range f.stripe.Events()[seen:] {
			if ev.Type == "invoice.paid" {
				var inv struct {
					Data struct {
						Object struct {
							AmountPaid int64 `json:"amount_paid"`
						} `json:"object"`
					} `json:"data"`
				}
				if err := json.Unmarshal(ev.Payload, &inv); err != nil {
					t.Fatal(err)
				}
				paid = inv.Data.Object.AmountPaid
			}
		}
		if paid < 349 || paid > 350 {
			t.Fatalf("%s: the upgrade invoice charged %d, want half of $7", email, paid)
		}
	}
}
