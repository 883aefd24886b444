package server

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/payments/paymentstest"
	"marquee/store"
)

// Issue 40 item 5: a free trial that needs a card (card_trial.go). The
// demo's Backstage Pass ($15 a month, 7-day trial) is made "card required";
// a fan joins it by card through Stripe Checkout (the fake's hosted page),
// nothing is charged, and the trial starts when the card is saved.

type cardTrialFixture struct {
	pay  *payFixture
	tier *tierFixture
	pass store.StudioPlan
}

func newCardTrialFixture(t *testing.T, db *bun.DB) *cardTrialFixture {
	t.Helper()
	f := newConnectFixture(t, db, false)
	tf := tierFixtureOn(t, f.ts)
	pass := tf.tiers[1]
	if pass.TrialDays != 7 || pass.MonthlyPrice == nil || *pass.MonthlyPrice != 1500 {
		t.Fatalf("the demo's second tier: %+v", pass)
	}
	if _, err := db.NewUpdate().Table("subscription_plans").Set("trial_card_required = ?", true).Where("id = ?", pass.ID).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &cardTrialFixture{pay: f, tier: tf, pass: pass}
}

// joinByCard is the API join by card (what the plan checkout's form does).
func (f *cardTrialFixture) joinByCard(t *testing.T, session string) response {
	t.Helper()
	return f.pay.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe",
		strings.NewReader(fmt.Sprintf(`{"itemId":%q,"paymentMethod":"stripe","cycle":"MONTHLY"}`, f.pass.ItemID)), jsonHeaders(withSession(session)))
}

// checkout sends the fan's plan checkout form for the card trial (no
// JavaScript) and answers the Checkout Session it was sent to.
func (f *cardTrialFixture) checkout(t *testing.T, session string) string {
	t.Helper()
	r := f.pay.ts.do(t, "POST", "/apps/demo/checkout/plan/"+f.pass.ItemID, strings.NewReader("cycle=MONTHLY&pay=card-trial"), form(withSession(session)))
	seeOther(t, r, f.pay.stripe.URL+"/checkout/pay/cs_")
	return strings.TrimPrefix(r.Header.Get("Location"), f.pay.stripe.URL+"/checkout/pay/")
}

// deliver sends every event of the fake since from to the webhook, in
// order, and answers how many there were.
func (f *cardTrialFixture) deliver(t *testing.T, from int) int {
	t.Helper()
	evs := f.pay.stripe.Events()[from:]
	for _, ev := range evs {
		if r := stripeHook(t, f.pay, ev.Payload, ev.Header); r.Status != 200 {
			t.Fatalf("%s: %d %s", ev.Type, r.Status, r.Body)
		}
	}
	return len(evs)
}

// subscriptionOf answers the Stripe subscription a checkout session made.
func (f *cardTrialFixture) subscriptionOf(t *testing.T, cs string) string {
	t.Helper()
	id, _ := f.pay.stripe.CheckoutSession(cs)["subscription"].(string)
	if id == "" {
		t.Fatalf("session %s made no subscription: %+v", cs, f.pay.stripe.CheckoutSession(cs))
	}
	return id
}

// startTrial takes a new fan through the card trial (webhooks delivered)
// with card pm and answers the fan's id and session and the Stripe
// subscription.
func (f *cardTrialFixture) startTrial(t *testing.T, name, pm string) (string, string, string) {
	t.Helper()
	uid, session := f.tier.fan(t, name, 0)
	cs := f.checkout(t, session)
	from := len(f.pay.stripe.Events())
	if msg := f.pay.stripe.PayCheckoutWith(cs, pm); msg != "" {
		t.Fatalf("checkout: %s", msg)
	}
	f.deliver(t, from)
	sub, _ := f.pay.ts.store.SubscriptionOf(context.Background(), f.tier.app.ID, uid)
	if sub == nil || sub.TrialUntil == nil {
		t.Fatalf("no trial after the checkout: %+v", sub)
	}
	return uid, session, f.subscriptionOf(t, cs)
}

func (f *cardTrialFixture) role(t *testing.T, uid string) string {
	t.Helper()
	m, err := f.pay.ts.store.MembershipOf(context.Background(), f.tier.app.ID, uid)
	if err != nil || m == nil {
		t.Fatalf("membership %v %v", m, err)
	}
	return m.Role
}

func (f *cardTrialFixture) trials(t *testing.T, uid, where string) int {
	t.Helper()
	q := f.pay.ts.store.DB().NewSelect().Table("trials").Where("app_id = ? AND user_id = ?", f.tier.app.ID, uid)
	if where != "" {
		q = q.Where(where)
	}
	n, err := q.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// The trial starts when the card is saved, and nothing is charged: the
// pages offer it in the words of the issue (with the charge's amount and
// day), the wallet is refused naming the card, the form sends the fan to
// Stripe Checkout (subscription mode, trial_period_days 7, on the app's
// connected account with the platform's fee), and the first report of the
// saved card starts the trial (customer.subscription.created for one fan,
// the fan's own return for another), once, however often and in whatever
// order the rest arrive: role SUBSCRIBER with the tier, a trial in the
// analytics, a role history line without a paid tier, a notice naming the
// card.
func TestCardRequiredTrialStarts(t *testing.T) {
	t.Parallel()
	f := newCardTrialFixture(t, demoDB(t))
	ts, st := f.pay.ts, f.pay.stripe
	ctx := context.Background()
	acct := f.pay.onboard(t)
	uid, session := f.tier.fan(t, "cardtrialist", 5000)
	start := time.Now()
	chargeDay := time.Now().UTC().AddDate(0, 0, 7).Format("Jan 2, 2006")
	offer := "Start your 7-day free trial — card required, you are charged $15.00 on " + chargeDay + " unless you cancel"

	// The pages say it, without JavaScript.
	page := ts.do(t, "GET", "/apps/demo/membership", nil, withSession(session))
	tierOffer := "Start your 7-day free trial — card required, you are charged $15.00 (or $150.00 yearly) on " + chargeDay + " unless you cancel"
	if page.Status != 200 || !strings.Contains(page.Body, tierOffer) {
		t.Fatalf("the membership page does not offer the card trial (%q): %d", tierOffer, page.Status)
	}
	checkout := ts.do(t, "GET", "/apps/demo/checkout/plan/"+f.pass.ItemID+"?cycle=MONTHLY", nil, withSession(session))
	for _, want := range []string{offer, "Start 7-day free trial with card", `name="pay" value="card-trial"`, "The wallet cannot start this trial: it needs a card"} {
		if !strings.Contains(checkout.Body, want) {
			t.Fatalf("the plan checkout lacks %q", want)
		}
	}
	// The wallet cannot start it: refused, naming the card, nothing paid.
	if r := f.tier.join(t, session, f.pass.ItemID, "MONTHLY", ""); r.Status != 409 || !strings.Contains(r.Body, "free trial starts with a card") {
		t.Fatalf("a wallet join of a card trial: %d %s", r.Status, r.Body)
	}
	r := ts.do(t, "POST", "/apps/demo/checkout/plan/"+f.pass.ItemID, strings.NewReader("cycle=MONTHLY"), form(withSession(session)))
	if r.Status != 409 || !strings.Contains(r.Body, "free trial starts with a card") {
		t.Fatalf("the wallet form of a card trial: %d", r.Status)
	}
	if bal, _ := ts.store.WalletBalance(ctx, f.tier.app.ID, uid); bal != 5000 {
		t.Fatalf("the wallet paid: %d", bal)
	}

	// The card: to Stripe Checkout. Nothing is a membership yet.
	cs := f.checkout(t, session)
	if again := f.checkout(t, session); again != cs || st.CheckoutSessionCount() != 1 {
		t.Fatalf("a second click made another session: %s %s", cs, again)
	}
	if sub, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, uid); sub != nil || f.role(t, uid) != store.RoleFollower || st.IntentCount() != 0 {
		t.Fatalf("a membership before the card: %+v %s", sub, f.role(t, uid))
	}
	// Leaving Stripe's page without a card: the return says it waits.
	seeOther(t, ts.do(t, "GET", "/apps/demo/membership/card-trial?session_id="+cs, nil, withSession(session)), "/apps/demo/membership?notice=trial-pending")
	// Another member's session is not this fan's to confirm.
	_, other := f.tier.fan(t, "nosy", 0)
	if r := ts.do(t, "GET", "/apps/demo/membership/card-trial?session_id="+cs, nil, withSession(other)); r.Status != 404 {
		t.Fatalf("another's session: %d", r.Status)
	}

	// The card is saved; customer.subscription.created arrives first.
	from := len(st.Events())
	if msg := st.PayCheckoutWith(cs, "pm_card_visa"); msg != "" {
		t.Fatal(msg)
	}
	evs := st.Events()[from:]
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if strings.Join(types, ",") != "customer.subscription.created,invoice.paid,checkout.session.completed" {
		t.Fatalf("events %v", types)
	}
	ref := f.subscriptionOf(t, cs)
	ss := st.Subscription(ref)
	trialEnd := time.Unix(int64(ss["trial_end"].(float64)), 0).UTC()
	if td, _ := ss["transfer_data"].(map[string]any); ss["status"] != "trialing" || td["destination"] != acct || ss["application_fee_percent"] != float64(5) ||
		ss["on_behalf_of"] != acct || trialEnd.Before(start.AddDate(0, 0, 7).Add(-time.Minute)) || trialEnd.After(time.Now().AddDate(0, 0, 7)) {
		t.Fatalf("the Stripe subscription: %+v", ss)
	}
	if r := stripeHook(t, f.pay, evs[0].Payload, evs[0].Header); r.Status != 200 || !strings.Contains(r.Body, "CARD_TRIAL") {
		t.Fatalf("subscription.created: %d %s", r.Status, r.Body)
	}
	sub, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, uid)
	if sub == nil || sub.TrialUntil == nil || !sub.TrialUntil.Equal(trialEnd) || !sub.CurrentPeriodEnd.Equal(trialEnd) || sub.Provider != "stripe" ||
		sub.ProviderRef != ref || sub.Status != store.SubActive || sub.PlanID != f.pass.ID || sub.Amount != 1500 || f.role(t, uid) != store.RoleSubscriber {
		t.Fatalf("the trial: %+v role %s", sub, f.role(t, uid))
	}
	// The rest, each three times and all at once, and the fan's return:
	// nothing more.
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		for _, ev := range evs {
			wg.Add(1)
			go func(ev paymentstest.SignedEvent) {
				defer wg.Done()
				if r := stripeHook(t, f.pay, ev.Payload, ev.Header); r.Status != 200 {
					t.Errorf("%s: %d %s", ev.Type, r.Status, r.Body)
				}
			}(ev)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			seeOther(t, ts.do(t, "GET", "/apps/demo/membership/card-trial?session_id="+cs, nil, withSession(session)), "/apps/demo/membership?notice=trial")
		}()
	}
	wg.Wait()
	after, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, uid)
	if !after.CurrentPeriodEnd.Equal(trialEnd) || after.TrialUntil == nil || after.Renewals != 0 || f.trials(t, uid, "") != 1 || len(st.SubscriptionIDs()) != 1 {
		t.Fatalf("after the repeats: %+v, %d trials, %v", after, f.trials(t, uid, ""), st.SubscriptionIDs())
	}
	if bal, _ := ts.store.WalletBalance(ctx, f.tier.app.ID, uid); bal != 5000 || st.IntentCount() != 0 {
		t.Fatalf("a trial charged something: wallet %d, intents %d", bal, st.IntentCount())
	}
	page = ts.do(t, "GET", "/apps/demo/membership?notice=trial", nil, withSession(session))
	for _, want := range []string{"Your free trial has started", "free trial until " + trialEnd.Format("Jan 2, 2006") + ", then your card is charged $15.00 unless you cancel"} {
		if !strings.Contains(page.Body, want) {
			t.Fatalf("the membership page in the trial lacks %q", want)
		}
	}
	// The other tiers say why they cannot be chosen now instead of offering
	// buttons that would answer it.
	trialRefusal := "You are on a free trial: change tiers once it has ended, or cancel and join the tier you want"
	if !strings.Contains(page.Body, trialRefusal) || strings.Contains(page.Body, "/membership/change/") ||
		strings.Contains(page.Body, `action="/apps/demo/checkout/plan/`) {
		t.Fatalf("the membership page in a card trial offers a change of tier, or does not say why it cannot")
	}
	if tiers := f.tier.tiersAPI(t, withSession(session)); tiers.TrialAvailable || tiers.Current == nil || tiers.Current.ID != f.pass.ID ||
		tiers.Status.RenewedBy != "stripe" || !tiers.CardOffered || tiers.Changeable || tiers.ChangeRefused != trialRefusal {
		t.Fatalf("the tiers call in a card trial: %+v", tiers)
	}
	var notes int
	if err := ts.store.DB().NewSelect().Table("notifications").ColumnExpr("count(*)").Where("app_id = ? AND user_id = ? AND content LIKE ?",
		f.tier.app.ID, uid, "%free trial%then your card is charged $15.00%").Scan(ctx, &notes); err != nil || notes != 1 {
		t.Fatalf("trial notices %d %v", notes, err)
	}
	hist, err := ts.store.RoleHistory(ctx, f.tier.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, h := range hist {
		if h.UserID == uid {
			lines = append(lines, h.Role+":"+h.TierID)
		}
	}
	if strings.Join(lines, ",") != "FOLLOWER:,SUBSCRIBER:" {
		t.Fatalf("role history %v", lines)
	}

	// Another fan whose return comes before any webhook.
	uid2, session2 := f.tier.fan(t, "cardreturner", 0)
	cs2 := f.checkout(t, session2)
	from = len(st.Events())
	if msg := st.PayCheckoutWith(cs2, "pm_card_visa"); msg != "" {
		t.Fatal(msg)
	}
	seeOther(t, ts.do(t, "GET", "/apps/demo/membership/card-trial?session_id="+cs2, nil, withSession(session2)), "/apps/demo/membership?notice=trial")
	if s2, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, uid2); s2 == nil || s2.TrialUntil == nil || s2.ProviderRef != f.subscriptionOf(t, cs2) {
		t.Fatalf("the return did not start the trial: %+v", s2)
	}
	f.deliver(t, from)
	if f.trials(t, uid2, "") != 1 || f.role(t, uid2) != store.RoleSubscriber {
		t.Fatalf("the second fan's trial")
	}
	a, err := ts.store.AppAnalytics(ctx, f.tier.app.ID, store.AnalyticsRange{From: start.AddDate(0, 0, -1), To: start.AddDate(0, 0, 1), Bucket: store.BucketDay})
	if err != nil {
		t.Fatal(err)
	}
	if a.TrialsAndOffers.TrialsStarted != 2 || a.Recurring.Paid != 0 {
		t.Fatalf("analytics: %+v %+v", a.TrialsAndOffers, a.Recurring)
	}
}

// At the trial's end Stripe charges the card: invoice.paid converts the
// trial (a paid member at the tier's price from the trial's end for a
// month, the trial marked converted, MRR and the role history's paid
// tier). The member was mailed three days before, in words naming the
// card, and the wallet's renewal job neither charged nor ended the trial.
func TestCardRequiredTrialConverts(t *testing.T) {
	t.Parallel()
	f := newCardTrialFixture(t, demoDB(t))
	ts, st := f.pay.ts, f.pay.stripe
	ctx := context.Background()
	uid, _, ref := f.startTrial(t, "cardconvert", "pm_card_visa")
	sub, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, uid)
	end := sub.CurrentPeriodEnd

	res, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: end.Add(-3*24*time.Hour + time.Minute)})
	if err != nil || res.Reminded != 1 || res.Renewed != 0 || res.Ended != 0 {
		t.Fatalf("three days before: %+v %v", res, err)
	}
	var reminders int
	if err := ts.store.DB().NewSelect().Table("notifications").ColumnExpr("count(*)").Where("app_id = ? AND user_id = ? AND content LIKE ?",
		f.tier.app.ID, uid, "%ends on%Then your card is charged $15.00%").Scan(ctx, &reminders); err != nil || reminders != 1 {
		t.Fatalf("reminders %d %v", reminders, err)
	}
	if res, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: end.Add(-10 * time.Minute)}); err != nil || res.Renewed != 0 || res.Ended != 0 {
		t.Fatalf("the wallet job at the trial's end: %+v %v", res, err)
	}

	from := len(st.Events())
	paid := st.EndTrial(ref)
	if paid.Type != "invoice.paid" || st.Subscription(ref)["status"] != "active" {
		t.Fatalf("the trial's end: %s %+v", paid.Type, st.Subscription(ref))
	}
	f.deliver(t, from)
	f.deliver(t, from) // a repeat changes nothing
	after, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, uid)
	want := time.Unix(end.Unix(), 0).UTC().AddDate(0, 1, 0)
	if after.TrialUntil != nil || after.Status != store.SubActive || !after.CurrentPeriodEnd.Equal(want) || after.Amount != 1500 ||
		after.Renewals != 1 || f.role(t, uid) != store.RoleSubscriber {
		t.Fatalf("converted: %+v (want end %s)", after, want)
	}
	if f.trials(t, uid, "converted_at IS NOT NULL AND ended_at IS NULL") != 1 {
		t.Fatalf("the trial is not marked converted")
	}
	a, err := ts.store.AppAnalytics(ctx, f.tier.app.ID, store.AnalyticsRange{From: time.Now().AddDate(0, 0, -1), To: time.Now().AddDate(0, 0, 1), Bucket: store.BucketDay})
	if err != nil {
		t.Fatal(err)
	}
	if a.TrialsAndOffers.TrialsStarted != 1 || a.TrialsAndOffers.TrialsConverted != 1 || a.Recurring.Paid != 1 || a.Recurring.MRR != 1500 {
		t.Fatalf("analytics: %+v %+v", a.TrialsAndOffers, a.Recurring)
	}
	hist, _ := ts.store.RoleHistory(ctx, f.tier.app.ID)
	last := ""
	for _, h := range hist {
		if h.UserID == uid {
			last = h.Role + ":" + h.TierID
		}
	}
	if last != store.RoleSubscriber+":"+f.pass.ID {
		t.Fatalf("the role history's last line %q", last)
	}
	// The next month renews as any card membership does.
	next := st.RenewSubscription(ref)
	if r := stripeHook(t, f.pay, next.Payload, next.Header); r.Status != 200 {
		t.Fatalf("renewal: %d %s", r.Status, r.Body)
	}
	if got, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, uid); !got.CurrentPeriodEnd.Equal(want.AddDate(0, 1, 0)) || got.Renewals != 2 {
		t.Fatalf("after the next renewal: %+v", got)
	}

	// With a 50%-off-the-first-month code: the first charge, at the
	// trial's end, is $7.50 (the coupon on Stripe's subscription), the
	// next $15.00; the code is redeemed once.
	creator := jsonHeaders(withSession(sessionFor(t, ts, "creator@demo.test")))
	if r := ts.do(t, "POST", "/api/studio/apps/demo/offers", strings.NewReader(`{"code":"HALFTRIAL","percentOff":50,"duration":"ONCE"}`), creator); r.Status != 201 {
		t.Fatalf("offer: %d %s", r.Status, r.Body)
	}
	codeID, codeSession := f.tier.fan(t, "cardcode", 0)
	r := ts.do(t, "POST", "/apps/demo/checkout/plan/"+f.pass.ItemID, strings.NewReader("cycle=MONTHLY&pay=card-trial&code=halftrial"), form(withSession(codeSession)))
	seeOther(t, r, st.URL+"/checkout/pay/cs_")
	cs := strings.TrimPrefix(r.Header.Get("Location"), st.URL+"/checkout/pay/")
	from = len(st.Events())
	if msg := st.PayCheckoutWith(cs, "pm_card_visa"); msg != "" {
		t.Fatal(msg)
	}
	f.deliver(t, from)
	codeRef := f.subscriptionOf(t, cs)
	if got, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, codeID); got == nil || got.TrialUntil == nil || got.Amount != 750 || got.ListAmount != 1500 ||
		st.SubscriptionCoupon(codeRef) == "" {
		t.Fatalf("a card trial with a code: %+v coupon %q", got, st.SubscriptionCoupon(codeRef))
	}
	from = len(st.Events())
	if ev := st.EndTrial(codeRef); !strings.Contains(string(ev.Payload), `"amount_paid":750`) {
		t.Fatalf("the first charge with the code: %s", ev.Payload)
	}
	f.deliver(t, from)
	second := st.RenewSubscription(codeRef)
	if !strings.Contains(string(second.Payload), `"amount_paid":1500`) {
		t.Fatalf("the second charge: %s", second.Payload)
	}
	if r := stripeHook(t, f.pay, second.Payload, second.Header); r.Status != 200 {
		t.Fatalf("second charge: %d %s", r.Status, r.Body)
	}
	if got, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, codeID); got.Amount != 1500 || got.TrialUntil != nil || got.Renewals != 2 {
		t.Fatalf("after the code ran out: %+v", got)
	}
	if n, _ := ts.store.DB().NewSelect().Table("offer_redemptions").Where("user_id = ?", codeID).Count(ctx); n != 1 {
		t.Fatalf("%d redemptions", n)
	}
}

// An unpaid end returns the member to follower at once (no grace): a card
// the first charge fails on (invoice.payment_failed; Stripe then cancels
// the past_due subscription, which changes nothing more), and a trial the
// member cancelled (the membership page's form; Stripe cancels it at the
// trial's end with nothing charged). A Checkout left without a card starts
// nothing and leaves the trial to be had.
func TestCardRequiredTrialUnpaidEnd(t *testing.T) {
	t.Parallel()
	f := newCardTrialFixture(t, demoDB(t))
	ts, st := f.pay.ts, f.pay.stripe
	ctx := context.Background()

	// The first charge fails.
	failID, _, failRef := f.startTrial(t, "cardfails", "pm_card_chargeCustomerFail")
	from := len(st.Events())
	if ev := st.EndTrial(failRef); ev.Type != "invoice.payment_failed" || st.Subscription(failRef)["status"] != "past_due" {
		t.Fatalf("the failed charge: %s %+v", ev.Type, st.Subscription(failRef))
	}
	f.deliver(t, from)
	sub, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, failID)
	if sub.Status != store.SubExpired || sub.GraceUntil != nil || f.role(t, failID) != store.RoleFollower ||
		f.trials(t, failID, "ended_at IS NOT NULL AND converted_at IS NULL") != 1 {
		t.Fatalf("after the failed first charge: %+v role %s", sub, f.role(t, failID))
	}
	from = len(st.Events())
	st.EndSubscription(failRef) // past_due -> canceled
	f.deliver(t, from)
	if again, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, failID); again.Status != store.SubExpired || f.role(t, failID) != store.RoleFollower {
		t.Fatalf("after the cancellation: %+v", again)
	}

	// The member cancels during the trial.
	quitID, quitSession, quitRef := f.startTrial(t, "cardquits", "pm_card_visa")
	seeOther(t, ts.do(t, "POST", "/apps/demo/membership/cancel", strings.NewReader("cancel=1"), form(withSession(quitSession))), "/apps/demo/membership?notice=canceled")
	if ss := st.Subscription(quitRef); ss["cancel_at_period_end"] != true {
		t.Fatalf("the cancel did not reach Stripe: %+v", ss)
	}
	if page := ts.do(t, "GET", "/apps/demo/membership", nil, withSession(quitSession)); !strings.Contains(page.Body, "free trial until") || !strings.Contains(page.Body, "then it ends") {
		t.Fatalf("the page of a cancelled trial")
	}
	from = len(st.Events())
	if ev := st.EndTrial(quitRef); ev.Type != "customer.subscription.deleted" {
		t.Fatalf("a cancelled trial's end: %s", ev.Type)
	}
	f.deliver(t, from)
	quit, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, quitID)
	if quit.Status != store.SubExpired || f.role(t, quitID) != store.RoleFollower || f.trials(t, quitID, "ended_at IS NOT NULL") != 1 {
		t.Fatalf("after a cancelled trial: %+v role %s", quit, f.role(t, quitID))
	}
	for _, ev := range st.Events() {
		if ev.Type == "invoice.paid" && strings.Contains(string(ev.Payload), quitRef) && !strings.Contains(string(ev.Payload), `"amount_paid":0`) {
			t.Fatalf("a cancelled trial was charged: %s", ev.Payload)
		}
	}

	// Checkout left without a card: nothing starts, the trial stays.
	leftID, leftSession := f.tier.fan(t, "cardleaves", 0)
	cs := f.checkout(t, leftSession)
	seeOther(t, ts.do(t, "GET", "/apps/demo/membership/card-trial?session_id="+cs, nil, withSession(leftSession)), "/apps/demo/membership?notice=trial-pending")
	if sub, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, leftID); sub != nil || f.trials(t, leftID, "") != 0 || !f.tier.tiersAPI(t, withSession(leftSession)).TrialAvailable {
		t.Fatalf("a checkout without a card started something: %+v", sub)
	}
	// A declined card is refused on Stripe's page; the session stays open.
	if msg := st.PayCheckoutWith(cs, "pm_card_chargeDeclined"); msg != "Your card was declined." {
		t.Fatalf("a declined card: %q", msg)
	}
	if f.pay.stripe.CheckoutSession(cs)["status"] != "open" {
		t.Fatalf("the session closed on a declined card")
	}

	a, err := ts.store.AppAnalytics(ctx, f.tier.app.ID, store.AnalyticsRange{From: time.Now().AddDate(0, 0, -1), To: time.Now().AddDate(0, 0, 1), Bucket: store.BucketDay})
	if err != nil {
		t.Fatal(err)
	}
	if a.TrialsAndOffers.TrialsStarted != 2 || a.TrialsAndOffers.TrialsConverted != 0 || a.TrialsAndOffers.TrialsEnded != 2 || a.Recurring.Paid != 0 {
		t.Fatalf("analytics: %+v %+v", a.TrialsAndOffers, a.Recurring)
	}
}

// Once per member per app, whatever the method: 50 card joins at once by
// one fan make one Checkout Session, and the saved card, reported by every
// webhook and return at once, one trial and one subscription; a fan who
// had the app's wallet trial joins the card trial's tier by card and pays
// at once (the pages say so); and a fan racing 25 wallet-trial joins of
// one tier against 25 card joins of the card trial's tier gets one trial,
// the Stripe subscription of a session completed after it being cancelled.
// On PostgreSQL and SQLite.
func TestCardRequiredTrialOncePerMember(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newCardTrialFixture(t, db)
		ts, st := f.pay.ts, f.pay.stripe
		ctx := context.Background()
		circle := f.tier.tiers[0]
		// The first tier gets a trial the wallet starts.
		if _, err := db.NewUpdate().Table("subscription_plans").Set("trial_days = 7").Where("id = ?", circle.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		// 50 card joins at once: one session.
		uid, session := f.tier.fan(t, "cardfifty", 0)
		refs := make([]string, 50)
		var wg sync.WaitGroup
		for i := range refs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := f.joinByCard(t, session)
				a := decodePay(t, r)
				pay, _ := a.Data["payment"].(map[string]any)
				if r.Status != 200 || a.Data["trial"] != true || a.Data["order"] != nil || pay == nil || a.Message != "Save your card on Stripe's page to start your free trial" {
					t.Errorf("join %d: %d %s", i, r.Status, r.Body)
					return
				}
				refs[i], _ = pay["ref"].(string)
				if u, _ := pay["approvalUrl"].(string); u != st.URL+"/checkout/pay/"+refs[i] {
					t.Errorf("join %d: approval url %q", i, u)
				}
			}(i)
		}
		wg.Wait()
		for _, ref := range refs {
			if ref != refs[0] || !strings.HasPrefix(ref, "cs_") {
				t.Fatalf("50 joins, sessions %v", refs)
			}
		}
		if n := st.CheckoutSessionCount(); n != 1 {
			t.Fatalf("%d checkout sessions", n)
		}
		from := len(st.Events())
		if msg := st.PayCheckoutWith(refs[0], "pm_card_visa"); msg != "" {
			t.Fatal(msg)
		}
		evs := st.Events()[from:]
		for i := 0; i < 10; i++ {
			for _, ev := range evs {
				wg.Add(1)
				go func(ev paymentstest.SignedEvent) {
					defer wg.Done()
					if r := stripeHook(t, f.pay, ev.Payload, ev.Header); r.Status != 200 {
						t.Errorf("%s: %d %s", ev.Type, r.Status, r.Body)
					}
				}(ev)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				seeOther(t, ts.do(t, "GET", "/apps/demo/membership/card-trial?session_id="+url.QueryEscape(refs[0]), nil, withSession(session)), "/apps/demo/membership?notice=trial")
			}()
		}
		wg.Wait()
		var rows int64
		if rows, _ = db.NewSelect().Table("subscriptions").Where("app_id = ? AND user_id = ?", f.tier.app.ID, uid).Count(ctx); rows != 1 {
			t.Fatalf("%d membership rows", rows)
		}
		if f.trials(t, uid, "") != 1 || len(st.SubscriptionIDs()) != 1 || st.Subscription(st.SubscriptionIDs()[0])["status"] != "trialing" {
			t.Fatalf("%d trials, subscriptions %v", f.trials(t, uid, ""), st.SubscriptionIDs())
		}
		// A member in the trial gets no second one (nor a second session).
		if r := f.joinByCard(t, session); r.Status != 409 || st.CheckoutSessionCount() != 1 {
			t.Fatalf("a join in the trial: %d %s", r.Status, r.Body)
		}

		// A fan who had the wallet trial: the card join pays at once.
		hadID, had := f.tier.fan(t, "hadwallettrial", 0)
		if r := f.tier.join(t, had, circle.ItemID, "MONTHLY", ""); r.Status != 200 || !strings.Contains(r.Body, `"trial":true`) {
			t.Fatalf("the wallet trial: %d %s", r.Status, r.Body)
		}
		if _, err := db.NewUpdate().Table("subscriptions").Set("status = ?", store.SubExpired).Where("app_id = ? AND user_id = ?", f.tier.app.ID, hadID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		checkout := ts.do(t, "GET", "/apps/demo/checkout/plan/"+f.pass.ItemID+"?cycle=MONTHLY", nil, withSession(had))
		if !strings.Contains(checkout.Body, "You have had this app&#x27;s free trial, so joining pays now") || strings.Contains(checkout.Body, "card-trial") {
			t.Fatalf("the plan checkout of a fan who had the trial")
		}
		if page := ts.do(t, "GET", "/apps/demo/membership", nil, withSession(had)); !strings.Contains(page.Body, "you have had this app&#x27;s trial: joining pays now") {
			t.Fatalf("the membership page of a fan who had the trial")
		}
		r := f.joinByCard(t, had)
		a := decodePay(t, r)
		pay, _ := a.Data["payment"].(map[string]any)
		if r.Status != 200 || a.Data["trial"] != false || a.Data["order"] == nil || pay == nil || !strings.HasPrefix(fmt.Sprint(pay["ref"]), "pi_") ||
			st.CheckoutSessionCount() != 1 {
			t.Fatalf("a card join after the wallet trial: %d %s", r.Status, r.Body)
		}
		if f.trials(t, hadID, "") != 1 {
			t.Fatalf("a second trial")
		}

		// Wallet-trial joins racing card joins: one trial.
		racerID, racer := f.tier.fan(t, "trialracer", 0)
		// The fan opened Stripe's page once already, before the race.
		if r := f.joinByCard(t, racer); r.Status != 200 {
			t.Fatalf("the racer's first card join: %d %s", r.Status, r.Body)
		}
		statuses := make([]int, 50)
		for i := range statuses {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if i%2 == 0 {
					statuses[i] = f.tier.join(t, racer, circle.ItemID, "MONTHLY", "").Status
				} else {
					statuses[i] = f.joinByCard(t, racer).Status
				}
			}(i)
		}
		wg.Wait()
		for i, s := range statuses {
			if s != 200 && s != 409 && s != 402 {
				t.Fatalf("race join %d: %d", i, s)
			}
		}
		// A session made before the wallet trial started, completed now:
		// its subscription is cancelled, and the trial stays the one.
		{
			cs := racerSession(t, st, racerID)
			from := len(st.Events())
			if msg := st.PayCheckoutWith(cs, "pm_card_visa"); msg != "" {
				t.Fatal(msg)
			}
			f.deliver(t, from)
			seeOther(t, ts.do(t, "GET", "/apps/demo/membership/card-trial?session_id="+cs, nil, withSession(racer)), "/apps/demo/membership?notice=trial-refused")
			if ss := st.Subscription(f.subscriptionOf(t, cs)); ss["status"] != "canceled" {
				t.Fatalf("the racing card trial's subscription: %+v", ss)
			}
		}
		if f.trials(t, racerID, "") != 1 {
			t.Fatalf("%d trials in the race", f.trials(t, racerID, ""))
		}
		if rows, _ = db.NewSelect().Table("subscriptions").Where("app_id = ? AND user_id = ?", f.tier.app.ID, racerID).Count(ctx); rows != 1 {
			t.Fatalf("%d membership rows in the race", rows)
		}
		if sub, _ := ts.store.SubscriptionOf(ctx, f.tier.app.ID, racerID); sub.TrialUntil == nil || sub.PlanID != circle.ID || sub.Provider != store.WalletMethod {
			t.Fatalf("the race's trial: %+v", sub)
		}
	})
}

// racerSession finds the checkout session made for the user.
func racerSession(t *testing.T, st *paymentstest.Stripe, userID string) string {
	t.Helper()
	for _, id := range st.CheckoutSessionIDs() {
		if meta, _ := st.CheckoutSession(id)["metadata"].(map[string]any); meta["userId"] == userID {
			return id
		}
	}
	t.Fatal("no checkout session for the user")
	return ""
}
