package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
)

// tierFixtureOn is newTierFixture on a test server already made (one
// whose mail goes to a mailpit).
func tierFixtureOn(t *testing.T, ts *testServer) *tierFixture {
	t.Helper()
	ctx := context.Background()
	app, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	shop, err := ts.store.ShopOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	f := &tierFixture{ts: ts, app: app, shop: shop, creator: form(withSession(sessionFor(t, ts, "creator@demo.test")))}
	f.tiers = f.studioTiers(t)
	return f
}

// noTrials takes the demo tiers' free trials away, for tests of paid joins
// (a first join of a tier with a trial starts the trial).
func (f *tierFixture) noTrials(t *testing.T) {
	t.Helper()
	if _, err := f.ts.store.DB().NewUpdate().Table("subscription_plans").Set("trial_days = 0").Where("app_id = ?", f.app.ID).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (f *tierFixture) join(t *testing.T, session, itemID, cycle, code string) response {
	t.Helper()
	body := fmt.Sprintf(`{"itemId":%q,"cycle":%q,"offerCode":%q}`, itemID, cycle, code)
	return f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", strings.NewReader(body), jsonHeaders(withSession(session)))
}

// Free trials (issue 40 item 5): the demo's Backstage Pass has a 7-day
// trial. A fan with an empty wallet joins it: the trial starts, nothing is
// charged, role SUBSCRIBER with the tier. 50 joins at once start one trial.
// Three days before the end the renewal job mails the member (once, through
// mailpit); at the end an unpaid trial returns them to follower, a paid one
// is charged the tier's price and converts; a second trial is never had.
func TestFreeTrial(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	f := tierFixtureOn(t, ts)
	ctx := context.Background()
	pass := f.tiers[1]
	if pass.TrialDays != 7 {
		t.Fatalf("the demo's second tier has no 7-day trial: %+v", pass)
	}
	fanID, fanSession := f.fan(t, "trialist", 0)
	start := time.Now()

	// 50 joins at once: one trial.
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			statuses[i] = f.join(t, fanSession, pass.ItemID, "MONTHLY", "").Status
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, st := range statuses {
		switch st {
		case 200:
			ok++
		case 409, 402:
		default:
			t.Fatalf("a join answered %d", st)
		}
	}
	if ok != 1 {
		t.Fatalf("%d joins succeeded, want the one trial: %v", ok, statuses)
	}
	if n, _ := ts.store.DB().NewSelect().Table("trials").Where("app_id = ? AND user_id = ?", f.app.ID, fanID).Count(ctx); n != 1 {
		t.Fatalf("%d trials", n)
	}
	sub, _ := ts.store.SubscriptionOf(ctx, f.app.ID, fanID)
	if sub == nil || sub.TrialUntil == nil || sub.PlanID != pass.ID || sub.Status != store.SubActive ||
		sub.CurrentPeriodEnd.Before(start.AddDate(0, 0, 7).Add(-time.Minute)) || sub.CurrentPeriodEnd.After(time.Now().AddDate(0, 0, 7)) {
		t.Fatalf("the trial: %+v", sub)
	}
	if m, _ := ts.store.MembershipOf(ctx, f.app.ID, fanID); m.Role != store.RoleSubscriber {
		t.Fatalf("role in trial: %s", m.Role)
	}
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, fanID); bal != 0 {
		t.Fatalf("a trial charged: %d", bal)
	}
	if tiers := f.tiersAPI(t, withSession(fanSession)); tiers.TrialAvailable || tiers.Current == nil || tiers.Current.ID != pass.ID {
		t.Fatalf("the tiers call in a trial: %+v", tiers)
	}

	if page := ts.do(t, "GET", "/apps/demo/membership", nil, withSession(fanSession)); !strings.Contains(page.Body, "free trial until") {
		t.Fatalf("the membership page does not say the trial")
	}

	// Four days before the end: no mail yet. Three days before: one mail,
	// however many runs.
	end := sub.CurrentPeriodEnd
	if res, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: end.Add(-4 * 24 * time.Hour)}); err != nil || res.Reminded != 0 {
		t.Fatalf("four days before: %+v %v", res, err)
	}
	for i, want := range []int{1, 0} {
		res, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: end.Add(-3*24*time.Hour + time.Minute)})
		if err != nil || res.Reminded != want {
			t.Fatalf("run %d three days before: %+v %v", i, res, err)
		}
	}
	runMailJobs(t, ts)
	found := false
	for _, m := range mp.To(t, "trialist@tiers.test") {
		found = found || m.Subject == "Your free trial ends in 3 days"
	}
	if !found {
		mp.WaitFor(t, "trialist@tiers.test", 2)
		t.Fatalf("no trial-ending mail: %+v", mp.To(t, "trialist@tiers.test"))
	}

	// An unpaid end: a follower again, nothing charged, no grace.
	if _, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: end.Add(-30 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if sub, _ = ts.store.SubscriptionOf(ctx, f.app.ID, fanID); sub.Status != store.SubActive {
		t.Fatalf("ended before its end: %+v", sub)
	}
	if _, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: end.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	sub, _ = ts.store.SubscriptionOf(ctx, f.app.ID, fanID)
	m, _ := ts.store.MembershipOf(ctx, f.app.ID, fanID)
	if sub.Status != store.SubExpired || m.Role != store.RoleFollower {
		t.Fatalf("unpaid end: %s %s", sub.Status, m.Role)
	}
	var ended int64
	if ended, _ = ts.store.DB().NewSelect().Table("trials").Where("user_id = ? AND ended_at IS NOT NULL AND converted_at IS NULL", fanID).Count(ctx); ended != 1 {
		t.Fatalf("the trial is not marked ended")
	}
	// No second trial: a join now pays (and the empty wallet refuses).
	if r := f.join(t, fanSession, pass.ItemID, "MONTHLY", ""); r.Status != 402 {
		t.Fatalf("second trial: %d %s", r.Status, r.Body)
	}

	// A paid end: the price is taken and the trial converts.
	payerID, payerSession := f.fan(t, "trialpayer", 5000)
	if r := f.join(t, payerSession, pass.ItemID, "MONTHLY", ""); r.Status != 200 || !strings.Contains(r.Body, `"trial":true`) {
		t.Fatalf("paid trial join: %d %s", r.Status, r.Body)
	}
	sub, _ = ts.store.SubscriptionOf(ctx, f.app.ID, payerID)
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, payerID); bal != 5000 {
		t.Fatalf("charged at the start of a trial: %d", bal)
	}
	res, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: sub.CurrentPeriodEnd.Add(-10 * time.Minute)})
	if err != nil || res.Renewed != 1 {
		t.Fatalf("trial end: %+v %v", res, err)
	}
	price := *pass.MonthlyPrice
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, payerID); bal != 5000-price {
		t.Fatalf("after the trial the wallet holds %d, want %d", bal, 5000-price)
	}
	after, _ := ts.store.SubscriptionOf(ctx, f.app.ID, payerID)
	if after.TrialUntil != nil || after.Status != store.SubActive || !after.CurrentPeriodEnd.Equal(sub.CurrentPeriodEnd.AddDate(0, 1, 0)) || after.Amount != price {
		t.Fatalf("converted: %+v", after)
	}
	if n, _ := ts.store.DB().NewSelect().Table("trials").Where("user_id = ? AND converted_at IS NOT NULL", payerID).Count(ctx); n != 1 {
		t.Fatalf("the trial is not marked converted")
	}
	// A trial cancelled before its end: nothing charged, a follower at the end.
	quitID, quitSession := f.fan(t, "trialquit", 5000)
	if r := f.join(t, quitSession, pass.ItemID, "MONTHLY", ""); r.Status != 200 {
		t.Fatalf("trial join: %d %s", r.Status, r.Body)
	}
	if r := ts.do(t, "POST", "/api/subscriptions/apps/demo/cancel", strings.NewReader(`{"cancel":true}`), jsonHeaders(withSession(quitSession))); r.Status != 200 {
		t.Fatalf("cancel in trial: %d %s", r.Status, r.Body)
	}
	quit, _ := ts.store.SubscriptionOf(ctx, f.app.ID, quitID)
	if res, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: quit.CurrentPeriodEnd.Add(-3*24*time.Hour + time.Minute)}); err != nil || res.Reminded != 0 {
		t.Fatalf("a cancelled trial was reminded: %+v %v", res, err)
	}
	if _, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: quit.CurrentPeriodEnd.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	quit, _ = ts.store.SubscriptionOf(ctx, f.app.ID, quitID)
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, quitID); bal != 5000 || quit.Status != store.SubCanceled {
		t.Fatalf("a cancelled trial: balance %d, %s", bal, quit.Status)
	}
	if m, _ := ts.store.MembershipOf(ctx, f.app.ID, quitID); m.Role != store.RoleFollower {
		t.Fatalf("after a cancelled trial: %s", m.Role)
	}

	// A gift replaces a trial (nothing was paid): the trial ends.
	giftID, giftSession := f.fan(t, "trialgift", 0)
	if r := f.join(t, giftSession, pass.ItemID, "MONTHLY", ""); r.Status != 200 {
		t.Fatalf("trial join: %d %s", r.Status, r.Body)
	}
	creator := withSession(sessionFor(t, ts, "creator@demo.test"))
	if r := ts.do(t, "POST", "/api/studio/apps/demo/members/"+giftID+"/gift", strings.NewReader(`{"tierId":"`+f.tiers[2].ID+`","months":1}`), jsonHeaders(creator)); r.Status != 200 {
		t.Fatalf("gift over a trial: %d %s", r.Status, r.Body)
	}
	if g, _ := ts.store.SubscriptionOf(ctx, f.app.ID, giftID); g.TrialUntil != nil || g.Provider != store.CompProvider || g.PlanID != f.tiers[2].ID {
		t.Fatalf("after a gift over a trial: %+v", g)
	}

	// Paying during a trial converts it; the paid month follows the trial.
	earlyID, earlySession := f.fan(t, "trialearly", 5000)
	if r := f.join(t, earlySession, pass.ItemID, "MONTHLY", ""); r.Status != 200 || !strings.Contains(r.Body, `"trial":true`) {
		t.Fatalf("trial join: %d %s", r.Status, r.Body)
	}
	inTrial, _ := ts.store.SubscriptionOf(ctx, f.app.ID, earlyID)
	if r := f.join(t, earlySession, pass.ItemID, "MONTHLY", ""); r.Status != 200 || strings.Contains(r.Body, `"trial":true`) {
		t.Fatalf("paying in a trial: %d %s", r.Status, r.Body)
	}
	paid, _ := ts.store.SubscriptionOf(ctx, f.app.ID, earlyID)
	if paid.TrialUntil != nil || !paid.CurrentPeriodEnd.Equal(inTrial.CurrentPeriodEnd.AddDate(0, 1, 0)) {
		t.Fatalf("paid in a trial: %+v", paid)
	}
	if n, _ := ts.store.DB().NewSelect().Table("trials").Where("user_id = ? AND converted_at IS NOT NULL", earlyID).Count(ctx); n != 1 {
		t.Fatalf("a trial paid early is not converted")
	}

	// Analytics: five trials started, two converted, three ended unpaid.
	a, err := ts.store.AppAnalytics(ctx, f.app.ID, store.AnalyticsRange{From: start.AddDate(0, 0, -1), To: start.AddDate(0, 2, 0), Bucket: store.BucketMonth})
	if err != nil {
		t.Fatal(err)
	}
	if a.TrialsAndOffers.TrialsStarted != 5 || a.TrialsAndOffers.TrialsConverted != 2 || a.TrialsAndOffers.TrialsEnded != 3 {
		t.Fatalf("trial analytics: %+v", a.TrialsAndOffers)
	}
}

// A tier whose trial needs a card starts none on the wallet: the join pays.
func TestTrialNeedsCard(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	pass := f.tiers[1]
	// A fan who never had a trial is offered it at the plan checkout.
	_, session := f.fan(t, "cardless", 0)
	checkout := f.ts.do(t, "GET", "/apps/demo/checkout/plan/"+pass.ItemID+"?cycle=MONTHLY", nil, withSession(session))
	if !strings.Contains(checkout.Body, "Start 7-day free trial") || !strings.Contains(checkout.Body, "We mail you 3 days before the trial ends") {
		t.Fatalf("the plan checkout offers no trial")
	}
	// The tier editor's checkbox, without JavaScript.
	seeOther(t, f.ts.do(t, "POST", "/apps/demo/studio/plans/"+pass.ItemID, strings.NewReader(
		"name=Backstage+Pass&monthlyPrice=15&yearlyPrice=150&trialDays=7&trialCardRequired=1&state=ON_SALE"), f.creator), "/apps/demo/studio/plans?notice=saved")
	if got := f.tiersAPI(t, nil); !got.Tiers[1].TrialCardRequired || got.Tiers[1].TrialDays != 7 {
		t.Fatalf("the tier after the editor: %+v", got.Tiers[1])
	}
	if page := f.ts.do(t, "GET", "/apps/demo/studio/plans", nil, f.creator); !strings.Contains(page.Body, "7-day free trial (card required)") {
		t.Fatalf("the tiers editor does not show the card requirement")
	}
	if r := f.join(t, session, pass.ItemID, "MONTHLY", ""); r.Status != 402 {
		t.Fatalf("a card-required trial on the wallet: %d %s", r.Status, r.Body)
	}
}

// Offers (issue 40 item 5): the creator makes codes (studio form and JSON);
// a percentage for the first month, an amount for ever, an expired code,
// one for another tier, an unknown one; each member redeems a code once
// (50 joins at once redeem once) and a limit of 5 holds under 100 members
// redeeming at once. Renewals charge the discounted price while the code
// runs and the list price after. Analytics count the redemptions.
func TestOffers(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ts := f.ts
	ctx := context.Background()
	circle := f.tiers[0] // $8 a month, $80 a year, no trial
	creator := withSession(sessionFor(t, ts, "creator@demo.test"))
	create := func(body string) response {
		return ts.do(t, "POST", "/api/studio/apps/demo/offers", strings.NewReader(body), jsonHeaders(creator))
	}
	// The studio form, without JavaScript: 50% off the first month.
	seeOther(t, ts.do(t, "POST", "/apps/demo/studio/offers", strings.NewReader("code=half&kind=percent&value=50&duration=REPEATING&durationMonths=1"), f.creator),
		"/apps/demo/studio/offers?notice=offer-created")
	for _, body := range []string{
		`{"code":"FIVEOFF","amountOff":300,"duration":"FOREVER"}`,
		`{"code":"OLD","percentOff":10,"duration":"ONCE","expiresAt":"2020-01-01T00:00:00Z"}`,
		`{"code":"TOPONLY","percentOff":10,"duration":"ONCE","tierId":"` + f.tiers[2].ID + `"}`,
		`{"code":"FEW","percentOff":20,"duration":"ONCE","maxRedemptions":5}`,
		`{"code":"EVERYONE","percentOff":20,"duration":"ONCE"}`,
	} {
		if r := create(body); r.Status != 201 {
			t.Fatalf("create %s: %d %s", body, r.Status, r.Body)
		}
	}
	if r := create(`{"code":"HALF","percentOff":5,"duration":"ONCE"}`); r.Status != 400 || !strings.Contains(r.Body, "already has this code") {
		t.Fatalf("a second HALF: %d %s", r.Status, r.Body)
	}
	if r := create(`{"code":"BOTH","percentOff":5,"amountOff":100,"duration":"ONCE"}`); r.Status != 400 {
		t.Fatalf("percent and amount: %d %s", r.Status, r.Body)
	}

	// The JSON call prices the tiers with a code, for a visitor too.
	var quoted struct{ Data TiersData }
	commJSON(t, ts.do(t, "GET", "/api/memberships/apps/demo/tiers?code=half", nil, nil), &quoted)
	if q := quoted.Data.Quotes; len(q) == 0 || q[0].TierID != circle.ID || q[0].Cycle != "MONTHLY" || q[0].Price != 400 || q[0].ListPrice != 800 || quoted.Data.Code != "HALF" {
		t.Fatalf("quotes: %+v", quoted.Data)
	}
	commJSON(t, ts.do(t, "GET", "/api/memberships/apps/demo/tiers?code=OLD", nil, nil), &quoted)
	if len(quoted.Data.Quotes) != 0 || quoted.Data.CodeError != "This code has expired" {
		t.Fatalf("an expired code's quotes: %+v", quoted.Data)
	}

	// The membership page shows the price with the code, without JavaScript.
	fanID, fanSession := f.fan(t, "halfer", 5000)
	page := ts.do(t, "GET", "/apps/demo/membership?code=half", nil, withSession(fanSession))
	if page.Status != 200 || !strings.Contains(page.Body, "Have a code?") || !strings.Contains(page.Body, "$4.00") || !strings.Contains(page.Body, "50% off the first month") ||
		!strings.Contains(page.Body, `name="code" value="HALF"`) {
		t.Fatalf("membership page with a code: %d", page.Status)
	}
	if page := ts.do(t, "GET", "/apps/demo/membership?code=nope", nil, withSession(fanSession)); !strings.Contains(page.Body, "This code is not valid for this app") {
		t.Fatalf("an unknown code on the page")
	}
	checkout := ts.do(t, "GET", "/apps/demo/checkout/plan/"+circle.ItemID+"?cycle=MONTHLY&code=HALF", nil, withSession(fanSession))
	if !strings.Contains(checkout.Body, "Pay $4.00 with wallet") {
		t.Fatalf("plan checkout with a code")
	}
	// Paying with the form: $4 now, $8 at the renewal.
	seeOther(t, ts.do(t, "POST", "/apps/demo/checkout/plan/"+circle.ItemID, strings.NewReader("cycle=MONTHLY&code=HALF"), form(withSession(fanSession))),
		"/apps/demo/profile?joined=1")
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, fanID); bal != 4600 {
		t.Fatalf("paid with HALF: balance %d", bal)
	}
	sub, _ := ts.store.SubscriptionOf(ctx, f.app.ID, fanID)
	if sub.Amount != 400 || sub.ListAmount != 800 || sub.OfferID == nil {
		t.Fatalf("membership with HALF: %+v", sub)
	}
	if _, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: sub.CurrentPeriodEnd.Add(-10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, fanID); bal != 3800 {
		t.Fatalf("the renewal after the first month: balance %d", bal)
	}
	// Once per member: HALF again is refused.
	if r := f.join(t, fanSession, circle.ItemID, "MONTHLY", "half"); r.Status != 409 || !strings.Contains(r.Body, "already used this code") {
		t.Fatalf("HALF twice: %d %s", r.Status, r.Body)
	}

	// $3 off for ever, yearly: $77 now and at each renewal.
	foreverID, foreverSession := f.fan(t, "forever", 50000)
	if r := f.join(t, foreverSession, circle.ItemID, "YEARLY", "fiveoff"); r.Status != 200 {
		t.Fatalf("FIVEOFF: %d %s", r.Status, r.Body)
	}
	for i := 0; i < 2; i++ {
		sub, _ = ts.store.SubscriptionOf(ctx, f.app.ID, foreverID)
		if _, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: sub.CurrentPeriodEnd.Add(-10 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, foreverID); bal != 50000-3*7700 {
		t.Fatalf("three years with $3 off: balance %d", bal)
	}

	// Refusals, each said clearly.
	_, other := f.fan(t, "refused", 5000)
	for _, tc := range []struct {
		code, item string
		status     int
		says       string
	}{
		{"OLD", circle.ItemID, 409, "expired"},
		{"TOPONLY", circle.ItemID, 400, "not for this tier"},
		{"NOPE", circle.ItemID, 400, "not valid for this app"},
	} {
		if r := f.join(t, other, tc.item, "MONTHLY", tc.code); r.Status != tc.status || !strings.Contains(r.Body, tc.says) {
			t.Errorf("%s: %d %s", tc.code, r.Status, r.Body)
		}
	}

	// One member, 50 joins with EVERYONE at once: one redemption.
	onceID, onceSession := f.fan(t, "once", 50000)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.join(t, onceSession, circle.ItemID, "MONTHLY", "EVERYONE")
		}()
	}
	wg.Wait()
	if n, _ := ts.store.DB().NewSelect().Table("offer_redemptions").Where("user_id = ?", onceID).Count(ctx); n != 1 {
		t.Fatalf("%d redemptions by one member", n)
	}
	if bal, _ := ts.store.WalletBalance(ctx, f.app.ID, onceID); bal != 50000-640 {
		t.Fatalf("one member's 50 joins took %d", 50000-bal)
	}

	// FEW, limited to 5: 100 members at once, 5 redeem.
	sessions := make([]string, 100)
	for i := range sessions {
		_, sessions[i] = f.fan(t, fmt.Sprintf("few%d", i), 2000)
	}
	statuses := make([]int, len(sessions))
	for i := range sessions {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			statuses[i] = f.join(t, sessions[i], circle.ItemID, "MONTHLY", "FEW").Status
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, st := range statuses {
		if st == 200 {
			ok++
		} else if st != 409 {
			t.Fatalf("a FEW join answered %d", st)
		}
	}
	var few store.Offer
	if err := ts.store.DB().NewSelect().Model(&few).Where("code = 'FEW' AND app_id = ?", f.app.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	n, _ := ts.store.DB().NewSelect().Table("offer_redemptions").Where("offer_id = ?", few.ID).Count(ctx)
	if ok != 5 || few.Redemptions != 5 || n != 5 {
		t.Fatalf("FEW: %d joins, counter %d, %d redemptions; want 5", ok, few.Redemptions, n)
	}

	// The studio lists the codes with who redeemed them; deactivating stops a code.
	list := ts.do(t, "GET", "/apps/demo/studio/offers", nil, creator)
	if !strings.Contains(list.Body, "HALF") || !strings.Contains(list.Body, "5 of 5 redemptions") || !strings.Contains(list.Body, "@halfer") {
		t.Fatalf("offers screen")
	}
	var listed struct {
		Data []store.StudioOffer `json:"data"`
	}
	commJSON(t, ts.do(t, "GET", "/api/studio/apps/demo/offers", nil, creator), &listed)
	for _, o := range listed.Data {
		if o.Code == "FEW" && (o.Redemptions != 5 || len(o.RedeemedBy) != 5 || o.MaxRedemptions != 5) {
			t.Fatalf("FEW as the studio lists it: %+v", o)
		}
	}
	if len(listed.Data) != 6 {
		t.Fatalf("%d codes listed", len(listed.Data))
	}
	var everyone store.Offer
	_ = ts.store.DB().NewSelect().Model(&everyone).Where("code = 'EVERYONE' AND app_id = ?", f.app.ID).Scan(ctx)
	if r := ts.do(t, "DELETE", "/api/studio/apps/demo/offers/"+everyone.ID, nil, jsonHeaders(creator)); r.Status != 200 {
		t.Fatalf("deactivate: %d %s", r.Status, r.Body)
	}
	if r := f.join(t, other, circle.ItemID, "MONTHLY", "EVERYONE"); r.Status != 400 {
		t.Fatalf("a deactivated code: %d %s", r.Status, r.Body)
	}
	a, err := ts.store.AppAnalytics(ctx, f.app.ID, store.AnalyticsRange{From: time.Now().AddDate(0, 0, -1), To: time.Now().AddDate(0, 0, 1), Bucket: store.BucketDay})
	if err != nil {
		t.Fatal(err)
	}
	if a.TrialsAndOffers.Redemptions != 8 {
		t.Fatalf("analytics redemptions: %+v", a.TrialsAndOffers)
	}
}

// Offers by card (issue 40 item 5): the PaymentIntent is for the first
// payment with the code; the Stripe subscription that renews it is at the
// list price with a coupon covering the payments the code still discounts
// (a repeating coupon from the subscription's start), or none for a code
// used once. Stripe's renewal invoices then charge the discounted price
// while it runs.
func TestOfferOnCard(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	var planItemID string
	if err := db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = 'SUBSCRIPTION' AND sku = 'SUB-SC-01'", f.demo.ID).Limit(1).Scan(ctx, &planItemID); err != nil {
		t.Fatal(err)
	}
	creatorID := f.userID(t, "creator@demo.test")
	for _, in := range []store.OfferInput{
		{Code: "THREEHALF", PercentOff: 50, Duration: store.OfferRepeating, DurationMonths: 3},
		{Code: "ONCEOFF", AmountOff: 300, Duration: store.OfferOnce},
	} {
		if _, err := f.ts.store.CreateOffer(ctx, f.demo.ID, creatorID, in, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		email, code string
		first       int64
		coupon      map[string]any
		renewals    []int64
	}{
		{"follower@demo.test", "threehalf", 400, map[string]any{"percent_off": 50.0, "duration": "repeating", "duration_in_months": 2.0}, []int64{400, 400, 800}},
		{"member@demo.test", "ONCEOFF", 500, nil, []int64{800}},
	} {
		as := commUser(t, f.ts, tc.email)
		uid := f.userID(t, tc.email)
		if _, err := f.ts.store.Follow(ctx, f.demo.ID, uid); err != nil {
			t.Fatal(err)
		}
		a := decodePay(t, f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe",
			body(map[string]any{"itemId": planItemID, "paymentMethod": "stripe", "offerCode": tc.code}), as))
		pay, _ := a.Data["payment"].(map[string]any)
		if pay == nil || pay["ref"] == nil {
			t.Fatalf("%s: subscribe by card: %+v", tc.code, a)
		}
		pi := pay["ref"].(string)
		if in := f.stripe.Intent(pi); num(in["amount"]) != tc.first {
			t.Fatalf("%s: the intent is for %v, want %d", tc.code, in["amount"], tc.first)
		}
		if r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
			t.Fatalf("%s: confirm: %d %s", tc.code, r.Status, r.Body)
		}
		before := map[string]bool{}
		for _, id := range f.stripe.SubscriptionIDs() {
			before[id] = true
		}
		runCardRenewalJobs(t, f)
		var subID string
		for _, id := range f.stripe.SubscriptionIDs() {
			if !before[id] {
				subID = id
			}
		}
		if subID == "" {
			t.Fatalf("%s: no Stripe subscription", tc.code)
		}
		ss := f.stripe.Subscription(subID)
		item := ss["items"].(map[string]any)["data"].([]any)[0].(map[string]any)
		if price := item["price"].(map[string]any); num(price["unit_amount"]) != 800 {
			t.Fatalf("%s: renews at %v, want the list price", tc.code, price["unit_amount"])
		}
		coupon := f.stripe.SubscriptionCoupon(subID)
		switch {
		case tc.coupon == nil && coupon != "":
			t.Fatalf("%s: a coupon for a code used once: %s", tc.code, coupon)
		case tc.coupon != nil:
			c := f.stripe.Coupon(coupon)
			for k, v := range tc.coupon {
				if c[k] != v {
					t.Fatalf("%s: coupon %s = %v, want %v (%+v)", tc.code, k, c[k], v, c)
				}
			}
		}
		for i, want := range tc.renewals {
			ev := f.stripe.RenewSubscription(subID)
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
			if inv.Data.Object.AmountPaid != want {
				t.Fatalf("%s: renewal %d charged %d, want %d", tc.code, i+1, inv.Data.Object.AmountPaid, want)
			}
		}
		if n, _ := db.NewSelect().Table("offer_redemptions").Where("user_id = ? AND method = 'stripe'", uid).Count(ctx); n != 1 {
			t.Fatalf("%s: %d card redemptions", tc.code, n)
		}
	}
}

// num reads a JSON number the fake Stripe answers (int64 or float64).
func num(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return -1
}

// A code's limit and a member's one trial hold on both databases the
// product runs on (SQLite has no row locks: its writers queue).
func TestOfferLimitAndTrialBothDatabases(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		if _, err := f.ts.store.CreateOffer(ctx, f.app.ID, f.userIDOf(t, "creator@demo.test"),
			store.OfferInput{Code: "TWO", PercentOff: 10, Duration: store.OfferOnce, MaxRedemptions: 2}, time.Now()); err != nil {
			t.Fatal(err)
		}
		sessions := make([]string, 20)
		for i := range sessions {
			_, sessions[i] = f.fan(t, fmt.Sprintf("two%d", i), 2000)
		}
		statuses := make([]int, len(sessions))
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = f.join(t, sessions[i], f.tiers[0].ItemID, "MONTHLY", "TWO").Status
			}(i)
		}
		wg.Wait()
		ok := 0
		for _, st := range statuses {
			if st == 200 {
				ok++
			} else if st != 409 {
				t.Fatalf("a join answered %d: %v", st, statuses)
			}
		}
		if n, _ := db.NewSelect().Table("offer_redemptions").Count(ctx); ok != 2 || n != 2 {
			t.Fatalf("%d joins and %d redemptions of a code of 2", ok, n)
		}
		// One member, 20 trial joins at once: one trial.
		_, session := f.fan(t, "onetrial", 0)
		for i := range statuses {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = f.join(t, session, f.tiers[1].ItemID, "MONTHLY", "").Status
			}(i)
		}
		wg.Wait()
		ok = 0
		for _, st := range statuses {
			if st == 200 {
				ok++
			} else if st != 409 && st != 402 {
				t.Fatalf("a trial join answered %d: %v", st, statuses)
			}
		}
		if n, _ := db.NewSelect().Table("trials").Count(ctx); ok != 1 || n != 1 {
			t.Fatalf("%d trial joins succeeded, %d trials", ok, n)
		}
	})
}

func (f *tierFixture) userIDOf(t *testing.T, email string) string {
	t.Helper()
	u, err := f.ts.store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
