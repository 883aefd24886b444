package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"marquee/server/payments/paymentstest"
	"marquee/store"
	"marquee/store/storetest"
)

// A plan bought by card renews through a Stripe subscription that starts
// when the paid period ends; Stripe's invoice.paid extends the membership,
// invoice.payment_failed starts the grace period, customer.subscription.deleted
// ends it. Forged deliveries are refused; a repeated one applies once.
func TestStripeMembershipRenewals(t *testing.T) {
	db := storetest.Postgres(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	var planItemID string
	if err := db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = 'SUBSCRIPTION'", f.demo.ID).Limit(1).Scan(ctx, &planItemID); err != nil {
		t.Fatal(err)
	}
	sub := func() *store.Subscription {
		t.Helper()
		s, err := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
		if err != nil || s == nil {
			t.Fatalf("subscription: %v %v", s, err)
		}
		return s
	}
	role := func() string {
		t.Helper()
		var r string
		if err := db.NewSelect().Table("memberships").Column("role").Where("app_id = ? AND user_id = ?", f.demo.ID, uid).Scan(ctx, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	// Buy the plan by card: subscribe, then the Payment Element confirms.
	a := decodePay(t, f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe",
		body(map[string]any{"itemId": planItemID, "paymentMethod": "stripe"}), as))
	pay, _ := a.Data["payment"].(map[string]any)
	if pay == nil || pay["ref"] == nil {
		t.Fatalf("subscribe by card: %+v", a)
	}
	pi := pay["ref"].(string)
	if in := f.stripe.Intent(pi); in["customer"] == nil || in["setup_future_usage"] != "off_session" {
		t.Fatalf("the card is not saved for renewals: %+v", in)
	}
	if r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	// Stripe's own payment_intent.succeeded arrives too: still one subscription.
	var succeeded paymentstest.SignedEvent
	for _, ev := range f.stripe.Events() {
		if ev.Type == "payment_intent.succeeded" {
			succeeded = ev
		}
	}
	if r := stripeHook(t, f, succeeded.Payload, succeeded.Header); r.Status != 200 {
		t.Fatalf("payment webhook: %d %s", r.Status, r.Body)
	}
	ids := f.stripe.SubscriptionIDs()
	if len(ids) != 1 {
		t.Fatalf("stripe subscriptions: %v", ids)
	}
	s := sub()
	ss := f.stripe.Subscription(ids[0])
	meta, _ := ss["metadata"].(map[string]any)
	if s.Status != store.SubActive || s.Provider != "stripe" || s.ProviderRef != ids[0] || role() != store.RoleSubscriber ||
		int64(ss["trial_end"].(float64)) != s.CurrentPeriodEnd.Unix() || meta["appId"] != f.demo.ID || meta["userId"] != uid ||
		meta["planId"] != s.PlanID || ss["default_payment_method"] != "pm_card_visa" {
		t.Fatalf("after card purchase: %+v role %s stripe %+v", s, role(), ss)
	}
	paidUntil := s.CurrentPeriodEnd
	// The renewal job leaves it to Stripe: an invoice.paid arriving after
	// the period end must still find the membership alive.
	if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: paidUntil.Add(time.Hour)}); err != nil || r.Ended != 0 || r.Renewed != 0 {
		t.Fatalf("the wallet job touched a card membership: %+v %v", r, err)
	}
	if got := sub(); got.Status != store.SubActive {
		t.Fatalf("after the job: %+v", got)
	}

	// Forged and stale renewals change nothing.
	ev := f.stripe.RenewSubscription(ids[0])
	forger := paymentstest.NewStripe("whsec_attacker")
	commExpect(t, "forged", stripeHook(t, f, ev.Payload, forger.Sign(ev.Payload, time.Now())), 400, msgInvalidSignature)
	commExpect(t, "stale", stripeHook(t, f, ev.Payload, f.stripe.Sign(ev.Payload, time.Now().Add(-6*time.Minute))), 400, msgInvalidSignature)
	if got := sub(); !got.CurrentPeriodEnd.Equal(paidUntil) || eventCount(t, db, "stripe", ev.ID) != 0 {
		t.Fatalf("a refused webhook changed the membership: %+v", got)
	}

	// invoice.paid, ten times at once: the period moves on once.
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			codes[i] = stripeHook(t, f, ev.Payload, ev.Header).Status
		}(i)
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("delivery %d: %d", i, c)
		}
	}
	// Stripe counts in whole seconds.
	want := time.Unix(paidUntil.Unix(), 0).UTC().AddDate(0, 1, 0)
	if got := sub(); !got.CurrentPeriodEnd.Equal(want) || got.Renewals != 1 || got.Status != store.SubActive || eventCount(t, db, "stripe", ev.ID) != 1 {
		t.Fatalf("after invoice.paid: %+v (want end %s)", got, want)
	}

	// Buying again while Stripe renews it would orphan the Stripe subscription.
	commExpect(t, "second purchase", f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe",
		body(map[string]any{"itemId": planItemID, "paymentMethod": "musepay"}), as), 409, "already renews by card")

	// Cancel at period end reaches Stripe; keeping it reaches Stripe too.
	commExpect(t, "cancel", f.ts.do(t, "POST", "/api/subscriptions/apps/demo/cancel", body(map[string]any{}), as), 200, "end of the current period")
	if ss := f.stripe.Subscription(ids[0]); ss["cancel_at_period_end"] != true || !sub().CancelAtPeriodEnd {
		t.Fatalf("cancel did not reach Stripe: %+v", ss)
	}
	commExpect(t, "keep", f.ts.do(t, "POST", "/api/subscriptions/apps/demo/cancel", body(map[string]any{"cancel": false}), as), 200, "will renew")
	if ss := f.stripe.Subscription(ids[0]); ss["cancel_at_period_end"] != false || sub().CancelAtPeriodEnd {
		t.Fatalf("resume did not reach Stripe: %+v", ss)
	}

	// invoice.payment_failed: PAST_DUE with the default grace, still valid.
	fail := f.stripe.FailRenewal(ids[0])
	if r := stripeHook(t, f, fail.Payload, fail.Header); r.Status != 200 {
		t.Fatalf("payment_failed: %d %s", r.Status, r.Body)
	}
	got := sub()
	if got.Status != store.SubPastDue || got.GraceUntil == nil || !got.GraceUntil.Equal(want.Add(store.DefaultGracePeriod)) {
		t.Fatalf("after payment_failed: %+v", got)
	}
	if ok, _ := f.ts.store.HasValidSubscription(ctx, f.demo.ID, uid, want.Add(time.Hour)); !ok || role() != store.RoleSubscriber {
		t.Fatalf("grace period gives no access")
	}

	// customer.subscription.deleted ends it; a repeat changes nothing.
	end := f.stripe.EndSubscription(ids[0])
	for i := 0; i < 2; i++ {
		if r := stripeHook(t, f, end.Payload, end.Header); r.Status != 200 {
			t.Fatalf("subscription.deleted: %d %s", r.Status, r.Body)
		}
	}
	if got := sub(); got.Status != store.SubExpired || got.EndedAt == nil || role() != store.RoleFollower {
		t.Fatalf("after subscription.deleted: %+v role %s", got, role())
	}
	if eventCount(t, db, "stripe", end.ID) != 1 {
		t.Fatalf("deleted event recorded more than once")
	}
	// Another integration's subscription on the same account: recorded, ignored.
	other := f.stripe.Event("invoice.paid", map[string]any{"id": "in_other", "object": "invoice", "currency": "usd",
		"parent": map[string]any{"subscription_details": map[string]any{"subscription": "sub_not_ours"}},
		"lines":  map[string]any{"data": []any{map[string]any{"id": "il_1", "period": map[string]any{"start": 1, "end": time.Now().Unix()}}}}})
	commExpect(t, "unknown subscription", stripeHook(t, f, other.Payload, other.Header), 200, store.OutcomeIgnored)
}
