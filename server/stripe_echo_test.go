package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"marquee/store"
)

// Stripe's webhooks come when they come: the echo of an upgrade may reach
// the server before Stripe's answer to the update does, and a late echo
// may come after the change that followed it. Neither moves the membership
// away from what the member asked for: an upgrade with a code keeps the
// code's price though its echo (which knows the list price only) was
// applied first, and an upgrade's echo delivered after the downgrade that
// followed it leaves the downgrade waiting.
func TestStripeEchoesOutOfOrder(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	var (
		f     *payFixture
		early atomic.Bool // deliver a change's events before Stripe answers it
		seen  atomic.Int64
	)
	// deliverNew sends Stripe's events since the last call (t.Errorf: it
	// runs in the proxy's goroutine too).
	deliverNew := func(t *testing.T) {
		evs := f.stripe.Events()
		for _, ev := range evs[seen.Swap(int64(len(evs))):] {
			if r := stripeHook(t, f, ev.Payload, ev.Header); r.Status != 200 {
				t.Errorf("%s: %d %s", ev.Type, r.Status, r.Body)
			}
		}
	}
	f = newPayFixture(t, db, func(cfg *Config) {
		upstream, err := url.Parse(cfg.Stripe.APIBase)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(upstream)
		proxy.ModifyResponse = func(res *http.Response) error {
			// Stripe has moved the subscription; its webhook arrives
			// before its answer does.
			req := res.Request
			if early.Load() && req.Method == http.MethodPost && strings.HasPrefix(req.URL.Path, "/v1/subscriptions/") && res.StatusCode == 200 {
				deliverNew(t)
			}
			return nil
		}
		front := httptest.NewServer(proxy)
		t.Cleanup(front.Close)
		cfg.Stripe.APIBase = front.URL
	})
	ctx := context.Background()
	tiers, err := f.ts.store.StudioPlans(ctx, f.demo.ID)
	if err != nil || len(tiers) != 3 {
		t.Fatalf("tiers: %v %v", tiers, err)
	}
	circle, backstage := tiers[0], tiers[1]
	if _, err := f.ts.store.CreateOffer(ctx, f.demo.ID, f.userID(t, "creator@demo.test"),
		store.OfferInput{Code: "HALFECHO", PercentOff: 50, Duration: store.OfferRepeating, DurationMonths: 1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	sub := joinByCard(t, f, as, uid, circle.ItemID)
	ref := sub().ProviderRef
	seen.Store(int64(len(f.stripe.Events())))

	// The upgrade with the code: its echo is applied before the answer.
	early.Store(true)
	if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": backstage.ItemID, "code": "halfecho"}), as); r.Status != 200 {
		t.Fatalf("upgrade: %d %s", r.Status, r.Body)
	}
	early.Store(false)
	var echoed int
	if err := db.NewSelect().Table("payment_events").ColumnExpr("count(*)").Where("type = 'customer.subscription.updated' AND outcome = ?", store.OutcomeTierChanged).Scan(ctx, &echoed); err != nil {
		t.Fatal(err)
	}
	if echoed != 1 {
		t.Fatalf("the upgrade's echo was not applied before the answer (%d applied)", echoed)
	}
	if s := sub(); s.PlanID != backstage.ID || s.Amount != 750 || s.ListAmount != 1500 || s.OfferID == nil || s.NextPlanID != nil {
		t.Fatalf("after the upgrade with its echo first: %+v", s)
	}
	// What the upgrade's echo says, had it been late.
	upgraded := f.stripe.Subscription(ref)

	// The downgrade, then the upgrade's echo.
	if r := f.ts.do(t, "POST", "/api/memberships/apps/"+f.demo.ID+"/change", body(map[string]any{"itemId": circle.ItemID}), as); r.Status != 200 {
		t.Fatalf("downgrade: %d %s", r.Status, r.Body)
	}
	deliverNew(t) // the downgrade's own echo
	late := f.stripe.Event("customer.subscription.updated", upgraded)
	if r := stripeHook(t, f, late.Payload, late.Header); r.Status != 200 {
		t.Fatalf("late echo: %d %s", r.Status, r.Body)
	}
	if s := sub(); s.PlanID != backstage.ID || s.Amount != 750 || s.NextPlanID == nil || *s.NextPlanID != circle.ID {
		t.Fatalf("a late echo moved the membership: %+v", s)
	}
}
