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

// Issue 40 item 4 for PayPal memberships: a change of tier is PayPal's
// revise (approved by the member on PayPal); an upgrade's prorated
// difference is a one-off PayPal order the member approves next, whose
// capture starts the new tier; a downgrade waits for the period end, when
// PayPal bills the lower plan.

type ppTiers struct{ circle, backstage store.StudioPlan }

func (f *ppSubFixture) tiers(t *testing.T) ppTiers {
	t.Helper()
	plans, err := f.ts.store.StudioPlans(context.Background(), f.demo.ID)
	if err != nil || len(plans) != 3 {
		t.Fatalf("tiers: %v %v", plans, err)
	}
	return ppTiers{plans[0], plans[1]}
}

// roleLines counts the role history's lines naming tierID.
func (f *ppSubFixture) roleLines(t *testing.T, tierID string) int {
	t.Helper()
	n, err := f.db.NewSelect().Model((*store.RoleChange)(nil)).Where("app_id = ? AND user_id = ? AND tier_id = ?", f.demo.ID, f.uid, tierID).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// ppGo answers a request's redirect target without following it.
func ppGo(t *testing.T, f *ppSubFixture, path string) (int, string) {
	t.Helper()
	r := f.ts.do(t, "GET", path, nil, f.page)
	return r.Status, r.Header.Get("Location")
}

// local turns a URL of the app into the path the test server answers.
func local(u string) string { return strings.TrimPrefix(u, "http://main.test") }

// upgradeByPayPal takes the fixture's member from Circle to Backstage by
// PayPal (revise, approve, pay the difference) and answers the change.
func (f *ppSubFixture) upgradeByPayPal(t *testing.T, tiers ppTiers) *store.PayPalTierChange {
	t.Helper()
	r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID}), f.as)
	var a struct {
		Data TierChangeData `json:"data"`
	}
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &a) != nil || a.Data.PayPal == nil {
		t.Fatalf("upgrade: %d %s", r.Status, r.Body)
	}
	back := f.agree(t, a.Data.PayPal.Href)
	_, pay := ppGo(t, f, local(back))
	u, _ := url.Parse(pay)
	f.approve(t, u.Query().Get("token"))
	if code, loc := ppGo(t, f, local(back)); code != 303 || loc != "/apps/demo/membership?notice=upgrade" {
		t.Fatalf("after paying the difference: %d %s", code, loc)
	}
	row, err := f.ts.store.PayPalTierChangeByID(context.Background(), a.Data.PayPal.ID)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// Upgrade: fifty change requests at once (the API and the page's form)
// make one revision at PayPal and answer its approval link; the member
// approves; fifty return visits and webhooks at once make one PayPal order
// for the prorated difference; approved, fifty returns and PayPal's capture
// event capture it once, start the new tier at once, book the difference
// once and write one line of role history; PayPal bills the new plan from
// the next cycle.
func TestPayPalTierUpgrade(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPPSubFixture(t, db)
		ctx := context.Background()
		_, ref := f.joinedByPayPal(t)
		tiers := f.tiers(t)
		joinedUntil := f.sub(t).CurrentPeriodEnd

		// The membership page offers the move; its confirmation says how
		// PayPal takes it.
		mp := f.ts.do(t, "GET", "/apps/demo/membership", nil, f.page)
		if !strings.Contains(mp.Body, `href="/apps/demo/membership/change/`+tiers.backstage.ItemID+`"`) || !strings.Contains(mp.Body, "renews through PayPal") {
			t.Fatalf("membership page of a PayPal member: %.1500s", mp.Body[strings.Index(mp.Body, "<main"):])
		}
		confirm := f.ts.do(t, "GET", "/apps/demo/membership/change/"+tiers.backstage.ItemID, nil, f.page)
		if confirm.Status != 200 || !strings.Contains(confirm.Body, "Continue to PayPal · pay $") || !strings.Contains(confirm.Body, "one-off PayPal payment") {
			t.Fatalf("confirmation: %d %.2000s", confirm.Status, confirm.Body)
		}

		var wg sync.WaitGroup
		var mu sync.Mutex
		approvals := map[string]int{}
		changeIDs := map[string]bool{}
		for i := range 50 {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				var to string
				if i%5 == 0 {
					r := f.ts.do(t, "POST", "/apps/demo/membership/change/"+tiers.backstage.ItemID, strings.NewReader("x=1"), form(f.page))
					if r.Status == 303 {
						to = r.Header.Get("Location")
					}
				} else {
					r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID}), f.as)
					var a struct {
						Data    TierChangeData `json:"data"`
						Message string         `json:"message"`
					}
					if r.Status == 200 && json.Unmarshal([]byte(r.Body), &a) == nil && a.Data.PayPal != nil && a.Message == "Approve the change on PayPal" {
						to = a.Data.PayPal.Href
						mu.Lock()
						changeIDs[a.Data.PayPal.ID] = true
						mu.Unlock()
					}
				}
				mu.Lock()
				approvals[to]++
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		var approval string
		for k := range approvals {
			approval = k
		}
		if len(approvals) != 1 || len(changeIDs) != 1 || !strings.HasPrefix(approval, f.paypal.URL+"/webapps/billing/subscriptions?ba_token=") {
			t.Fatalf("change requests answered %v", approvals)
		}
		if n := f.paypal.RevisionCount(ref); n != 1 {
			t.Fatalf("PayPal revised %d times", n)
		}
		if s := f.sub(t); s.PlanID != tiers.circle.ID || s.Amount != 800 {
			t.Fatalf("the tier changed before PayPal's approval: %+v", s)
		}
		var changeID string
		for k := range changeIDs {
			changeID = k
		}
		row, err := f.ts.store.PayPalTierChangeByID(ctx, changeID)
		if err != nil || row.Charge < 600 || row.Charge > 700 || row.Status != store.PayPalChangePending {
			t.Fatalf("the change: %+v %v", row, err)
		}

		// The member approves on PayPal and comes back; PayPal's UPDATED
		// event races the return visits.
		back := f.agree(t, approval)
		if !strings.HasPrefix(back, "http://main.test/apps/demo/membership/paypal/"+changeID) {
			t.Fatalf("PayPal sends the member back to %s", back)
		}
		if _, prices := f.paypal.SubscriptionPlan(ref); len(prices) != 1 || prices[0] != "REGULAR:15.00" {
			t.Fatalf("PayPal bills after the revision: %v", prices)
		}
		orders := f.paypal.OrderCount()
		payAt := returnsRaceUpdated(t, f, back)
		if len(payAt) != 2 || payAt["hook"] != 13 {
			t.Fatalf("return visits went to %v", payAt)
		}
		pay := otherThanHook(payAt)
		if !strings.HasPrefix(pay, f.paypal.URL+"/checkoutnow?token=") || f.paypal.OrderCount() != orders+1 {
			t.Fatalf("the difference's payment: %s, %d PayPal orders made", pay, f.paypal.OrderCount()-orders)
		}
		if s := f.sub(t); s.PlanID != tiers.circle.ID {
			t.Fatalf("the tier changed before the difference was paid: %+v", s)
		}
		// The page says what waits.
		if mp := f.ts.do(t, "GET", "/apps/demo/membership", nil, f.page); !strings.Contains(mp.Body, "membership-paypal-change") ||
			!strings.Contains(mp.Body, `href="/apps/demo/membership/paypal/`+changeID+`"`) {
			t.Fatalf("membership page with the difference to pay: %.1500s", mp.Body[strings.Index(mp.Body, "<main"):])
		}

		// Paid: fifty returns at once capture once.
		token, _ := url.Parse(pay)
		paypalOrder := token.Query().Get("token")
		f.approve(t, paypalOrder)
		locs := map[string]int{}
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, loc := ppGo(t, f, local(back))
				mu.Lock()
				locs[loc]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(locs) != 1 || locs["/apps/demo/membership?notice=upgrade"] != 50 {
			t.Fatalf("returns after paying: %v", locs)
		}
		captures, captured, _ := f.paypal.Captured(paypalOrder)
		if captures != 1 || captured != row.Charge {
			t.Fatalf("PayPal captured %d times, %d (charge %d)", captures, captured, row.Charge)
		}
		// PayPal's capture event, twice, changes nothing more.
		for range 2 {
			if r := paypalHook(t, f.payFixture, f.last(t, "PAYMENT.CAPTURE.COMPLETED")); r.Status != 200 {
				t.Fatalf("capture event: %d %s", r.Status, r.Body)
			}
		}
		s := f.sub(t)
		if s.PlanID != tiers.backstage.ID || s.Amount != 1500 || s.NextPlanID != nil || !s.CurrentPeriodEnd.Equal(joinedUntil) || f.role(t) != store.RoleSubscriber {
			t.Fatalf("after the upgrade: %+v", s)
		}
		var earned int64
		if err := db.NewSelect().Table("wallet_transfers").ColumnExpr("COALESCE(SUM(amount), 0)").Where("reference = ?", "paypal-upgrade:"+changeID+":earning").
			Scan(ctx, &earned); err != nil || earned != row.Charge {
			t.Fatalf("the difference booked: %d (charge %d) %v", earned, row.Charge, err)
		}
		if n := f.transfers(t, "paypal-upgrade:"+changeID+":processor-fee"); n != 1 {
			t.Fatalf("PayPal's fee on the difference booked %d times", n)
		}
		if n := f.roleLines(t, tiers.backstage.ID); n != 1 {
			t.Fatalf("role history lines for the new tier: %d", n)
		}
		an, err := f.ts.store.AppAnalytics(ctx, f.demo.ID, store.AnalyticsRange{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), Bucket: "day"})
		if err != nil {
			t.Fatal(err)
		}
		if !tierHas(an.Recurring, tiers.backstage.ID, 1500) || tierHas(an.Recurring, tiers.circle.ID, 800) {
			t.Fatalf("analytics after the upgrade: %+v", an.Recurring.Tiers)
		}
		if mp := f.ts.do(t, "GET", "/apps/demo/membership?notice=upgrade", nil, f.page); !strings.Contains(mp.Body, "Your new tier is active.") ||
			strings.Contains(mp.Body, "membership-paypal-change") {
			t.Fatalf("membership page after the upgrade: %.1500s", mp.Body[strings.Index(mp.Body, "<main"):])
		}
		// The same request again moves nothing and revises nothing.
		if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID}), f.as); r.Status != 200 ||
			f.paypal.RevisionCount(ref) != 1 {
			t.Fatalf("repeat: %d %s, %d revisions", r.Status, r.Body, f.paypal.RevisionCount(ref))
		}

		// PayPal bills the new plan from the next cycle.
		if sale := f.paypal.RenewSubscription(ref); sale == nil || sale.Amount.Value != "15.00" {
			t.Fatalf("renewal: %+v", sale)
		}
		if r := paypalHook(t, f.payFixture, f.last(t, "PAYMENT.SALE.COMPLETED")); r.Status != 200 {
			t.Fatalf("renewal: %d %s", r.Status, r.Body)
		}
		if s := f.sub(t); s.PlanID != tiers.backstage.ID || s.Amount != 1500 || s.Renewals != 1 {
			t.Fatalf("after the renewal: %+v", s)
		}
	})
}

// Downgrade (without JavaScript: the confirmation's form): PayPal revises
// to the lower plan once the member approves; the member keeps the higher
// tier to the period end, when PayPal bills the lower price and the tier
// follows (the role history too). An upgrade approved on PayPal whose
// difference is never paid starts with the next renewal instead.
func TestPayPalTierDowngradeAtPeriodEnd(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPPSubFixture(t, db)
		_, ref := f.joinedByPayPal(t)
		tiers := f.tiers(t)
		f.upgradeByPayPal(t, tiers)
		until := f.sub(t).CurrentPeriodEnd

		post := f.ts.do(t, "POST", "/apps/demo/membership/change/"+tiers.circle.ItemID, strings.NewReader("x=1"), form(f.page))
		if post.Status != 303 || !strings.HasPrefix(post.Header.Get("Location"), f.paypal.URL+"/webapps/billing/subscriptions?ba_token=") {
			t.Fatalf("downgrade form: %d %s", post.Status, post.Header.Get("Location"))
		}
		if s := f.sub(t); s.NextPlanID != nil {
			t.Fatalf("scheduled before PayPal's approval: %+v", s)
		}
		back := f.agree(t, post.Header.Get("Location"))
		for range 3 { // reloads
			if code, loc := ppGo(t, f, local(back)); code != 303 || loc != "/apps/demo/membership?notice=downgrade" {
				t.Fatalf("return: %d %s", code, loc)
			}
		}
		s := f.sub(t)
		if s.PlanID != tiers.backstage.ID || s.Amount != 1500 || s.NextPlanID == nil || *s.NextPlanID != tiers.circle.ID || !s.CurrentPeriodEnd.Equal(until) {
			t.Fatalf("after the downgrade: %+v", s)
		}
		if _, prices := f.paypal.SubscriptionPlan(ref); len(prices) != 1 || prices[0] != "REGULAR:8.00" {
			t.Fatalf("PayPal bills after the downgrade: %v", prices)
		}
		page := f.ts.do(t, "GET", "/apps/demo/membership?notice=downgrade", nil, f.page)
		if !strings.Contains(page.Body, "Your tier changes at the end of the current period.") || !strings.Contains(page.Body, "Moves to") {
			t.Fatalf("membership page after the downgrade: %.1500s", page.Body[strings.Index(page.Body, "<main"):])
		}
		circleLines := f.roleLines(t, tiers.circle.ID)

		// The period end: PayPal bills the lower plan, and the tier follows.
		if sale := f.paypal.RenewSubscription(ref); sale == nil || sale.Amount.Value != "8.00" {
			t.Fatalf("renewal: %+v", sale)
		}
		if r := paypalHook(t, f.payFixture, f.last(t, "PAYMENT.SALE.COMPLETED")); r.Status != 200 {
			t.Fatalf("renewal: %d %s", r.Status, r.Body)
		}
		s = f.sub(t)
		if s.PlanID != tiers.circle.ID || s.Amount != 800 || s.NextPlanID != nil || !s.CurrentPeriodEnd.After(until) {
			t.Fatalf("after the period end: %+v", s)
		}
		if n := f.roleLines(t, tiers.circle.ID); n != circleLines+1 {
			t.Fatalf("role history at the period end: %d lines for the lower tier, %d before", n, circleLines)
		}

		// An upgrade approved on PayPal but never paid: PayPal bills the
		// new plan from the next cycle, and the tier follows then.
		r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID}), f.as)
		var a struct {
			Data TierChangeData `json:"data"`
		}
		if r.Status != 200 || json.Unmarshal([]byte(r.Body), &a) != nil || a.Data.PayPal == nil {
			t.Fatalf("second upgrade: %d %s", r.Status, r.Body)
		}
		f.agree(t, a.Data.PayPal.Href)
		if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.UPDATED")); r.Status != 200 {
			t.Fatalf("updated: %d %s", r.Status, r.Body)
		}
		if row, _ := f.ts.store.PayPalTierChangeByID(context.Background(), a.Data.PayPal.ID); row == nil || row.Status != store.PayPalChangeRevised {
			t.Fatalf("the webhook did not take the revision: %+v", row)
		}
		if s := f.sub(t); s.PlanID != tiers.circle.ID {
			t.Fatalf("an unpaid upgrade started: %+v", s)
		}
		f.paypal.RenewSubscription(ref)
		if r := paypalHook(t, f.payFixture, f.last(t, "PAYMENT.SALE.COMPLETED")); r.Status != 200 {
			t.Fatalf("renewal: %d %s", r.Status, r.Body)
		}
		if s := f.sub(t); s.PlanID != tiers.backstage.ID || s.Amount != 1500 {
			t.Fatalf("the unpaid upgrade at the renewal: %+v", s)
		}
		if row, _ := f.ts.store.PayPalTierChangeByID(context.Background(), a.Data.PayPal.ID); row.Status != store.PayPalChangeDone {
			t.Fatalf("the unpaid upgrade's change: %+v", row)
		}
	})
}

// PayPal's own limits reach the member as a refusal, not a 500: a member
// who is past due cannot change tier; cancelling PayPal's approval leaves
// the tier as it was.
func TestPayPalTierChangeRefused(t *testing.T) {
	t.Parallel()
	f := newPPSubFixture(t, demoDB(t))
	_, ref := f.joinedByPayPal(t)
	tiers := f.tiers(t)
	r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID, "code": "NOPE"}), f.as)
	if r.Status < 400 || r.Status >= 500 {
		t.Fatalf("an unknown code on a PayPal upgrade: %d %s", r.Status, r.Body)
	}
	if f.paypal.RevisionCount(ref) != 0 {
		t.Fatal("revised with an unknown code")
	}
	f.paypal.FailSubscriptionPayment(ref, 0)
	if r := paypalHook(t, f.payFixture, f.last(t, "BILLING.SUBSCRIPTION.PAYMENT.FAILED")); r.Status != 200 {
		t.Fatalf("failed: %d", r.Status)
	}
	commExpect(t, "past due", f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": tiers.backstage.ItemID}), f.as),
		409, "settle it before changing tiers")
	if f.paypal.RevisionCount(ref) != 0 {
		t.Fatal("a past-due membership was revised")
	}
	// Another member's change (or none) leads back to the tiers, and
	// moves nothing.
	if res := f.ts.do(t, "GET", "/apps/demo/membership/paypal/nope", nil, f.page); res.Status != 303 ||
		!strings.HasPrefix(res.Header.Get("Location"), "/apps/demo/membership?error=") {
		t.Fatalf("unknown change: %d %s", res.Status, res.Header.Get("Location"))
	}
}

// returnsRaceUpdated sends the member back from PayPal's approval fifty
// times at once while PayPal's BILLING.SUBSCRIPTION.UPDATED arrives (every
// fourth request), and counts where each went: "hook" for an accepted
// event, the redirect's location for a return visit.
func returnsRaceUpdated(t *testing.T, f *ppSubFixture, back string) map[string]int {
	t.Helper()
	updated := f.last(t, "BILLING.SUBSCRIPTION.UPDATED")
	var wg sync.WaitGroup
	var mu sync.Mutex
	went := map[string]int{}
	for i := range 50 {
		wg.Go(func() {
			key := ""
			if i%4 == 0 {
				if r := paypalHook(t, f.payFixture, f.paypal.Resign(updated)); r.Status == 200 {
					key = "hook"
				}
			} else if code, loc := ppGo(t, f, local(back)); code == 303 {
				key = loc
			}
			mu.Lock()
			went[key]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return went
}

// otherThanHook is the one place return visits went, besides the hook.
func otherThanHook(went map[string]int) string {
	for k := range went {
		if k != "hook" {
			return k
		}
	}
	return ""
}
