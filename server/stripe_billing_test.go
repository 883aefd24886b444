package server

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"marquee/server/jobs"
	"marquee/server/payments"
	"marquee/server/payments/paymentstest"
	"marquee/store"
)

// A plan bought by card renews through a Stripe subscription that starts
// when the paid period ends; Stripe's invoice.paid extends the membership,
// invoice.payment_failed starts the grace period, customer.subscription.deleted
// ends it. Forged deliveries are refused; a repeated one applies once.
func TestStripeMembershipRenewals(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	var planItemID string
	if err := db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = 'SUBSCRIPTION' AND sku = 'SUB-SC-01'", f.demo.ID).Limit(1).Scan(ctx, &planItemID); err != nil {
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
	// The Stripe subscription is made by the job the payment enqueued, not
	// during the request.
	if ids := f.stripe.SubscriptionIDs(); len(ids) != 0 {
		t.Fatalf("subscription made before the job ran: %v", ids)
	}
	if n := runCardRenewalJobs(t, f); n != 1 {
		t.Fatalf("start_card_renewal jobs: %d, want 1", n)
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
	// the period end must still find the membership alive, and the member
	// still inside (the grace of a late invoice).
	if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: paidUntil.Add(time.Hour)}); err != nil || r.Ended != 0 || r.Renewed != 0 {
		t.Fatalf("the wallet job touched a card membership: %+v %v", r, err)
	}
	if got := sub(); got.Status != store.SubActive {
		t.Fatalf("after the job: %+v", got)
	}
	if ok, _ := f.ts.store.HasValidSubscription(ctx, f.demo.ID, uid, paidUntil.Add(time.Hour)); !ok {
		t.Fatalf("a card member waiting for a late invoice lost access")
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
	// ...and so would buying it through the cart.
	cart, err := f.ts.store.AddToCart(ctx, f.shop, uid, planItemID, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	commExpect(t, "plan through the cart", f.post(t, "/orders/checkout", as, map[string]any{"cartId": cart.ID}), 409, "already renews by card")

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

// runCardRenewalJobs works the start_card_renewal jobs waiting in the
// outbox, as the queue's worker would, and answers how many ran.
func runCardRenewalJobs(t *testing.T, f *payFixture) int {
	t.Helper()
	ctx := context.Background()
	var rows []store.JobOutbox
	if err := f.ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", jobs.StartCardRenewalArgs{}.Kind()).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	w := &jobs.StartCardRenewalWorker{Renewals: f.ts.CardRenewals()}
	for _, r := range rows {
		var args jobs.StartCardRenewalArgs
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
			t.Fatal(err)
		}
		if err := w.Work(ctx, &river.Job[jobs.StartCardRenewalArgs]{Args: args}); err != nil {
			t.Fatalf("start_card_renewal %s: %v", args.OrderID, err)
		}
		if _, err := f.ts.store.DB().NewDelete().Model((*store.JobOutbox)(nil)).Where("id = ?", r.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return len(rows)
}

// planInCart puts the demo's plan in email's cart and checks out: the
// ordinary cart path, not the Subscribe button.
func planInCart(t *testing.T, f *payFixture, email string) (*store.Order, string) {
	t.Helper()
	ctx := context.Background()
	var planItemID string
	if err := f.ts.store.DB().NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = 'SUBSCRIPTION' AND sku = 'SUB-SC-01'", f.demo.ID).
		Limit(1).Scan(ctx, &planItemID); err != nil {
		t.Fatal(err)
	}
	uid := f.userID(t, email)
	cart, err := f.ts.store.AddToCart(ctx, f.shop, uid, planItemID, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := f.ts.store.CreateOrder(ctx, f.shop, uid, store.CheckoutInput{CartID: cart.ID})
	if err != nil {
		t.Fatal(err)
	}
	return o, planItemID
}

// A plan bought through the cart and paid by card renews like one bought
// with the Subscribe button: the card is saved, and the durable
// start_card_renewal job makes the Stripe subscription. Stripe failing the
// first attempt is retried by river, and however often it runs (a retry,
// two runs at once) there is one Stripe subscription, linked once.
func TestCartPlanByCardRenewsThroughAJob(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ctx := context.Background()
	f := newPayFixture(t, db, nil)
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	o, _ := planInCart(t, f, email)

	a := decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o.ID}))
	pi, _ := a.Data["paymentIntentId"].(string)
	if in := f.stripe.Intent(pi); in == nil || in["customer"] == nil || in["setup_future_usage"] != "off_session" {
		t.Fatalf("a cart plan paid by card does not save the card: %+v", in)
	}
	// Stripe is down when the job first runs.
	f.stripe.FailNext("/v1/subscriptions", 1)
	f.stripe.Succeed(pi)
	var succeeded paymentstest.SignedEvent
	for _, ev := range f.stripe.Events() {
		if ev.Type == "payment_intent.succeeded" {
			succeeded = ev
		}
	}
	if r := stripeHook(t, f, succeeded.Payload, succeeded.Header); r.Status != 200 {
		t.Fatalf("payment webhook: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderPaid {
		t.Fatalf("order %s", got.Status)
	}
	// The job was written with the payment, in its transaction.
	n, err := db.NewSelect().Model((*store.JobOutbox)(nil)).Where("kind = ?", "start_card_renewal").Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("outbox jobs %d %v", n, err)
	}
	sub, err := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
	if err != nil || sub == nil || sub.Provider != "stripe" || sub.ProviderRef != "" || sub.Status != store.SubActive {
		t.Fatalf("membership before the job: %+v %v", sub, err)
	}

	// The real queue: the first attempt fails, river retries it.
	startJobs(t, f.ts, db)
	deadline := time.Now().Add(45 * time.Second)
	for {
		got, _ := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
		if got != nil && got.ProviderRef != "" {
			sub = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Stripe subscription was never linked: %+v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tries := 0
	for _, r := range f.stripe.Requests() {
		if r == "POST /v1/subscriptions" {
			tries++
		}
	}
	ids := f.stripe.SubscriptionIDs()
	if tries < 2 || len(ids) != 1 || sub.ProviderRef != ids[0] {
		t.Fatalf("after the retry: %d tries, subscriptions %v, linked %q", tries, ids, sub.ProviderRef)
	}
	ss := f.stripe.Subscription(ids[0])
	if int64(ss["trial_end"].(float64)) != sub.CurrentPeriodEnd.Unix() || ss["default_payment_method"] != "pm_card_visa" {
		t.Fatalf("stripe subscription %+v", ss)
	}

	// Run again, twice at once (a retry racing a duplicate): still one. The
	// reruns carry the job's history (Stripe's stored 500 on the first
	// attempt), so they ask with the key that succeeded.
	w := &jobs.StartCardRenewalWorker{Renewals: f.ts.CardRenewals()}
	history := &rivertype.JobRow{Errors: []rivertype.AttemptError{{Attempt: 1, Error: "start card renewal: " + payments.ErrStoredFailure.Error()}}}
	if _, err := db.NewUpdate().Table("subscriptions").Set("provider_ref = ''").Where("id = ?", sub.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Work(ctx, &river.Job[jobs.StartCardRenewalArgs]{JobRow: history, Args: jobs.StartCardRenewalArgs{OrderID: o.ID}}); err != nil {
				t.Errorf("second run: %v", err)
			}
		}()
	}
	wg.Wait()
	got, _ := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
	if ids := f.stripe.SubscriptionIDs(); len(ids) != 1 || got.ProviderRef != ids[0] {
		t.Fatalf("a rerun made another subscription: %v linked %q", ids, got.ProviderRef)
	}
	// And Stripe's invoice.paid renews it, as for the Subscribe path.
	ev := f.stripe.RenewSubscription(ids[0])
	if r := stripeHook(t, f, ev.Payload, ev.Header); r.Status != 200 {
		t.Fatalf("invoice.paid: %d %s", r.Status, r.Body)
	}
	if after, _ := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid); after.Renewals != 1 || !after.CurrentPeriodEnd.After(got.CurrentPeriodEnd) {
		t.Fatalf("after invoice.paid: %+v", after)
	}
}

// A wallet order for a plan enqueues no card job.
func TestWalletPlanEnqueuesNoCardRenewal(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	o, _ := planInCart(t, f, email)
	if r := f.post(t, "/musepay/process", as, map[string]any{"orderId": o.ID}); r.Status != 200 {
		t.Fatalf("wallet: %d %s", r.Status, r.Body)
	}
	if n := runCardRenewalJobs(t, f); n != 0 || len(f.stripe.SubscriptionIDs()) != 0 {
		t.Fatalf("a wallet plan started card renewals: %d", n)
	}
}

// A card member whose period ended keeps access for the grace while
// Stripe's invoice.paid is late; a late invoice.paid extends the period;
// without one, the renewal job ends the SUBSCRIBER role once the grace is
// over, and the gate holds again (pages and API).
func TestCardMemberGraceForALateInvoice(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	o, _ := planInCart(t, f, email)
	a := decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o.ID}))
	pi, _ := a.Data["paymentIntentId"].(string)
	if r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	runCardRenewalJobs(t, f)
	ids := f.stripe.SubscriptionIDs()
	if len(ids) != 1 {
		t.Fatalf("stripe subscriptions %v", ids)
	}
	if err := f.ts.store.SetAppField(ctx, "demo", "features.subscriptionGating.settings.required", "true"); err != nil {
		t.Fatal(err)
	}
	var communityID string
	if err := db.NewSelect().Table("communities").Column("id").Where("app_id = ?", f.demo.ID).Limit(1).Scan(ctx, &communityID); err != nil {
		t.Fatal(err)
	}
	posts := "/api/community/" + communityID + "/posts"
	sub := func() *store.Subscription {
		t.Helper()
		s, err := f.ts.store.SubscriptionOf(ctx, f.demo.ID, uid)
		if err != nil || s == nil {
			t.Fatalf("subscription: %v %v", s, err)
		}
		return s
	}
	role := func() string {
		m, err := f.ts.store.MembershipOf(ctx, f.demo.ID, uid)
		if err != nil || m == nil {
			t.Fatalf("membership %v %v", m, err)
		}
		return m.Role
	}
	// The period ended an hour ago and Stripe has not reported yet.
	ended := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	if _, err := db.NewUpdate().Table("subscriptions").Set("current_period_end = ?", ended).Where("id = ?", sub().ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	f.ts.store.InvalidateApp(ctx, f.demo.ID)
	if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{}); err != nil || r.Ended != 0 {
		t.Fatalf("the job ended a membership in its grace: %+v %v", r, err)
	}
	f.ts.run(t, []scenario{
		{name: "in the grace: posts open", path: posts, as: email, status: 200},
		{name: "in the grace: me says valid", path: "/api/auth/me?appId=demo", as: email, status: 200,
			json: map[string]any{"data.subscription.status.hasValidSubscription": true, "data.userAppRole": "SUBSCRIBER"}},
	})

	// The late invoice.paid extends from where the period ended.
	late := f.stripe.Event("invoice.paid", map[string]any{"id": "in_late", "object": "invoice", "currency": "usd", "amount_paid": 800,
		"parent": map[string]any{"subscription_details": map[string]any{"subscription": ids[0]}},
		"lines": map[string]any{"data": []any{map[string]any{"id": "il_late", "period": map[string]any{"start": ended.Unix(),
			"end": ended.AddDate(0, 1, 0).Unix()}}}}})
	if r := stripeHook(t, f, late.Payload, late.Header); r.Status != 200 {
		t.Fatalf("late invoice.paid: %d %s", r.Status, r.Body)
	}
	if got := sub(); !got.CurrentPeriodEnd.Equal(ended.AddDate(0, 1, 0)) || got.Status != store.SubActive || got.Renewals != 1 {
		t.Fatalf("after the late invoice: %+v", got)
	}

	// Next period: no invoice at all. Inside the grace, still a member.
	ended = time.Now().UTC().Add(-store.DefaultGracePeriod + time.Hour).Truncate(time.Second)
	if _, err := db.NewUpdate().Table("subscriptions").Set("current_period_end = ?", ended).Where("id = ?", sub().ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{}); err != nil || r.Ended != 0 {
		t.Fatalf("ended inside the grace: %+v %v", r, err)
	}
	f.ts.run(t, []scenario{{name: "an hour of grace left: posts open", path: posts, as: email, status: 200}})
	// The grace is over: no access even before the job runs...
	later := ended.Add(store.DefaultGracePeriod + time.Minute)
	if ok, _ := f.ts.store.HasValidSubscription(ctx, f.demo.ID, uid, later); ok {
		t.Fatalf("access after the grace")
	}
	// ...and the job ends the role, with a notice.
	if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: later}); err != nil || r.Ended != 1 {
		t.Fatalf("the job did not end it: %+v %v", r, err)
	}
	if got := sub(); got.Status != store.SubExpired || got.EndedAt == nil || role() != store.RoleFollower {
		t.Fatalf("after the grace: %+v role %s", got, role())
	}
	var notices int
	if err := db.NewSelect().Table("notifications").ColumnExpr("count(*)").
		Where("app_id = ? AND user_id = ? AND content LIKE ?", f.demo.ID, uid, "%card renewal did not arrive%").Scan(ctx, &notices); err != nil || notices != 1 {
		t.Fatalf("notices %d %v", notices, err)
	}
	f.ts.store.InvalidateApp(ctx, f.demo.ID)
	f.ts.run(t, []scenario{{name: "after the grace: posts closed", path: posts, as: email, status: 403}})

	// Stripe's retries charge the card after all: the member paid for the
	// period, so the membership and the role come back for it.
	paidLate := f.stripe.Event("invoice.paid", map[string]any{"id": "in_very_late", "object": "invoice", "currency": "usd", "amount_paid": 800,
		"parent": map[string]any{"subscription_details": map[string]any{"subscription": ids[0]}},
		"lines": map[string]any{"data": []any{map[string]any{"id": "il_very_late", "period": map[string]any{"start": ended.Unix(),
			"end": ended.AddDate(0, 1, 0).Unix()}}}}})
	if r := stripeHook(t, f, paidLate.Payload, paidLate.Header); r.Status != 200 {
		t.Fatalf("very late invoice.paid: %d %s", r.Status, r.Body)
	}
	if got := sub(); got.Status != store.SubActive || got.EndedAt != nil || !got.CurrentPeriodEnd.Equal(ended.AddDate(0, 1, 0)) || role() != store.RoleSubscriber {
		t.Fatalf("after a charge that came after the grace: %+v role %s", got, role())
	}
	f.ts.store.InvalidateApp(ctx, f.demo.ID)
	f.ts.run(t, []scenario{{name: "paid after the grace: posts open again", path: posts, as: email, status: 200}})
}
