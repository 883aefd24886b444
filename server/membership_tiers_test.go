package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
)

// Issue 40 item 1: tiers. These run on SQLite and PostgreSQL (demoBoth).

type tierFixture struct {
	ts      *testServer
	app     *store.App
	shop    *store.Shop
	creator map[string]string
	tiers   []store.StudioPlan // the demo's three, in rank order
}

func newTierFixture(t *testing.T, db *bun.DB) *tierFixture {
	t.Helper()
	return newTierFixtureStore(t, db, nil)
}

// newTierFixtureStore is newTierFixture on a store built with withStore
// applied to its options.
func newTierFixtureStore(t *testing.T, db *bun.DB, withStore func(*store.Options)) *tierFixture {
	t.Helper()
	ts := newTestServerStore(t, db, nil, withStore)
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
	if len(f.tiers) != 3 {
		t.Fatalf("demo tiers: %+v", f.tiers)
	}
	return f
}

func (f *tierFixture) studioTiers(t *testing.T) []store.StudioPlan {
	t.Helper()
	plans, err := f.ts.store.StudioPlans(context.Background(), f.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// fan makes a new follower of the demo app with money in its wallet.
func (f *tierFixture) fan(t *testing.T, name string, cents int64) (string, string) {
	t.Helper()
	ctx := context.Background()
	u, err := f.ts.store.CreateUser(ctx, name+"@tiers.test", name, "not-a-password-hash")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ts.store.Follow(ctx, f.app.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	drainWallet(t, f.ts.store, f.app.ID, u.ID)
	if cents > 0 {
		if _, _, err := f.ts.store.CreditWallet(ctx, f.app.ID, u.ID, cents, "test:"+name, "gift"); err != nil {
			t.Fatal(err)
		}
	}
	return u.ID, sessionFor(t, f.ts, u.Email)
}

func (f *tierFixture) tiersAPI(t *testing.T, headers map[string]string) TiersData {
	t.Helper()
	var got struct{ Data TiersData }
	r := f.ts.do(t, "GET", "/api/memberships/apps/demo/tiers", nil, headers)
	if r.Status != 200 {
		t.Fatalf("tiers: %d %s", r.Status, r.Body)
	}
	commJSON(t, r, &got)
	return got.Data
}

// Tiers are ordered by rank (Up/Down in the studio renumbers them), carry
// a monthly and/or yearly price with the yearly saving, trial days and a
// state; only ON_SALE tiers are listed.
func TestTiersOrderAndStates(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		names := func(ts []store.Tier) string {
			var out []string
			for _, x := range ts {
				out = append(out, fmt.Sprintf("%d:%s", x.Rank, x.Name))
			}
			return strings.Join(out, ",")
		}
		got := f.tiersAPI(t, nil)
		if n := names(got.Tiers); n != "1:Studio Circle Membership,2:Backstage Pass,3:Producer's Room" {
			t.Fatalf("demo tiers: %s", n)
		}
		if first := got.Tiers[0]; *first.MonthlyPrice != 800 || *first.YearlyPrice != 8000 || first.YearlySaving != 1600 || first.YearlySavingPercent != 17 {
			t.Fatalf("first tier prices: %+v", first)
		}
		if got.Tiers[1].TrialDays != 7 || got.Tiers[2].MonthlyPrice != nil || *got.Tiers[2].YearlyPrice != 10000 {
			t.Fatalf("tier 2/3: %+v %+v", got.Tiers[1], got.Tiers[2])
		}
		if got.Current != nil || got.Status != nil {
			t.Fatalf("a visitor has a tier: %+v", got)
		}

		// A new tier goes last; a draft is not listed; a tier without a
		// price cannot go on sale.
		r := f.ts.do(t, "POST", "/apps/demo/studio/plans", strings.NewReader("name=Patron&monthlyPrice=30&yearlyPrice=300&trialDays=14&state=DRAFT&benefits=Dinner"), f.creator)
		if r.Status != 303 {
			t.Fatalf("new tier: %d %.300s", r.Status, r.Body)
		}
		plans := f.studioTiers(t)
		patron := plans[len(plans)-1]
		if patron.Name != "Patron" || patron.Rank != 4 || patron.State != store.TierDraft || patron.TrialDays != 14 || *patron.YearlyPrice != 30000 {
			t.Fatalf("patron: %+v", patron)
		}
		if n := names(f.tiersAPI(t, nil).Tiers); strings.Contains(n, "Patron") {
			t.Fatalf("a draft is listed: %s", n)
		}
		if r := f.ts.do(t, "POST", "/apps/demo/studio/plans", strings.NewReader("name=Free&state=ON_SALE"), f.creator); r.Status != 400 || !strings.Contains(r.Body, "Choose a billing cycle") {
			t.Fatalf("on sale without a price: %d", r.Status)
		}
		if r := f.ts.do(t, "POST", "/apps/demo/studio/plans/"+patron.ItemID+"/state", strings.NewReader("state=ON_SALE"), f.creator); r.Status != 303 {
			t.Fatalf("on sale: %d", r.Status)
		}
		// Patron moves up twice: above Backstage Pass and Producer's Room.
		for i := 0; i < 2; i++ {
			if r := f.ts.do(t, "POST", "/apps/demo/studio/plans/"+patron.ItemID+"/move", strings.NewReader("direction=up"), f.creator); r.Status != 303 {
				t.Fatalf("move: %d", r.Status)
			}
		}
		if n := names(f.tiersAPI(t, nil).Tiers); n != "1:Studio Circle Membership,2:Patron,3:Backstage Pass,4:Producer's Room" {
			t.Fatalf("after moving: %s", n)
		}
		// Archived: off the list, its rank kept for its members.
		if r := f.ts.do(t, "POST", "/apps/demo/studio/plans/"+patron.ItemID+"/archive", nil, f.creator); r.Status != 303 {
			t.Fatalf("archive: %d", r.Status)
		}
		if n := names(f.tiersAPI(t, nil).Tiers); strings.Contains(n, "Patron") {
			t.Fatalf("an archived tier is listed: %s", n)
		}
		page := f.ts.do(t, "GET", "/apps/demo/studio/plans", nil, f.creator)
		if !strings.Contains(page.Body, "Membership tiers") || !strings.Contains(page.Body, `data-state="ARCHIVED"`) || !strings.Contains(page.Body, "Move Backstage Pass up") {
			t.Fatalf("the tiers editor: %.500s", page.Body)
		}
	})
}

// A DRAFT or ARCHIVED tier is bought by no path, and shown on no public
// one; a wallet with money for it is never charged.
func TestOffSaleTiersCannotBeBought(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		for _, state := range []string{store.TierDraft, store.TierArchived} {
			monthly := int64(600)
			it, err := f.ts.store.SavePlan(ctx, f.shop, "", "", store.PlanInput{Name: "Hidden " + state, MonthlyPrice: &monthly,
				Benefits: []string{"Secret benefit " + state}})
			if err != nil {
				t.Fatal(err)
			}
			// A fan puts it in a cart while it is on sale (the store call:
			// the HTTP cart refuses every tier), then it goes off sale.
			userID, session := f.fan(t, "offsale-"+strings.ToLower(state), 100_00)
			if _, err := f.ts.store.AddToCart(ctx, f.shop, userID, it.ID, nil, 1); err != nil {
				t.Fatal(err)
			}
			pending, err := f.ts.store.CreateTierOrder(ctx, f.app.ID, userID, it.ID, "", store.WalletMethod)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.ts.store.SetTierState(ctx, f.app.ID, "", it.ID, state); err != nil {
				t.Fatal(err)
			}
			fanJSON, fanForm := jsonHeaders(withSession(session)), form(withSession(session))
			cart, err := f.ts.store.Cart(ctx, f.shop, userID)
			if err != nil {
				t.Fatal(err)
			}
			paths := []struct {
				name   string
				method string
				path   string
				body   string
				h      map[string]string
				want   int
			}{
				{"plan checkout page", "GET", "/apps/demo/checkout/plan/" + it.ID, "", fanForm, 404},
				{"plan checkout form", "POST", "/apps/demo/checkout/plan/" + it.ID, "cycle=MONTHLY", fanForm, 404},
				{"JSON subscribe", "POST", "/api/subscriptions/apps/demo/subscribe", `{"itemId":"` + it.ID + `","paymentMethod":"musepay"}`, fanJSON, 404},
				{"JSON subscribe, crafted cycle", "POST", "/api/subscriptions/apps/demo/subscribe", `{"itemId":"` + it.ID + `","paymentMethod":"musepay","cycle":"MONTHLY"}`, fanJSON, 404},
				{"cart add API", "POST", "/api/store/" + f.shop.ID + "/cart/items", `{"storeItemId":"` + it.ID + `","quantity":1}`, fanJSON, 400},
				{"cart add form", "POST", "/apps/demo/cart/items", "storeItemId=" + it.ID + "&quantity=1", fanForm, 303},
				{"cart checkout (already in the cart)", "POST", "/api/store/" + f.shop.ID + "/orders/checkout", `{"cartId":"` + cart.ID + `","paymentMethod":"musepay"}`, fanJSON, -1},
				{"pay a pending order with the wallet", "POST", "/api/store/" + f.shop.ID + "/musepay/process", `{"orderId":"` + pending.ID + `"}`, fanJSON, -1},
			}
			for _, p := range paths {
				var body *strings.Reader
				if p.body != "" {
					body = strings.NewReader(p.body)
				}
				var r response
				if body != nil {
					r = f.ts.do(t, p.method, p.path, body, p.h)
				} else {
					r = f.ts.do(t, p.method, p.path, nil, p.h)
				}
				if (p.want > 0 && r.Status != p.want) || (p.want < 0 && r.Status < 400) {
					t.Errorf("%s, %s: %d, want %d: %.300s", state, p.name, r.Status, p.want, r.Body)
				}
			}
			if ok, _ := f.ts.store.HasValidSubscription(ctx, f.app.ID, userID, time.Now()); ok {
				t.Errorf("%s: a tier off sale was granted", state)
			}
			if bal, _ := f.ts.store.WalletBalance(ctx, f.app.ID, userID); bal != 100_00 {
				t.Errorf("%s: the wallet was charged: %d", state, bal)
			}
			// Never shown publicly: membership page, tiers API, store,
			// item page, sitemap, landing (JSON-LD included).
			for _, path := range []string{"/apps/demo/membership", "/api/memberships/apps/demo/tiers", "/apps/demo/store",
				"/api/store/" + f.shop.ID + "/items", "/apps/demo/sitemap.xml", "/apps/demo", "/api/app/demo/landing"} {
				r := f.ts.do(t, "GET", path, nil, withSession(session))
				if strings.Contains(r.Body, "Hidden "+state) || strings.Contains(r.Body, it.ID) {
					t.Errorf("%s: %s shows the tier", state, path)
				}
			}
			if r := f.ts.do(t, "GET", "/api/store/items/"+it.ID, nil, withSession(session)); r.Status != 404 {
				t.Errorf("%s: the item API answers %d", state, r.Status)
			}
			if r := f.ts.do(t, "GET", "/apps/demo/store/items/"+it.ID, nil, withSession(session)); (r.Status != 302 && r.Status != 404) || strings.Contains(r.Body, "Hidden") {
				t.Errorf("%s: the item page answers %d", state, r.Status)
			}
		}
	})
}

// Members of an archived tier keep it (and see it as theirs on the
// membership page, with Cancel); nobody new can join it.
func TestArchivedTierKeepsItsMembers(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		backstage := f.tiers[1]
		userID, session := f.fan(t, "keeper", 100_00)
		h := jsonHeaders(withSession(session))
		if r := f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", strings.NewReader(`{"itemId":"`+backstage.ItemID+`","paymentMethod":"musepay"}`), h); r.Status != 200 {
			t.Fatalf("join: %d %s", r.Status, r.Body)
		}
		if r := f.ts.do(t, "POST", "/apps/demo/studio/plans/"+backstage.ItemID+"/archive", nil, f.creator); r.Status != 303 {
			t.Fatalf("archive: %d", r.Status)
		}
		if ok, _ := f.ts.store.HasValidSubscription(ctx, f.app.ID, userID, time.Now()); !ok {
			t.Fatal("archiving ended the membership")
		}
		got := f.tiersAPI(t, withSession(session))
		if got.Current == nil || got.Current.ID != backstage.ID || got.Current.State != store.TierArchived || len(got.Tiers) != 2 {
			t.Fatalf("member's view: %+v", got)
		}
		page := f.ts.do(t, "GET", "/apps/demo/membership", nil, withSession(session))
		if !strings.Contains(page.Body, "Your tier") || !strings.Contains(page.Body, "Backstage Pass") || !strings.Contains(page.Body, `action="/apps/demo/membership/cancel"`) {
			t.Fatalf("membership page of an archived tier's member: %.600s", page.Body)
		}
		// Renewal keeps it too: the wallet renews an archived tier.
		plans := f.studioTiers(t)
		for _, p := range plans {
			if p.ItemID == backstage.ItemID && (p.Members != 1 || !p.Archived) {
				t.Fatalf("studio: %+v", p)
			}
		}
		_, other := f.fan(t, "latecomer", 100_00)
		if r := f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", strings.NewReader(`{"itemId":"`+backstage.ItemID+`","paymentMethod":"musepay"}`),
			jsonHeaders(withSession(other))); r.Status != 404 {
			t.Fatalf("joined an archived tier: %d", r.Status)
		}
	})
}

// The membership page works without JavaScript: plain GET and POST forms
// take a follower from Join (yearly) to their tier, show Upgrade and
// Downgrade for the others, and Cancel.
func TestMembershipPageWithoutJavaScript(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		f.noTrials(t) // a paid join (trials: TestFreeTrial)
		userID, session := f.fan(t, "nojs", 200_00)
		h := form(withSession(session))
		backstage := f.tiers[1]

		visitor := f.ts.do(t, "GET", "/apps/demo/membership", nil, nil)
		if visitor.Status != 200 || strings.Count(visitor.Body, `class="tier"`) != 3 || !strings.Contains(visitor.Body, "/authenticate/signin") {
			t.Fatalf("visitor's membership page: %d %.400s", visitor.Status, visitor.Body)
		}
		page := f.ts.do(t, "GET", "/apps/demo/membership", nil, h)
		join := `action="/apps/demo/checkout/plan/` + backstage.ItemID + `"`
		if !strings.Contains(page.Body, join) || !strings.Contains(page.Body, "Join yearly") || !strings.Contains(page.Body, "Save $16.00 (17%)") ||
			strings.Contains(page.Body, "Upgrade") {
			t.Fatalf("follower's membership page: %.800s", page.Body)
		}
		// The GET form of Join yearly.
		checkout := f.ts.do(t, "GET", "/apps/demo/checkout/plan/"+backstage.ItemID+"?cycle=YEARLY", nil, h)
		if checkout.Status != 200 || !strings.Contains(checkout.Body, "$150.00") || !strings.Contains(checkout.Body, `name="cycle" value="YEARLY"`) {
			t.Fatalf("yearly checkout: %d %.600s", checkout.Status, checkout.Body)
		}
		r := f.ts.do(t, "POST", "/apps/demo/checkout/plan/"+backstage.ItemID, strings.NewReader("cycle=YEARLY"), h)
		if r.Status != 303 {
			t.Fatalf("pay: %d %.300s", r.Status, r.Body)
		}
		sub, err := f.ts.store.SubscriptionOf(ctx, f.app.ID, userID)
		if err != nil || sub == nil || sub.PlanID != backstage.ID || sub.Cycle != store.CycleYearly || sub.Amount != 15000 ||
			sub.CurrentPeriodEnd.Before(time.Now().AddDate(0, 11, 0)) {
			t.Fatalf("subscription: %+v %v", sub, err)
		}
		if bal, _ := f.ts.store.WalletBalance(ctx, f.app.ID, userID); bal != 200_00-150_00 {
			t.Fatalf("balance %d", bal)
		}
		page = f.ts.do(t, "GET", "/apps/demo/membership", nil, h)
		if !strings.Contains(page.Body, "Your tier") || !strings.Contains(page.Body, "Upgrade") || !strings.Contains(page.Body, "Downgrade") ||
			strings.Contains(page.Body, "Join") {
			t.Fatalf("member's membership page: %.800s", page.Body)
		}
		r = f.ts.do(t, "POST", "/apps/demo/membership/cancel", strings.NewReader("cancel=1"), h)
		if r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), "/apps/demo/membership?notice=canceled") {
			t.Fatalf("cancel: %d %v", r.Status, r.Header)
		}
		page = f.ts.do(t, "GET", "/apps/demo/membership?notice=canceled", nil, h)
		if !strings.Contains(page.Body, "will end at the end of the current period") || !strings.Contains(page.Body, "Keep membership") {
			t.Fatalf("after cancel: %.600s", page.Body)
		}
		if sub, _ := f.ts.store.SubscriptionOf(ctx, f.app.ID, userID); !sub.CancelAtPeriodEnd {
			t.Fatal("not cancelled at period end")
		}
		// The store and the landing lead here.
		for _, path := range []string{"/apps/demo/store", "/apps/demo"} {
			if r := f.ts.do(t, "GET", path, nil, h); !strings.Contains(r.Body, `href="/apps/demo/membership"`) {
				t.Errorf("%s does not link the membership page", path)
			}
		}
	})
}

// 60 joins at once, three for each of 20 fans (one for each tier): every
// fan ends with exactly one membership row holding one of the tiers, and
// is SUBSCRIBER.
func TestConcurrentJoinsGiveOneTierEach(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		f := newTierFixture(t, db)
		ctx := context.Background()
		type fan struct{ id, session string }
		fans := make([]fan, 20)
		for i := range fans {
			fans[i].id, fans[i].session = f.fan(t, fmt.Sprintf("crowd%d", i), 500_00)
		}
		var wg sync.WaitGroup
		for _, fn := range fans {
			for _, tier := range f.tiers {
				wg.Add(1)
				go func(fn fan, itemID string) {
					defer wg.Done()
					f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", strings.NewReader(`{"itemId":"`+itemID+`","paymentMethod":"musepay"}`),
						jsonHeaders(withSession(fn.session)))
				}(fn, tier.ItemID)
			}
		}
		wg.Wait()
		tierIDs := map[string]bool{}
		for _, x := range f.tiers {
			tierIDs[x.ID] = true
		}
		for _, fn := range fans {
			var subs []store.Subscription
			if err := f.ts.store.DB().NewSelect().Model(&subs).Where("app_id = ? AND user_id = ?", f.app.ID, fn.id).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			if len(subs) != 1 || !tierIDs[subs[0].PlanID] {
				t.Fatalf("fan %s holds %d memberships: %+v", fn.id, len(subs), subs)
			}
			m, err := f.ts.store.MembershipOf(ctx, f.app.ID, fn.id)
			if err != nil || m == nil || m.Role != store.RoleSubscriber {
				t.Fatalf("fan %s: %+v %v", fn.id, m, err)
			}
		}
	})
}
