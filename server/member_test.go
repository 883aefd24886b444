package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// memberFixture holds the demo ids the membership tests use.
type memberFixture struct {
	ts          *testServer
	appID       string
	communityID string
	postID      string
	planItemID  string
}

func newMemberFixture(t *testing.T) *memberFixture {
	t.Helper()
	return newMemberFixtureOn(t, demoDB(t))
}

func newMemberFixtureOn(t *testing.T, db *bun.DB) *memberFixture {
	t.Helper()
	return memberFixtureFor(t, newTestServer(t, db))
}

// memberFixtureFor is the fixture of a test server already made (one whose
// files live in MinIO, say).
func memberFixtureFor(t *testing.T, ts *testServer) *memberFixture {
	t.Helper()
	ctx := context.Background()
	f := &memberFixture{ts: ts}
	db := ts.store.DB()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.NewSelect().Table("apps").Column("id").Where("name = 'demo'").Scan(ctx, &f.appID))
	must(db.NewSelect().Table("communities").Column("id").Where("app_id = ?", f.appID).Limit(1).Scan(ctx, &f.communityID))
	must(db.NewSelect().Table("messages").Column("id").Where("app_id = ? AND type = 'POST'", f.appID).Limit(1).Scan(ctx, &f.postID))
	must(db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = 'SUBSCRIPTION' AND sku = 'SUB-SC-01'", f.appID).Limit(1).Scan(ctx, &f.planItemID))
	// The demo seeds every member's wallet; these tests count from zero.
	for _, email := range []string{"follower@demo.test", "moderator@demo.test", "creator@demo.test", "admin@demo.test", "subscriber@demo.test"} {
		drainWallet(t, ts.store, f.appID, f.userID(t, email))
	}
	return f
}

func drainWallet(t *testing.T, st *store.Storage, appID, userID string) {
	t.Helper()
	ctx := context.Background()
	bal, err := st.WalletBalance(ctx, appID, userID)
	if err != nil {
		t.Fatal(err)
	}
	if bal > 0 {
		if _, _, err := st.Transfer(ctx, store.TransferInput{AppID: appID, Reference: "test-drain-" + userID, Kind: "DEBIT",
			From: store.Member(userID), To: store.OutsideMoney, Amount: bal}); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *memberFixture) userID(t *testing.T, email string) string {
	t.Helper()
	u, err := f.ts.store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return u.ID
}

func (f *memberFixture) set(t *testing.T, app, key, value string) {
	t.Helper()
	if err := f.ts.store.SetAppField(context.Background(), app, key, value); err != nil {
		t.Fatalf("set %s: %v", key, err)
	}
}

func (f *memberFixture) credit(t *testing.T, email string, cents int64) {
	t.Helper()
	if _, _, err := f.ts.store.CreditWallet(context.Background(), f.appID, f.userID(t, email), cents, "test-credit-"+email+fmt.Sprint(cents), "test"); err != nil {
		t.Fatal(err)
	}
}

func (f *memberFixture) role(t *testing.T, email string) string {
	t.Helper()
	m, err := f.ts.store.MembershipOf(context.Background(), f.appID, f.userID(t, email))
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		return ""
	}
	return m.Role
}

func (f *memberFixture) sub(t *testing.T, email string) *store.Subscription {
	t.Helper()
	s, err := f.ts.store.SubscriptionOf(context.Background(), f.appID, f.userID(t, email))
	if err != nil || s == nil {
		t.Fatalf("subscription of %s: %v %v", email, s, err)
	}
	return s
}

func (f *memberFixture) balance(t *testing.T, email string) int64 {
	t.Helper()
	b, err := f.ts.store.WalletBalance(context.Background(), f.appID, f.userID(t, email))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The gate holds on pages and on the JSON API until a plan is bought, and
// buying one with the wallet makes the follower SUBSCRIBER and opens both.
func TestMembershipBuyingAPlanOpensTheGate(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	f.set(t, "demo", "features.subscriptionGating.settings.required", "true")
	posts := "/api/community/" + f.communityID + "/posts"
	post := "/api/messages/" + f.postID
	checkout := "/apps/demo/checkout/plan/" + f.planItemID

	f.ts.run(t, []scenario{
		{name: "gated follower: posts", path: posts, as: "follower@demo.test", status: 403},
		{name: "gated follower: stories", path: "/api/community/" + f.communityID + "/stories", as: "follower@demo.test", status: 403},
		{name: "gated follower: a post", path: post, as: "follower@demo.test", status: 403},
		{name: "gated follower: replies", path: post + "/replies", as: "follower@demo.test", status: 403},
		{name: "gated follower: react", method: "POST", path: post + "/reactions", as: "follower@demo.test", body: `{"reaction":"❤️"}`, status: 403},
		{name: "gated follower: comment", method: "POST", path: "/api/messages", as: "follower@demo.test",
			body: `{"content":"hi","type":"REPLY","parentMessageId":"` + f.postID + `"}`, status: 403},
		{name: "gated follower: events", path: "/api/events/apps/demo/events", as: "follower@demo.test", status: 403},
		{name: "gated visitor: posts", path: posts, status: 401},
		{name: "subscriber passes", path: posts, as: "subscriber@demo.test", status: 200},
		{name: "moderator passes", path: posts, as: "moderator@demo.test", status: 200},
		{name: "admin passes", path: post, as: "admin@demo.test", status: 200},
		{name: "creator passes", path: "/api/events/apps/demo/events", as: "creator@demo.test", status: 200},
		{name: "gated page redirects home", path: "/apps/demo/community", as: "follower@demo.test", status: 302},
		{name: "gated screen lists the plans", path: "/apps/demo", as: "follower@demo.test", status: 200,
			contains: []string{"Members only", "Studio Circle Membership", "$8.00", "Subscribe", checkout}},
		{name: "subscriber sees no gate", path: "/apps/demo", as: "subscriber@demo.test", status: 200, absent: []string{"Members only"}},
		{name: "plan checkout is open to the gated", path: checkout, as: "follower@demo.test", status: 200,
			contains: []string{"Studio Circle Membership", "Your wallet balance is too low"}},
		{name: "me lists the plans", path: "/api/auth/me?appId=demo", as: "follower@demo.test", status: 200,
			// The demo's three tiers, first tier first (issue 40).
			json: map[string]any{"data.subscription.items": arrayLen(3), "data.subscription.items.0.subscriptionPlan.billingCycle": "MONTHLY",
				"data.subscription.items.0.subscriptionPlan.rank": 1, "data.subscription.items.2.subscriptionPlan.rank": 3,
				"data.subscription.status.hasValidSubscription": false, "data.subscription.status.status": "NONE"}},
		{name: "not enough money", method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
			body: `{"itemId":"` + f.planItemID + `"}`, status: 402, json: map[string]any{"message": "Insufficient wallet balance"}},
		{name: "unknown plan", method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
			body: `{"itemId":"nope"}`, status: 404},
		{name: "visitor cannot subscribe", method: "POST", path: "/api/subscriptions/apps/demo/subscribe",
			body: `{"itemId":"` + f.planItemID + `"}`, status: 401},
	})
	if f.role(t, "follower@demo.test") != store.RoleFollower {
		t.Fatalf("a refused payment changed the role")
	}

	f.credit(t, "follower@demo.test", 1000)
	before := time.Now()
	f.ts.run(t, []scenario{
		{name: "subscribe with the wallet", method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
			body: `{"itemId":"` + f.planItemID + `","paymentMethod":"musepay"}`, status: 200,
			json: map[string]any{"data.order.status": "PAID", "data.order.total": float64(800),
				"data.subscription.hasValidSubscription": true, "data.subscription.status": "ACTIVE",
				"data.subscription.plan.billingCycle": "MONTHLY"}},
		{name: "posts open", path: posts, as: "follower@demo.test", status: 200, json: map[string]any{"data.posts": nonEmpty{}}},
		{name: "post open", path: post, as: "follower@demo.test", status: 200},
		{name: "events open", path: "/api/events/apps/demo/events", as: "follower@demo.test", status: 200},
		{name: "page open", path: "/apps/demo/community", as: "follower@demo.test", status: 200},
		{name: "landing without the gate", path: "/apps/demo", as: "follower@demo.test", status: 200, absent: []string{"Members only"}},
		{name: "me says subscribed", path: "/api/auth/me?appId=demo", as: "follower@demo.test", status: 200,
			json: map[string]any{"data.subscription.status.hasValidSubscription": true, "data.subscription.status.cancelAtPeriodEnd": false,
				"data.subscription.status.plan.name": "Studio Circle Membership", "data.userAppRole": "SUBSCRIBER"}},
	})
	if r := f.role(t, "follower@demo.test"); r != store.RoleSubscriber {
		t.Errorf("role after paying %q, want SUBSCRIBER", r)
	}
	if b := f.balance(t, "follower@demo.test"); b != 200 {
		t.Errorf("balance %d, want 200", b)
	}
	s := f.sub(t, "follower@demo.test")
	want := before.AddDate(0, 1, 0)
	if d := s.CurrentPeriodEnd.Sub(want); d < -time.Minute || d > time.Minute || s.Amount != 800 || s.Provider != store.WalletMethod {
		t.Errorf("subscription %+v, want a month from now, 800 by wallet", s)
	}

	// A moderator who buys a plan stays a moderator.
	f.credit(t, "moderator@demo.test", 800)
	f.ts.run(t, []scenario{{method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "moderator@demo.test",
		body: `{"itemId":"` + f.planItemID + `"}`, status: 200}})
	if r := f.role(t, "moderator@demo.test"); r != store.RoleModerator {
		t.Errorf("moderator became %q", r)
	}
}

// The no-JavaScript way: the gated screen's Subscribe link, then the plan
// checkout form, then into the app.
func TestMembershipPlanCheckoutForm(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	f.set(t, "demo", "features.subscriptionGating.settings.required", "true")
	f.credit(t, "follower@demo.test", 800)
	f.ts.run(t, []scenario{
		{name: "pay with the wallet", method: "POST", path: "/apps/demo/checkout/plan/" + f.planItemID, as: "follower@demo.test",
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 303},
		{name: "in", path: "/apps/demo/community", as: "follower@demo.test", status: 200},
		// The form lands on the profile, which confirms the membership.
		{name: "confirmed", path: "/apps/demo/profile?joined=1", as: "follower@demo.test", status: 200,
			contains: []string{"Welcome! Your membership is active until"}},
		{name: "no confirmation without a membership", path: "/apps/demo/profile?joined=1", as: "moderator@demo.test", status: 200,
			absent: []string{"Welcome! Your membership is active"}},
		{name: "a second purchase is refused for money, not silently", method: "POST", path: "/apps/demo/checkout/plan/" + f.planItemID,
			as: "follower@demo.test", headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 402,
			contains: []string{"Insufficient wallet balance"}},
	})
}

// With no plans, the gated screen says so (SPEC.md section 8); with
// landingPageOnly the landing page and its JSON lose their previews for
// the gated, and keep them for members who pass.
func TestMembershipNoPlansAndLandingPageOnly(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	if _, err := f.ts.store.DB().NewUpdate().Table("store_items").Set("deleted_at = ?", time.Now()).
		Where("app_id = ? AND type = 'SUBSCRIPTION'", f.appID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	f.set(t, "demo", "features.subscriptionGating.settings.landingPageOnly", "true")
	f.ts.run(t, []scenario{
		{name: "no plans", path: "/apps/demo", as: "follower@demo.test", status: 200,
			contains: []string{"No subscription plans available at the moment."}, absent: []string{`class="card post-card"`}},
		{name: "visitor: no previews", path: "/apps/demo", status: 200,
			contains: []string{"Members only"}, absent: []string{`class="card post-card"`, "Upcoming Events"}},
		{name: "landing JSON for a visitor", path: "/api/app/demo/landing", status: 200,
			json: map[string]any{"data.recentPosts": arrayLen(0), "data.upcomingEvents": arrayLen(0), "data.featuredStoreItems": arrayLen(0),
				"data.community.posts": arrayLen(0)}},
		{name: "landing JSON for a subscriber", path: "/api/app/demo/landing", as: "subscriber@demo.test", status: 200,
			json: map[string]any{"data.recentPosts": nonEmpty{}}},
		{name: "landingPageOnly gates the API", path: "/api/community/" + f.communityID + "/posts", as: "follower@demo.test", status: 403},
		{name: "subscriber page shows previews", path: "/apps/demo", as: "subscriber@demo.test", status: 200, contains: []string{`class="card post-card"`}},
	})
}

// A wallet renewal succeeds, a second one fails into the grace period with
// a notice, and the membership ends when the grace runs out.
func TestMembershipRenewalGraceAndEnd(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) { testRenewalGraceAndEnd(t, newMemberFixture(t)) })
	// The embedded default takes the same paths without row locks.
	t.Run("sqlite", func(t *testing.T) { testRenewalGraceAndEnd(t, newMemberFixtureOn(t, storetest.SQLite(t))) })
}

func testRenewalGraceAndEnd(t *testing.T, f *memberFixture) {
	ctx := context.Background()
	st := f.ts.store
	f.credit(t, "follower@demo.test", 1700) // two periods and 100 left
	f.ts.run(t, []scenario{{method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
		body: `{"itemId":"` + f.planItemID + `"}`, status: 200}})
	first := f.sub(t, "follower@demo.test")

	// Not yet due: nothing happens.
	res, err := st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: first.CurrentPeriodEnd.Add(-2 * time.Hour)})
	if err != nil || res != (store.RenewResult{}) {
		t.Fatalf("early run: %+v %v", res, err)
	}
	// Due within the lead time: renewed once, however many runs race.
	due := first.CurrentPeriodEnd.Add(-30 * time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	renewed := 0
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: due})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			renewed += r.Renewed
			mu.Unlock()
		}()
	}
	wg.Wait()
	second := f.sub(t, "follower@demo.test")
	if renewed != 1 || f.balance(t, "follower@demo.test") != 100 || !second.CurrentPeriodEnd.Equal(first.CurrentPeriodEnd.AddDate(0, 1, 0)) ||
		second.Status != store.SubActive || second.Renewals != 1 {
		t.Fatalf("renewal: renewed %d, balance %d, sub %+v", renewed, f.balance(t, "follower@demo.test"), second)
	}

	// The next one cannot be paid: grace period with a notice, access kept.
	res, err = st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: second.CurrentPeriodEnd.Add(time.Minute)})
	if err != nil || res.Failed != 1 {
		t.Fatalf("failed renewal: %+v %v", res, err)
	}
	third := f.sub(t, "follower@demo.test")
	wantGrace := second.CurrentPeriodEnd.Add(store.DefaultGracePeriod)
	if third.Status != store.SubPastDue || third.GraceUntil == nil || !third.GraceUntil.Equal(wantGrace) {
		t.Fatalf("after a failed renewal: %+v", third)
	}
	var notices int64
	notices, err = st.DB().NewSelect().Table("notifications").Where("app_id = ? AND user_id = ? AND content LIKE ?", f.appID,
		f.userID(t, "follower@demo.test"), "%renewal failed%").Count(ctx)
	if err != nil || notices != 1 {
		t.Errorf("grace notices %d, want 1 (%v)", notices, err)
	}
	inGrace := second.CurrentPeriodEnd.Add(3 * 24 * time.Hour)
	if ok, _ := st.HasValidSubscription(ctx, f.appID, f.userID(t, "follower@demo.test"), inGrace); !ok {
		t.Errorf("no access during the grace period")
	}
	// Retried during grace (still too little money): no second notice.
	if res, err = st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: inGrace}); err != nil || res.Failed != 1 {
		t.Fatalf("retry in grace: %+v %v", res, err)
	}
	if f.role(t, "follower@demo.test") != store.RoleSubscriber {
		t.Errorf("role lost during grace")
	}

	// Grace over: the membership ends and the member is a follower again.
	after := wantGrace.Add(time.Minute)
	if res, err = st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: after}); err != nil || res.Ended != 1 {
		t.Fatalf("end: %+v %v", res, err)
	}
	end := f.sub(t, "follower@demo.test")
	if end.Status != store.SubExpired || f.role(t, "follower@demo.test") != store.RoleFollower {
		t.Errorf("after grace: %+v role %s", end, f.role(t, "follower@demo.test"))
	}
	if ok, _ := st.HasValidSubscription(ctx, f.appID, f.userID(t, "follower@demo.test"), after); ok {
		t.Errorf("still valid after grace")
	}
	notices, _ = st.DB().NewSelect().Table("notifications").Where("app_id = ? AND user_id = ? AND kind <> ?", f.appID, f.userID(t, "follower@demo.test"), store.KindOrderStatus).Count(ctx)
	if notices != 4 {
		t.Errorf("notices %d, want the start, the renewal, the failure and the end", notices)
	}
}

// A member who topped up during grace is renewed and active again.
func TestMembershipRecoversDuringGrace(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	f.credit(t, "follower@demo.test", 800)
	f.ts.run(t, []scenario{{method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
		body: `{"itemId":"` + f.planItemID + `"}`, status: 200}})
	s := f.sub(t, "follower@demo.test")
	if res, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: s.CurrentPeriodEnd}); err != nil || res.Failed != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	f.credit(t, "follower@demo.test", 900)
	if res, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: s.CurrentPeriodEnd.Add(24 * time.Hour)}); err != nil || res.Renewed != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	again := f.sub(t, "follower@demo.test")
	if again.Status != store.SubActive || again.GraceUntil != nil || !again.CurrentPeriodEnd.Equal(s.CurrentPeriodEnd.AddDate(0, 1, 0)) ||
		f.balance(t, "follower@demo.test") != 100 {
		t.Errorf("recovered: %+v balance %d", again, f.balance(t, "follower@demo.test"))
	}
}

// Cancel at period end: access and no charge until the end, then the
// membership ends; Keep membership undoes it before then.
func TestMembershipCancelAtPeriodEnd(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	f.set(t, "demo", "features.subscriptionGating.settings.required", "true")
	f.credit(t, "follower@demo.test", 1600)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	f.ts.run(t, []scenario{
		{name: "nothing to cancel", method: "POST", path: "/api/subscriptions/apps/demo/cancel", as: "follower@demo.test", body: `{"cancel":true}`, status: 404},
		{method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test", body: `{"itemId":"` + f.planItemID + `"}`, status: 200},
		{name: "profile shows the membership", path: "/apps/demo/profile", as: "follower@demo.test", status: 200,
			contains: []string{"Membership", "Renews on", "Cancel membership"}},
		{name: "cancel", method: "POST", path: "/api/subscriptions/apps/demo/cancel", as: "follower@demo.test", body: `{"cancel":true}`, status: 200,
			json: map[string]any{"data.cancelAtPeriodEnd": true, "data.hasValidSubscription": true}},
		{name: "profile says until when", path: "/apps/demo/profile", as: "follower@demo.test", status: 200,
			contains: []string{"Cancelled: access until", "Keep membership"}},
		{name: "keep (form)", method: "POST", path: "/apps/demo/profile/membership", as: "follower@demo.test",
			headers: form, body: "", status: 303},
	})
	// The form without cancel=0 cancels; post it with cancel=1 explicitly.
	res := f.ts.do(t, "POST", "/apps/demo/profile/membership", strings.NewReader(url.Values{"cancel": {"1"}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": sessionCookie + "=" + sessionFor(t, f.ts, "follower@demo.test")})
	if res.Status != http.StatusSeeOther || !f.sub(t, "follower@demo.test").CancelAtPeriodEnd {
		t.Fatalf("cancel form: %d %+v", res.Status, f.sub(t, "follower@demo.test"))
	}
	s := f.sub(t, "follower@demo.test")
	// Due, but cancelled: no charge, still a member until the end.
	if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: s.CurrentPeriodEnd.Add(-30 * time.Minute)}); err != nil || r != (store.RenewResult{}) {
		t.Fatalf("%+v %v", r, err)
	}
	if f.balance(t, "follower@demo.test") != 800 || f.role(t, "follower@demo.test") != store.RoleSubscriber {
		t.Errorf("cancelled membership charged or ended early: balance %d role %s", f.balance(t, "follower@demo.test"), f.role(t, "follower@demo.test"))
	}
	if r, err := f.ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: s.CurrentPeriodEnd.Add(time.Second)}); err != nil || r.Ended != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	if got := f.sub(t, "follower@demo.test"); got.Status != store.SubCanceled || f.role(t, "follower@demo.test") != store.RoleFollower {
		t.Errorf("after the period: %+v role %s", got, f.role(t, "follower@demo.test"))
	}
	if f.balance(t, "follower@demo.test") != 800 {
		t.Errorf("charged after cancelling")
	}
}

// A refunded plan order ends the membership it bought.
func TestMembershipRefundEndsIt(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	f.credit(t, "follower@demo.test", 800)
	f.ts.run(t, []scenario{{method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
		body: `{"itemId":"` + f.planItemID + `"}`, status: 200}})
	s := f.sub(t, "follower@demo.test")
	if _, err := f.ts.store.RefundOrder(ctx, f.appID, *s.OrderID, "test"); err != nil {
		t.Fatal(err)
	}
	if got := f.sub(t, "follower@demo.test"); got.Status != store.SubExpired || f.role(t, "follower@demo.test") != store.RoleFollower ||
		f.balance(t, "follower@demo.test") != 800 {
		t.Errorf("after refund: %+v role %s balance %d", got, f.role(t, "follower@demo.test"), f.balance(t, "follower@demo.test"))
	}
}

// Provider renewals (webhooks): paid extends, a stale or repeated report
// changes nothing, failed starts grace, ended ends.
func TestMembershipProviderRenewals(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	st := f.ts.store
	f.credit(t, "follower@demo.test", 800)
	f.ts.run(t, []scenario{{method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
		body: `{"itemId":"` + f.planItemID + `"}`, status: 200}})
	s := f.sub(t, "follower@demo.test")
	if _, err := st.DB().NewUpdate().Table("subscriptions").Set("provider = 'stripe', provider_ref = 'sub_123'").Where("id = ?", s.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	next := s.CurrentPeriodEnd.AddDate(0, 1, 0)
	for i := 0; i < 2; i++ { // repeated
		if _, err := st.ApplyProviderRenewal(ctx, "sub_123", "paid", next, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.ApplyProviderRenewal(ctx, "sub_123", "paid", s.CurrentPeriodEnd, 0); err != nil { // stale
		t.Fatal(err)
	}
	got := f.sub(t, "follower@demo.test")
	if !got.CurrentPeriodEnd.Equal(next) || got.Renewals != 1 {
		t.Errorf("after paid: %+v", got)
	}
	if _, err := st.ApplyProviderRenewal(ctx, "sub_123", "failed", time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	if got = f.sub(t, "follower@demo.test"); got.Status != store.SubPastDue {
		t.Errorf("after failed: %+v", got)
	}
	// The wallet job never charges a card membership.
	if r, err := st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: next.Add(time.Hour)}); err != nil || r.Renewed != 0 {
		t.Errorf("job touched a card membership: %+v %v", r, err)
	}
	if _, err := st.ApplyProviderRenewal(ctx, "sub_123", "ended", time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	if got = f.sub(t, "follower@demo.test"); got.Status != store.SubExpired || f.role(t, "follower@demo.test") != store.RoleFollower {
		t.Errorf("after ended: %+v", got)
	}
	if _, err := st.ApplyProviderRenewal(ctx, "sub_unknown", "paid", next, 0); !isNotFound(err) {
		t.Errorf("unknown reference: %v", err)
	}
}

// Donations: amounts are checked, only paid donations count, tiers are
// reached exactly at their threshold, the creator sees the list.
func TestDonations(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	f.credit(t, "follower@demo.test", 10000)
	create := func(body string) scenario {
		return scenario{method: "POST", path: "/api/donations/create", as: "follower@demo.test", body: body}
	}
	bad := []string{
		`{"appId":"demo","amount":0,"currency":"USD"}`,
		`{"appId":"demo","amount":-500,"currency":"USD"}`,
		`{"appId":"demo","amount":10.5,"currency":"USD"}`,
		`{"appId":"demo","amount":"500","currency":"USD"}`,
		`{"appId":"demo","currency":"USD"}`,
		`{"appId":"demo","amount":500,"currency":"EUR"}`,
		`{"appId":"demo","amount":100000000,"currency":"USD"}`,
		`{"amount":500,"currency":"USD"}`,
		`{"appId":"demo","amount":500,"message":"` + strings.Repeat("x", 501) + `"}`,
	}
	var scs []scenario
	for _, b := range bad {
		s := create(b)
		s.name, s.status = "bad: "+b[:min(len(b), 60)], 400
		scs = append(scs, s)
	}
	scs = append(scs,
		scenario{name: "visitor", method: "POST", path: "/api/donations/create", body: `{"appId":"demo","amount":500}`, status: 401},
		scenario{name: "donations off", method: "POST", path: "/api/donations/create", as: "follower@demo.test", body: `{"appId":"acme","amount":500}`, status: 404},
		scenario{name: "unknown app", method: "POST", path: "/api/donations/create", as: "follower@demo.test", body: `{"appId":"nope","amount":500}`, status: 404},
	)
	f.ts.run(t, scs)

	ids := map[string]string{}
	donate := func(email string, cents int64) (int, string) {
		t.Helper()
		h := map[string]string{"Content-Type": "application/json", "Cookie": sessionCookie + "=" + sessionFor(t, f.ts, email)}
		res := f.ts.do(t, "POST", "/api/donations/create", strings.NewReader(fmt.Sprintf(`{"appId":%q,"amount":%d,"currency":"USD","message":"go"}`, f.appID, cents)), h)
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		var out struct{ Data struct{ ID string } }
		_ = json.Unmarshal([]byte(res.Body), &out)
		res = f.ts.do(t, "POST", "/api/donations/process", strings.NewReader(`{"donationId":"`+out.Data.ID+`"}`), h)
		return res.Status, out.Data.ID
	}
	standing := func() *store.DonorStanding {
		s, err := f.ts.store.DonorStandingOf(context.Background(), f.appID, f.userID(t, "follower@demo.test"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// A created but unpaid donation counts for nothing.
	f.ts.run(t, []scenario{create(`{"appId":"demo","amount":5000,"currency":"USD"}`)})
	if s := standing(); s.Total != 0 || s.Tier != nil {
		t.Fatalf("pending donation counted: %+v", s)
	}
	if st, id := donate("follower@demo.test", 499); st != 200 {
		t.Fatalf("donate 4.99: %d", st)
	} else {
		ids["first"] = id
	}
	if s := standing(); s.Total != 499 || s.Tier != nil {
		t.Fatalf("below Bronze: %+v", s)
	}
	donate("follower@demo.test", 1) // exactly 500
	if s := standing(); s.Tier == nil || s.Tier.Name != "Bronze" {
		t.Fatalf("at 500: %+v", s)
	}
	donate("follower@demo.test", 1999) // 2499
	if s := standing(); s.Tier.Name != "Bronze" {
		t.Fatalf("at 2499: %+v", s.Tier)
	}
	donate("follower@demo.test", 1) // exactly 2500
	if s := standing(); s.Tier.Name != "Silver" || s.Total != 2500 {
		t.Fatalf("at 2500: %+v", s)
	}
	if b := f.balance(t, "follower@demo.test"); b != 7500 {
		t.Errorf("balance %d, want 7500", b)
	}

	f.ts.run(t, []scenario{
		{name: "process twice charges once", method: "POST", path: "/api/donations/process", as: "follower@demo.test",
			body: `{"donationId":"` + ids["first"] + `"}`, status: 200, json: map[string]any{"data.status": "PAID"}},
		{name: "someone else's donation", method: "POST", path: "/api/donations/process", as: "member@demo.test",
			body: `{"donationId":"` + ids["first"] + `"}`, status: 404},
		{name: "no id", method: "POST", path: "/api/donations/process", as: "follower@demo.test", body: `{}`, status: 400},
		{name: "creator sees the list", path: "/api/donations/apps/demo", as: "creator@demo.test", status: 200,
			json: map[string]any{"data.totals.amount": float64(2500), "data.totals.count": float64(4), "data.totals.donors": float64(1),
				"data.donations": arrayLen(4), "data.donations.0.donor.username": present{}}},
		{name: "follower does not", path: "/api/donations/apps/demo", as: "follower@demo.test", status: 403},
		{name: "creator page", path: "/apps/demo/donations", as: "creator@demo.test", status: 200, contains: []string{"$25.00", "Supporters"}},
		{name: "badge on the profile", path: "/apps/demo/profile", as: "follower@demo.test", status: 200, contains: []string{`class="badge tier-badge"`, "Silver"}},
	})
	if b := f.balance(t, "follower@demo.test"); b != 7500 {
		t.Errorf("balance after a repeated process %d, want 7500", b)
	}
	// The badge beside the donor's name in the feed.
	f.credit(t, "creator@demo.test", 500)
	if st, _ := donate("creator@demo.test", 500); st != 200 {
		t.Fatalf("creator donation: %d", st)
	}
	f.ts.run(t, []scenario{
		{name: "feed badge", path: "/api/community/" + f.communityID + "/posts", as: "creator@demo.test", status: 200,
			contains: []string{`"donorTier":"Bronze"`}},
		{name: "feed page badge", path: "/apps/demo/community", as: "creator@demo.test", status: 200,
			contains: []string{`<span class="badge tier-badge">Bronze</span>`}},
	})

	// Too little money: 402, nothing counted.
	f.ts.run(t, []scenario{create(`{"appId":"demo","amount":9000,"currency":"USD"}`)})
	if st, _ := donate("follower@demo.test", 9000); st != 402 {
		t.Errorf("overdraw: %d", st)
	}
	if s := standing(); s.Total != 2500 {
		t.Errorf("refused donation counted: %+v", s)
	}
}

// The donation form works without JavaScript.
func TestDonationForm(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	f.credit(t, "follower@demo.test", 1000)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	f.ts.run(t, []scenario{
		{name: "page", path: "/apps/demo/donate", as: "follower@demo.test", status: 200,
			contains: []string{"Show Your Support", "Quick Donation", "Achievement Tiers", "Bronze", `action="/apps/demo/donate"`}},
		{name: "empty", method: "POST", path: "/apps/demo/donate", as: "follower@demo.test", headers: form, body: "amount=", status: 400,
			contains: []string{"Enter an amount above $0"}},
		{name: "zero", method: "POST", path: "/apps/demo/donate", as: "follower@demo.test", headers: form, body: "amount=0", status: 400},
		{name: "three decimals", method: "POST", path: "/apps/demo/donate", as: "follower@demo.test", headers: form, body: "amount=1.005", status: 400},
		{name: "ok", method: "POST", path: "/apps/demo/donate", as: "follower@demo.test", headers: form, body: "amount=5.00&message=thanks", status: 303},
		{name: "thanks", path: "/apps/demo/donate?thanks=1", as: "follower@demo.test", status: 200, contains: []string{"Thank you for your support!", "Bronze"}},
		{name: "too much", method: "POST", path: "/apps/demo/donate", as: "follower@demo.test", headers: form, body: "amount=50", status: 402,
			contains: []string{"Insufficient wallet balance"}},
	})
	if b := f.balance(t, "follower@demo.test"); b != 500 {
		t.Errorf("balance %d, want 500", b)
	}
}

// 50 concurrent donations from one wallet that covers 40 of them: exactly
// 40 are paid, the wallet ends at 0 and the creator's total is exact.
func TestDonationsConcurrent(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	f.credit(t, "follower@demo.test", 4000)
	token := sessionFor(t, f.ts, "follower@demo.test")
	h := map[string]string{"Content-Type": "application/json", "Cookie": sessionCookie + "=" + token}
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := f.ts.do(t, "POST", "/api/donations/create", strings.NewReader(`{"appId":"demo","amount":100,"currency":"USD"}`), h)
			var out struct{ Data struct{ ID string } }
			_ = json.Unmarshal([]byte(res.Body), &out)
			// Each donation processed twice at once: paid once.
			var inner sync.WaitGroup
			for j := 0; j < 2; j++ {
				inner.Add(1)
				go func() {
					defer inner.Done()
					r := f.ts.do(t, "POST", "/api/donations/process", strings.NewReader(`{"donationId":"`+out.Data.ID+`"}`), h)
					if j == 0 {
						mu.Lock()
						statuses[r.Status]++
						mu.Unlock()
					}
				}()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	if statuses[200] != 40 || statuses[402] != 10 {
		t.Errorf("statuses %v", statuses)
	}
	s, err := f.ts.store.DonorStandingOf(context.Background(), f.appID, f.userID(t, "follower@demo.test"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != 4000 || f.balance(t, "follower@demo.test") != 0 {
		t.Errorf("total %d balance %d, want 4000 and 0", s.Total, f.balance(t, "follower@demo.test"))
	}
	_, totals, _, err := f.ts.store.Donations(context.Background(), f.appID, 1, 20)
	if err != nil || totals.Count != 40 || totals.Amount != 4000 {
		t.Errorf("totals %+v %v", totals, err)
	}
}
