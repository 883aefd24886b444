package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/payments"
	"marquee/server/payments/paymentstest"
	"marquee/store"
	"marquee/store/storetest"
)

// ppSubFixture is a fan of the demo app joining its SUB-SC-01 tier ($8 a
// month) by PayPal.
type ppSubFixture struct {
	*payFixture
	db     *bun.DB
	uid    string
	as     map[string]string
	page   map[string]string
	itemID string
}

func newPPSubFixture(t *testing.T, db *bun.DB) *ppSubFixture {
	t.Helper()
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	u, err := f.ts.store.CreateUser(ctx, "ppfan@tiers.test", "ppfan", "not-a-password-hash")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ts.store.Follow(ctx, f.demo.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	token, err := f.ts.store.CreateSession(ctx, u.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	out := &ppSubFixture{payFixture: f, db: db, uid: u.ID, as: withSession(token, "Content-Type", "application/json"), page: withSession(token)}
	if err := db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND sku = 'SUB-SC-01'", f.demo.ID).Scan(ctx, &out.itemID); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *ppSubFixture) sub(t *testing.T) *store.Subscription {
	t.Helper()
	s, err := f.ts.store.SubscriptionOf(context.Background(), f.demo.ID, f.uid)
	if err != nil || s == nil {
		t.Fatalf("subscription: %v %v", s, err)
	}
	return s
}

func (f *ppSubFixture) role(t *testing.T) string {
	t.Helper()
	var r string
	if err := f.db.NewSelect().Table("memberships").Column("role").Where("app_id = ? AND user_id = ?", f.demo.ID, f.uid).Scan(context.Background(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// transfers counts the ledger's transfers whose reference starts with ref.
func (f *ppSubFixture) transfers(t *testing.T, ref string) int {
	t.Helper()
	n, err := f.db.NewSelect().Model((*store.WalletTransfer)(nil)).Where("reference LIKE ?", ref+"%").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// join subscribes by PayPal and answers the order and the subscription's
// id and approval link.
func (f *ppSubFixture) join(t *testing.T, extra map[string]any) (orderID, ref, approval string) {
	t.Helper()
	req := map[string]any{"itemId": f.itemID, "paymentMethod": "paypal", "cycle": "MONTHLY"}
	for k, v := range extra {
		req[k] = v
	}
	a := decodePay(t, f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", body(req), f.as))
	pay, _ := a.Data["payment"].(map[string]any)
	order, _ := a.Data["order"].(map[string]any)
	if pay == nil || order == nil {
		t.Fatalf("join by PayPal: %+v", a)
	}
	return order["id"].(string), pay["ref"].(string), pay["approvalUrl"].(string)
}

// agree presses Agree & Subscribe on the fake's page and answers where
// PayPal sends the member back.
func (f *ppSubFixture) agree(t *testing.T, approval string) string {
	t.Helper()
	u, err := url.Parse(approval)
	if err != nil {
		t.Fatal(err)
	}
	if page := f.paypalApprovalPage(t, approval); !strings.Contains(page, "Agree &amp; Subscribe") {
		t.Fatalf("approval page: %s", page)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.PostForm(f.paypal.URL+"/webapps/billing/subscriptions", url.Values{"ba_token": {u.Query().Get("ba_token")}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("agree: %d", res.StatusCode)
	}
	return res.Header.Get("Location")
}

// last answers the last event of typ the fake PayPal emitted.
func (f *ppSubFixture) last(t *testing.T, typ string) paymentstest.PayPalEvent {
	t.Helper()
	ev, ok := f.paypal.LastEvent(typ)
	if !ok {
		t.Fatalf("no %s event", typ)
	}
	return f.paypal.Resign(ev)
}

// Issue 40 item 3: a fan joins a tier by PayPal through PayPal's
// Subscriptions API (a product and a plan made once, a subscription the
// fan approves on PayPal's page); the return visit and PayPal's webhooks,
// fifty at once, start one membership and book one payment; PayPal's
// renewals extend it and are booked once however often PayPal repeats
// them; a failed payment makes it past due; cancel reaches PayPal and ends
// it at the period end; a past-due member cannot change tier.
func TestPayPalMembershipSubscription(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPPSubFixture(t, db)
		ctx := context.Background()

		orderID, ref, approval := f.join(t, nil)
		if !paypalSubRef(ref) || !strings.HasPrefix(approval, f.paypal.URL+"/webapps/billing/subscriptions?ba_token=") {
			t.Fatalf("join: ref %s approval %s", ref, approval)
		}
		if f.paypal.ProductCount() != 1 || f.paypal.PlanCount() != 1 || f.paypal.SubscriptionCount() != 1 {
			t.Fatalf("PayPal made %d products, %d plans, %d subscriptions", f.paypal.ProductCount(), f.paypal.PlanCount(), f.paypal.SubscriptionCount())
		}
		if _, prices := f.paypal.SubscriptionPlan(ref); len(prices) != 1 || prices[0] != "REGULAR:8.00" {
			t.Fatalf("plan prices: %v", prices)
		}
		// A second click answers the same subscription.
		if o2, ref2, _ := f.join(t, nil); o2 != orderID || ref2 != ref || f.paypal.SubscriptionCount() != 1 {
			t.Fatalf("second join: %s %s", o2, ref2)
		}
		// Not approved yet: nothing starts.
		if r := f.post(t, "/paypal/capture-order", f.as, map[string]any{"paypalOrderId": ref}); r.Status != 402 || !strings.Contains(r.Body, "not approved") {
			t.Fatalf("confirm before approval: %d %s", r.Status, r.Body)
		}

		back := f.agree(t, approval)
		if !strings.HasPrefix(back, "http://main.test/apps/demo/payment-success?") || !strings.Contains(back, "subscription_id="+ref) ||
			!strings.Contains(back, "orderId="+orderID) {
			t.Fatalf("PayPal sends the member back to %s", back)
		}
		// The return visit (reloaded) and PayPal's webhooks, 50 at once.
		activated, firstSale := f.last(t, "BILLING.SUBSCRIPTION.ACTIVATED"), f.last(t, "PAYMENT.SALE.COMPLETED")
		backPath := strings.TrimPrefix(back, "http://main.test")
		var wg sync.WaitGroup
		codes := make([]int, 50)
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				switch i % 3 {
				case 0:
					codes[i] = f.ts.do(t, "GET", backPath, nil, f.page).Status
				case 1:
					codes[i] = paypalHook(t, f.payFixture, activated).Status
				default:
					codes[i] = paypalHook(t, f.payFixture, firstSale).Status
				}
			}(i)
		}
		wg.Wait()
		for i, c := range codes {
			if c != 200 {
				t.Fatalf("request %d: %d", i, c)
			}
		}
		o := f.reload(t, orderID)
		s := f.sub(t)
		if o.Status != store.OrderPaid || o.PaymentRef != ref || s.Status != store.SubActive || s.Provider != payments.PayPal ||
			s.ProviderRef != ref || s.Amount != 800 || f.role(t) != store.RoleSubscriber || s.Renewals != 0 {
			t.Fatalf("after approval: order %s %s, membership %+v, role %s", o.Status, o.PaymentRef, s, f.role(t))
		}
		if n := f.transfers(t, "order:"+orderID+":earning"); n != 1 {
			t.Fatalf("the first payment booked %d times", n)
		}
		if n := f.transfers(t, "order:"+orderID+":processor-fee"); n != 1 {
			t.Fatalf("PayPal's fee on the first payment booked %d times", n)
		}
		if eventCount(t, db, "paypal", "subscription:"+ref) != 1 {
			t.Fatalf("the subscription's payment recorded more than once")
		}
		if page := f.ts.do(t, "GET", backPath, nil, f.page); !strings.Contains(page.Body, "Payment successful") && !strings.Contains(page.Body, "success") {
			t.Fatalf("payment-success page: %s", page.Body)
		}
		paidUntil := s.CurrentPeriodEnd

		// The renewal job leaves it to PayPal, like a card's.
		if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: paidUntil.Add(time.Hour)}); err != nil || r.Ended != 0 || r.Renewed != 0 {
			t.Fatalf("the renewal job touched a PayPal membership: %+v %v", r, err)
		}

		// PayPal bills the next month: PAYMENT.SALE.COMPLETED, delivered
		// ten times at once, extends once and books once.
		sale := f.paypal.RenewSubscription(ref)
		if sale == nil {
			t.Fatal("no renewal")
		}
		renewal := f.last(t, "PAYMENT.SALE.COMPLETED")
		codes = make([]int, 10)
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				codes[i] = paypalHook(t, f.payFixture, f.paypal.Resign(renewal)).Status
			}(i)
		}
		wg.Wait()
		for i, c := range codes {
			if c != 200 {
				t.Fatalf("renewal delivery %d: %d", i, c)
			}
		}
		s = f.sub(t)
		if s.Renewals != 1 || !s.CurrentPeriodEnd.After(paidUntil.AddDate(0, 0, 27)) || s.Status != store.SubActive {
			t.Fatalf("after the renewal: %+v (was until %s)", s, paidUntil)
		}
		// The earning and PayPal's fee (the demo's platform fee is booked
		// when the app has one: bookEarningTx, as for cards).
		if n, m := f.transfers(t, "renewal:"+ref+":"), f.transfers(t, "renewal:"+ref+":%:processor-fee"); n != 2 || m != 1 {
			var refs []string
			_ = db.NewSelect().Model((*store.WalletTransfer)(nil)).Column("reference").Where("reference LIKE ?", "renewal:%").Scan(ctx, &refs)
			t.Fatalf("renewal transfers: %d (%d processor fees): %v", n, m, refs)
		}
		if eventCount(t, db, "paypal", renewal.ID) != 1 {
			t.Fatalf("renewal recorded more than once")
		}
		renewedUntil := s.CurrentPeriodEnd
		// A forged renewal changes nothing.
		forged := paymentstest.NewPayPal("x", "y", "WH-OTHER").Event("PAYMENT.SALE.COMPLETED", map[string]any{"id": "SALE-X", "billing_agreement_id": ref,
			"amount": map[string]any{"total": "8.00", "currency": "USD"}}, time.Now())
		commExpect(t, "forged renewal", paypalHook(t, f.payFixture, forged), 400, msgInvalidSignature)

		// The studio counts the PayPal member at the tier's price.
		an, err := f.ts.store.AppAnalytics(ctx, f.demo.ID, store.AnalyticsRange{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), Bucket: "day"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tm := range an.Recurring.Tiers {
			if tm.TierID == s.PlanID && tm.Paid >= 1 && tm.MRR >= 800 {
				found = true
			}
		}
		if !found {
			t.Fatalf("recurring without the PayPal member: %+v", an.Recurring)
		}

		// A failed payment: past due with the grace after the period end.
		if !f.paypal.FailSubscriptionPayment(ref, 0) {
			t.Fatal("no failure")
		}
		if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.PAYMENT.FAILED")); r.Status != 200 {
			t.Fatalf("payment failed: %d %s", r.Status, r.Body)
		}
		s = f.sub(t)
		if s.Status != store.SubPastDue || s.GraceUntil == nil || !s.GraceUntil.Equal(renewedUntil.Add(store.DefaultGracePeriod)) || f.role(t) != store.RoleSubscriber {
			t.Fatalf("after the failure: %+v", s)
		}
		if p := f.ts.do(t, "GET", "/apps/demo/profile", nil, f.page); !strings.Contains(p.Body, "Update your payment method in PayPal") {
			t.Fatalf("profile of a past-due PayPal member says nothing of PayPal")
		}

		// Past due, moving tier is refused with the way that works (a
		// PayPal member in good standing moves by PayPal's revise:
		// paypal_tier_change_test.go); the membership page offers no
		// broken path.
		var other string
		if err := db.NewSelect().Table("subscription_plans").Column("store_item_id").Where("app_id = ? AND id <> ? AND state = 'ON_SALE'", f.demo.ID, s.PlanID).
			Limit(1).Scan(ctx, &other); err == nil {
			commExpect(t, "tier change", f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": other}), f.as),
				409, "settle it before changing tiers")
		}
		mp := f.ts.do(t, "GET", "/apps/demo/membership", nil, f.page)
		if !strings.Contains(mp.Body, "renews through PayPal") || strings.Contains(mp.Body, "/membership/change/") || strings.Contains(mp.Body, "/checkout/plan/") ||
			strings.Contains(mp.Body, "/membership/portal") {
			t.Fatalf("membership page of a PayPal member: %s", mp.Body[strings.Index(mp.Body, "<main"):])
		}
		commExpect(t, "join again", f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe",
			body(map[string]any{"itemId": f.itemID, "paymentMethod": "paypal"}), f.as), 409, "renews through PayPal")

		// Cancel reaches PayPal; the membership lasts to the period end.
		commExpect(t, "cancel", f.ts.do(t, "POST", "/api/subscriptions/apps/demo/cancel", body(map[string]any{}), f.as), 200, "end of the current period")
		if st := f.paypal.SubscriptionStatus(ref); st != "CANCELLED" || !f.sub(t).CancelAtPeriodEnd {
			t.Fatalf("cancel: PayPal says %s, membership %+v", st, f.sub(t))
		}
		// Again: nothing more to tell PayPal. Resuming cannot be done.
		commExpect(t, "cancel again", f.ts.do(t, "POST", "/api/subscriptions/apps/demo/cancel", body(map[string]any{}), f.as), 200, "end of the current period")
		commExpect(t, "resume", f.ts.do(t, "POST", "/api/subscriptions/apps/demo/cancel", body(map[string]any{"cancel": false}), f.as), 409, "cannot be resumed")
		// PayPal's CANCELLED event (ours) changes nothing more.
		if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.CANCELLED")); r.Status != 200 || !strings.Contains(r.Body, store.OutcomeAlready) {
			t.Fatalf("cancelled event: %d %s", r.Status, r.Body)
		}
		mp = f.ts.do(t, "GET", "/apps/demo/membership", nil, f.page)
		if !strings.Contains(mp.Body, "PayPal subscription is cancelled") || strings.Contains(mp.Body, "Keep membership") {
			t.Fatalf("membership page after cancel: %s", mp.Body[strings.Index(mp.Body, "<main"):])
		}
	})
}

func paypalSubRef(ref string) bool { return strings.HasPrefix(ref, "I-") }

// PayPal's own ends: cancelled in the member's PayPal account (access to
// the period end), suspended (the grace of a failed payment), expired
// (over now). Each applies once.
func TestPayPalSubscriptionEndsFromPayPal(t *testing.T) {
	t.Parallel()
	f := newPPSubFixture(t, demoDB(t))
	start := func(t *testing.T) string {
		t.Helper()
		_, ref, approval := f.join(t, nil)
		back := f.agree(t, approval)
		if r := f.ts.do(t, "GET", strings.TrimPrefix(back, "http://main.test"), nil, f.page); r.Status != 200 {
			t.Fatalf("return: %d", r.Status)
		}
		if s := f.sub(t); s.ProviderRef != ref || s.Status != store.SubActive {
			t.Fatalf("joined: %+v", s)
		}
		return ref
	}
	ref := start(t)
	if !f.paypal.EndSubscription(ref, "CANCELLED") {
		t.Fatal("not cancelled")
	}
	ev := f.last(t, "BILLING.SUBSCRIPTION.CANCELLED")
	for range 2 {
		if r := paypalHook(t, f.payFixture, ev); r.Status != 200 {
			t.Fatalf("cancelled: %d %s", r.Status, r.Body)
		}
	}
	s := f.sub(t)
	if !s.CancelAtPeriodEnd || s.Status != store.SubActive || f.role(t) != store.RoleSubscriber || eventCount(t, f.db, "paypal", ev.ID) != 1 {
		t.Fatalf("cancelled in PayPal: %+v", s)
	}
	// The period end ends it, as a member's own cancel does.
	if r, err := f.ts.store.RenewDueSubscriptions(context.Background(), store.RenewOptions{Now: s.CurrentPeriodEnd.Add(time.Minute)}); err != nil || r.Ended != 1 {
		t.Fatalf("period end: %+v %v", r, err)
	}
	if s := f.sub(t); s.Status != store.SubCanceled || f.role(t) != store.RoleFollower {
		t.Fatalf("after the period end: %+v", s)
	}

	// Joining again makes a new subscription on the same plan.
	ref2 := start(t)
	if ref2 == ref || f.paypal.PlanCount() != 1 || f.paypal.ProductCount() != 1 {
		t.Fatalf("second join: %s, %d plans", ref2, f.paypal.PlanCount())
	}
	f.paypal.FailSubscriptionPayment(ref2, 1) // PayPal suspends after one failure
	if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.SUSPENDED")); r.Status != 200 {
		t.Fatalf("suspended: %d %s", r.Status, r.Body)
	}
	if s := f.sub(t); s.Status != store.SubPastDue || s.GraceUntil == nil {
		t.Fatalf("suspended: %+v", s)
	}
	f.paypal.EndSubscription(ref2, "EXPIRED")
	if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.EXPIRED")); r.Status != 200 {
		t.Fatalf("expired: %d %s", r.Status, r.Body)
	}
	if s := f.sub(t); s.Status != store.SubExpired || f.role(t) != store.RoleFollower {
		t.Fatalf("expired: %+v", s)
	}
}

// An offer code works on PayPal as on the other methods: the first payment
// is discounted (a plan whose TRIAL cycle carries the price with the code),
// renewals pay the list price, and the studio counts what the member pays
// now.
func TestPayPalJoinWithOfferCode(t *testing.T) {
	t.Parallel()
	f := newPPSubFixture(t, demoDB(t))
	ctx := context.Background()
	if _, err := f.ts.store.CreateOffer(ctx, f.demo.ID, f.uid, store.OfferInput{Code: "HALFPP", PercentOff: 50, Duration: store.OfferOnce}, time.Now()); err != nil {
		t.Fatal(err)
	}
	orderID, ref, approval := f.join(t, map[string]any{"offerCode": "halfpp"})
	if o := f.reload(t, orderID); o.Total != 400 {
		t.Fatalf("order with the code: %d", o.Total)
	}
	if _, prices := f.paypal.SubscriptionPlan(ref); len(prices) != 2 || prices[0] != "TRIAL:4.00" || prices[1] != "REGULAR:8.00" {
		t.Fatalf("plan with the code: %v", prices)
	}
	f.agree(t, approval)
	if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.ACTIVATED")); r.Status != 200 {
		t.Fatalf("activated: %d %s", r.Status, r.Body)
	}
	s := f.sub(t)
	if s.Amount != 400 || s.OfferID == nil || s.ListAmount != 800 || s.ProviderRef != ref {
		t.Fatalf("membership with the code: %+v", s)
	}
	var redeemed int
	if err := f.db.NewSelect().Table("offer_redemptions").ColumnExpr("COUNT(*)").Where("user_id = ?", f.uid).Scan(ctx, &redeemed); err != nil || redeemed != 1 {
		t.Fatalf("redemptions: %d %v", redeemed, err)
	}
	// The renewal pays the list price, and the member now pays it.
	if f.paypal.RenewSubscription(ref) == nil {
		t.Fatal("no renewal")
	}
	if r := paypalHook(t, f.payFixture, f.last(t, "PAYMENT.SALE.COMPLETED")); r.Status != 200 {
		t.Fatalf("renewal: %d %s", r.Status, r.Body)
	}
	if s := f.sub(t); s.Amount != 800 || s.Renewals != 1 {
		t.Fatalf("after the renewal: %+v", s)
	}
	// A second member with the same code shares the plan.
	if n := f.paypal.PlanCount(); n != 1 {
		t.Fatalf("plans: %d", n)
	}
}
