package server

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// Offer codes on a PayPal membership's upgrade (issue 40 item 5), by the
// same rules as the wallet's and the card's: the prorated difference PayPal
// charges is discounted, PayPal's plan bills the code's price for exactly
// the renewals the code covers from the upgrade on and the list price
// after, and the code is redeemed once, when the member approved the move.

// ppOffer makes a code of the demo app.
func (f *ppSubFixture) ppOffer(t *testing.T, in store.OfferInput) *store.Offer {
	t.Helper()
	o, err := f.ts.store.CreateOffer(context.Background(), f.demo.ID, f.userID(t, "creator@demo.test"), in, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// redemptions answers the code's count and the member's redemption rows.
func (f *ppSubFixture) redemptions(t *testing.T, offerID string) (int64, int) {
	t.Helper()
	ctx := context.Background()
	var o store.Offer
	if err := f.db.NewSelect().Model(&o).Where("id = ?", offerID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := f.db.NewSelect().Table("offer_redemptions").Where("offer_id = ? AND user_id = ? AND method = 'paypal'", offerID, f.uid).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return o.Redemptions, int(n)
}

// renewAt plays PayPal's next cycle and its webhook, and answers what
// PayPal billed.
func (f *ppSubFixture) renewAt(t *testing.T, ref string) string {
	t.Helper()
	sale := f.paypal.RenewSubscription(ref)
	if sale == nil {
		t.Fatal("PayPal billed nothing")
	}
	if r := paypalHook(t, f.payFixture, f.last(t, "PAYMENT.SALE.COMPLETED")); r.Status != 200 {
		t.Fatalf("renewal: %d %s", r.Status, r.Body)
	}
	return sale.Amount.Value
}

// An upgrade with a code (50% off the first two months): codes that do not
// apply are refused before PayPal is asked; the page prices the code
// without JavaScript; fifty requests at once (API and form) make one
// revision, to a PayPal plan billing $7.50 for two cycles then $15; nothing
// is redeemed before the member approves; approved, fifty return visits and
// PayPal's events redeem the code once; the difference PayPal captures is
// half the prorated one; the renewals are $7.50, $7.50, then $15, as the
// membership records them.
func TestPayPalTierUpgradeWithCode(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPPSubFixture(t, db)
		ctx := context.Background()
		_, ref := f.joinedByPayPal(t)
		tiers := f.tiers(t)
		offer := f.ppOffer(t, store.OfferInput{Code: "HALF2", PercentOff: 50, Duration: store.OfferRepeating, DurationMonths: 2})
		past := time.Now().Add(-time.Hour)
		f.ppOffer(t, store.OfferInput{Code: "GONE", PercentOff: 50, Duration: store.OfferOnce, ExpiresAt: &past})
		used := f.ppOffer(t, store.OfferInput{Code: "USEDUP", PercentOff: 50, Duration: store.OfferOnce, MaxRedemptions: 1})
		if _, err := db.NewUpdate().Table("offers").Set("redemptions = 1").Where("id = ?", used.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		change := func(code string, h map[string]string) response {
			return f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID, "code": code}), h)
		}

		// Codes that do not apply never reach PayPal.
		for _, c := range []struct {
			code   string
			status int
			msg    string
		}{{"NOPE", 400, "This code is not valid for this app"}, {"GONE", 409, "This code has expired"}, {"USEDUP", 409, "This code has been used up"}} {
			commExpect(t, c.code, change(c.code, f.as), c.status, c.msg)
		}
		if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.circle.ItemID, "code": "HALF2"}), f.as); r.Status != 200 {
			t.Fatalf("the own tier with a code: %d %s", r.Status, r.Body) // KEEP ignores it
		}
		if n := f.paypal.RevisionCount(ref); n != 0 {
			t.Fatalf("PayPal revised %d times for codes that do not apply", n)
		}

		// The page, without JavaScript: the code field, and the price with it.
		page := f.ts.do(t, "GET", "/apps/demo/membership/change/"+tiers.backstage.ItemID+"?code=half2", nil, f.page)
		if page.Status != 200 || !strings.Contains(page.Body, "Have a code?") || !strings.Contains(page.Body, "HALF2: 50% off the first 2 months") ||
			!strings.Contains(page.Body, `type="hidden" name="code" value="HALF2"`) || !strings.Contains(page.Body, "while the code runs, then $15.00") ||
			!strings.Contains(page.Body, "Continue to PayPal · pay $3.") {
			t.Fatalf("the change page with a code: %d %.3000s", page.Status, page.Body[strings.Index(page.Body, "<main"):])
		}
		if bad := f.ts.do(t, "GET", "/apps/demo/membership/change/"+tiers.backstage.ItemID+"?code=gone", nil, f.page); bad.Status != 400 ||
			!strings.Contains(bad.Body, "This code has expired") || !strings.Contains(bad.Body, "Continue to PayPal") {
			t.Fatalf("an expired code on the page: %d", bad.Status)
		}

		// Fifty requests at once with the code: one move, one revision.
		var wg sync.WaitGroup
		var mu sync.Mutex
		hrefs := map[string]int{}
		ids := map[string]bool{}
		for i := range 50 {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				to := ""
				if i%5 == 0 {
					r := f.ts.do(t, "POST", "/apps/demo/membership/change/"+tiers.backstage.ItemID, strings.NewReader("code=half2"), form(f.page))
					if r.Status == 303 {
						to = r.Header.Get("Location")
					}
				} else {
					r := change("HALF2", f.as)
					var a struct {
						Data TierChangeData `json:"data"`
					}
					if r.Status == 200 && json.Unmarshal([]byte(r.Body), &a) == nil && a.Data.PayPal != nil && a.Data.Change.Offer != nil {
						to = a.Data.PayPal.Href
						mu.Lock()
						ids[a.Data.PayPal.ID] = true
						mu.Unlock()
					}
				}
				mu.Lock()
				hrefs[to]++
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		var approval, changeID string
		for k := range hrefs {
			approval = k
		}
		for k := range ids {
			changeID = k
		}
		if len(hrefs) != 1 || len(ids) != 1 || !strings.HasPrefix(approval, f.paypal.URL+"/webapps/billing/subscriptions?ba_token=") {
			t.Fatalf("change requests answered %v", hrefs)
		}
		if n := f.paypal.RevisionCount(ref); n != 1 {
			t.Fatalf("PayPal revised %d times", n)
		}
		row, err := f.ts.store.PayPalTierChangeByID(ctx, changeID)
		if err != nil {
			t.Fatal(err)
		}
		if row.OfferID != offer.ID || row.ListCharge < 600 || row.ListCharge > 700 || row.Charge != row.ListCharge-(row.ListCharge*50+50)/100 ||
			row.NextCharge != 750 || row.DiscountLeft != 2 || row.Price != 1500 {
			t.Fatalf("the move with HALF2: %+v", row)
		}
		if n, rows := f.redemptions(t, offer.ID); n != 0 || rows != 0 {
			t.Fatalf("redeemed before the approval: %d (%d rows)", n, rows)
		}
		// PayPal's page shows what the member agrees to.
		if ap := f.paypalApprovalPage(t, approval); !strings.Contains(ap, "7.50 USD first 2 × month") || !strings.Contains(ap, "15.00 USD every month") {
			t.Fatalf("PayPal's approval page: %s", ap)
		}

		// Approved: fifty return visits and PayPal's events at once redeem
		// the code once.
		back := f.agree(t, approval)
		if _, prices := f.paypal.SubscriptionPlan(ref); len(prices) != 2 || prices[0] != "TRIAL:7.50" || prices[1] != "REGULAR:15.00" {
			t.Fatalf("PayPal bills after the revision: %v", prices)
		}
		pays := returnsRaceUpdated(t, f, back)
		pay := otherThanHook(pays)
		if len(pays) != 2 || pays["hook"] != 13 || !strings.HasPrefix(pay, f.paypal.URL+"/checkoutnow?token=") {
			t.Fatalf("return visits went to %v", pays)
		}
		if n, rows := f.redemptions(t, offer.ID); n != 1 || rows != 1 {
			t.Fatalf("HALF2 redeemed %d times (%d rows)", n, rows)
		}
		var discount int64
		if err := db.NewSelect().Table("offer_redemptions").Column("discount").Where("offer_id = ?", offer.ID).Scan(ctx, &discount); err != nil ||
			discount != row.ListCharge-row.Charge {
			t.Fatalf("the redemption's discount: %d %v", discount, err)
		}

		// The difference, with the code.
		u, _ := url.Parse(pay)
		paypalOrder := u.Query().Get("token")
		f.approve(t, paypalOrder)
		if code, loc := ppGo(t, f, local(back)); code != 303 || loc != "/apps/demo/membership?notice=upgrade" {
			t.Fatalf("after paying: %d %s", code, loc)
		}
		if captures, captured, _ := f.paypal.Captured(paypalOrder); captures != 1 || captured != row.Charge {
			t.Fatalf("PayPal captured %d times, %d (charge %d)", captures, captured, row.Charge)
		}
		s := f.sub(t)
		if s.PlanID != tiers.backstage.ID || s.Amount != 750 || s.ListAmount != 1500 || s.DiscountLeft != 2 || s.OfferID == nil || *s.OfferID != offer.ID {
			t.Fatalf("after the upgrade: %+v", s)
		}
		// The same request again (the own tier now) moves and redeems nothing.
		if r := change("HALF2", f.as); r.Status != 200 || f.paypal.RevisionCount(ref) != 1 {
			t.Fatalf("repeat: %d %s", r.Status, r.Body)
		}
		if n, rows := f.redemptions(t, offer.ID); n != 1 || rows != 1 {
			t.Fatalf("HALF2 redeemed %d times after a repeat (%d rows)", n, rows)
		}

		// Two renewals at the code's price, then the list price: PayPal
		// bills what the membership says.
		for i, want := range []struct {
			billed string
			amount int64
			left   int64
		}{{"7.50", 750, 1}, {"7.50", 750, 0}, {"15.00", 1500, 0}} {
			if billed := f.renewAt(t, ref); billed != want.billed {
				t.Fatalf("renewal %d: PayPal billed %s, want %s", i+1, billed, want.billed)
			}
			if s := f.sub(t); s.Amount != want.amount || s.DiscountLeft != want.left || s.Renewals != int64(i+1) {
				t.Fatalf("renewal %d: the membership %+v", i+1, s)
			}
		}
	})
}

// The pitfall of an upgrade approved on PayPal whose difference is never
// paid: it starts with the next renewal, which PayPal bills at the code's
// price, and that renewal is the first of the code's: the membership counts
// exactly the renewals PayPal discounts (two here: $7.50, $7.50, then $15),
// not one late. A code for ever (an amount off every payment) revises to a
// plan at the code's price every cycle.
func TestPayPalTierUpgradeWithCodeUnpaid(t *testing.T) {
	t.Parallel()
	f := newPPSubFixture(t, demoDB(t))
	_, ref := f.joinedByPayPal(t)
	tiers := f.tiers(t)
	offer := f.ppOffer(t, store.OfferInput{Code: "HALF2", PercentOff: 50, Duration: store.OfferRepeating, DurationMonths: 2})
	r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID, "code": "HALF2"}), f.as)
	var a struct {
		Data TierChangeData `json:"data"`
	}
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &a) != nil || a.Data.PayPal == nil {
		t.Fatalf("upgrade: %d %s", r.Status, r.Body)
	}
	f.agree(t, a.Data.PayPal.Href)
	if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.UPDATED")); r.Status != 200 {
		t.Fatalf("updated: %d %s", r.Status, r.Body)
	}
	if row, _ := f.ts.store.PayPalTierChangeByID(context.Background(), a.Data.PayPal.ID); row == nil || row.Status != store.PayPalChangeRevised {
		t.Fatalf("the approved move: %+v", row)
	}
	if n, rows := f.redemptions(t, offer.ID); n != 1 || rows != 1 {
		t.Fatalf("HALF2 redeemed %d times on approval (%d rows)", n, rows)
	}
	if s := f.sub(t); s.PlanID != tiers.circle.ID || s.Amount != 800 {
		t.Fatalf("an unpaid upgrade started: %+v", s)
	}
	for i, want := range []struct {
		billed string
		plan   string
		amount int64
		left   int64
	}{{"7.50", tiers.backstage.ID, 750, 1}, {"7.50", tiers.backstage.ID, 750, 0}, {"15.00", tiers.backstage.ID, 1500, 0}} {
		if billed := f.renewAt(t, ref); billed != want.billed {
			t.Fatalf("renewal %d: PayPal billed %s, want %s", i+1, billed, want.billed)
		}
		if s := f.sub(t); s.PlanID != want.plan || s.Amount != want.amount || s.DiscountLeft != want.left || s.ListAmount != 1500 {
			t.Fatalf("renewal %d: the membership %+v", i+1, s)
		}
	}
	if row, _ := f.ts.store.PayPalTierChangeByID(context.Background(), a.Data.PayPal.ID); row.Status != store.PayPalChangeDone {
		t.Fatalf("the unpaid upgrade's move: %+v", row)
	}

	// A code for ever: $2 off every payment, back down and up again.
	f.ppOffer(t, store.OfferInput{Code: "TWOOFF", AmountOff: 200, Duration: store.OfferForever})
	down := f.ts.do(t, "POST", "/apps/demo/membership/change/"+tiers.circle.ItemID, strings.NewReader("x=1"), form(f.page))
	if code, loc := ppGo(t, f, local(f.agree(t, down.Header.Get("Location")))); code != 303 || loc != "/apps/demo/membership?notice=downgrade" {
		t.Fatalf("downgrade: %d %s", code, loc)
	}
	f.renewAt(t, ref)
	if s := f.sub(t); s.PlanID != tiers.circle.ID || s.Amount != 800 {
		t.Fatalf("after the downgrade: %+v", s)
	}
	up := f.ts.do(t, "POST", "/apps/demo/membership/change/"+tiers.backstage.ItemID, strings.NewReader("code=twooff"), form(f.page))
	if up.Status != 303 {
		t.Fatalf("upgrade with TWOOFF: %d %s", up.Status, up.Body)
	}
	f.agree(t, up.Header.Get("Location"))
	if _, prices := f.paypal.SubscriptionPlan(ref); len(prices) != 1 || prices[0] != "REGULAR:13.00" {
		t.Fatalf("PayPal bills with TWOOFF: %v", prices)
	}
}
