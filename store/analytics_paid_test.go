package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// paidApp makes an app with two tiers on sale, Circle ($8 a month) and
// Pass ($15 a month), and answers the app, its creator and the tiers.
func paidApp(t *testing.T, db *bun.DB, s *store.Storage, name string) (string, string, []store.Tier) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	u := &store.User{ID: store.NewID(), Username: name + "owner", Email: name + "owner@paid.test", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
	if _, err := db.NewInsert().Model(u).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	app, err := s.CreateAppWith(ctx, store.NewApp{Name: name, DisplayName: name, CreatorID: u.ID})
	if err != nil {
		t.Fatal(err)
	}
	shop, err := s.ShopOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name  string
		price int64
	}{{"Circle", 800}, {"Pass", 1500}} {
		price := p.price
		if _, err := s.SavePlan(ctx, shop, u.ID, "", store.PlanInput{Name: p.name, MonthlyPrice: &price, TrialDays: 7, TrialCardRequired: true}); err != nil {
			t.Fatal(err)
		}
	}
	tiers, err := s.Tiers(ctx, app.ID)
	if err != nil || len(tiers) != 2 {
		t.Fatalf("tiers: %+v %v", tiers, err)
	}
	return app.ID, u.ID, tiers
}

// Paid members by tier over the last 12 months and their churn (issue 40
// item 6), from a known role history: each month's count at its end, the
// members paying at its start and how many of those stopped paying in it
// (an upgrade is no leaving; leaving and coming back in a month is one
// leaving; a trial and a gift are no paid membership), on PostgreSQL and
// SQLite.
func TestPaidMembersByTierAndChurn(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		s := seeded(t, db, store.NewMemoryCache())
		ctx := context.Background()
		appID, _, tiers := paidApp(t, db, s, "paidhist")
		circle, pass := tiers[0].ID, tiers[1].ID
		now := time.Now().UTC()
		first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -11, 0)
		at := func(month, day int) time.Time { return first.AddDate(0, month, day-1).Add(9 * time.Hour) }
		line := func(user, role, tier string, when time.Time) {
			t.Helper()
			if _, err := db.NewInsert().Model(&store.RoleChange{ID: store.NewID(), AppID: appID, UserID: user, Role: role, TierID: tier, CreatedAt: when}).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		a, b, c, d, e := store.NewID(), store.NewID(), store.NewID(), store.NewID(), store.NewID()
		line(a, store.RoleFollower, "", at(0, 5))
		line(a, store.RoleSubscriber, circle, at(0, 6))
		line(c, store.RoleSubscriber, pass, at(1, 8))
		line(b, store.RoleSubscriber, circle, at(2, 3))
		line(a, store.RoleSubscriber, pass, at(3, 10)) // an upgrade
		line(d, store.RoleSubscriber, "", at(5, 4))    // a free trial...
		line(d, store.RoleSubscriber, pass, at(5, 11)) // ...converted
		line(b, store.RoleFollower, "", at(6, 2))      // leaves...
		line(a, store.RoleFollower, "", at(6, 15))
		line(b, store.RoleSubscriber, circle, at(6, 20)) // ...and comes back
		line(e, store.RoleSubscriber, "", at(6, 25))     // a gift
		line(d, "", "", at(8, 9))                        // leaves the app
		a2, err := s.AppAnalytics(ctx, appID, store.AnalyticsRange{From: now.AddDate(0, 0, -1), To: now.AddDate(0, 0, 1), Bucket: store.BucketDay})
		if err != nil {
			t.Fatal(err)
		}
		type want struct{ circle, pass, atStart, left int }
		wants := []want{
			{1, 0, 0, 0}, {1, 1, 1, 0}, {2, 1, 2, 0}, {1, 2, 3, 0}, {1, 2, 3, 0}, {1, 3, 3, 0},
			{1, 2, 4, 2}, {1, 2, 3, 0}, {1, 1, 3, 1}, {1, 1, 2, 0}, {1, 1, 2, 0}, {1, 1, 2, 0},
		}
		if len(a2.PaidHistory) != len(wants) {
			t.Fatalf("%d months, want %d", len(a2.PaidHistory), len(wants))
		}
		for i, w := range wants {
			m := a2.PaidHistory[i]
			label := first.AddDate(0, i, 0).Format("2006-01")
			wantTiers := []store.TierCount{{TierID: circle, Name: "Circle", Paid: w.circle}, {TierID: pass, Name: "Pass", Paid: w.pass}}
			churn := 0.0
			if w.atStart > 0 {
				churn = float64(w.left) / float64(w.atStart)
			}
			if m.Month != label || m.Paid != w.circle+w.pass || !reflect.DeepEqual(m.ByTier, wantTiers) || m.AtStart != w.atStart ||
				m.Left != w.left || m.Churn != churn {
				t.Errorf("month %d: got %+v, want %s %+v churn %v", i, m, label, w, churn)
			}
		}
		if a2.PaidHistory[6].Churn != 0.5 || a2.PaidHistory[8].Churn != 1.0/3 {
			t.Errorf("churn: %v %v", a2.PaidHistory[6].Churn, a2.PaidHistory[8].Churn)
		}
	})
}

// The MRR counts a card membership bought with a first-month code at the
// discounted price for its first month and at the full price once Stripe
// renewed it (the renewal steps the code on as the wallet's does); the role
// history follows the paid tier (a line on the paid join, one on the
// upgrade).
func TestMRRAfterDiscountEnds(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	s := seeded(t, db, store.NewMemoryCache())
	ctx := context.Background()
	appID, owner, tiers := paidApp(t, db, s, "mrrdisc")
	now := time.Now().UTC()
	fan := &store.User{ID: store.NewID(), Username: "mrrfan", Email: "mrrfan@paid.test", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
	if _, err := db.NewInsert().Model(fan).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	offer, err := s.CreateOffer(ctx, appID, owner, store.OfferInput{Code: "HALFMONTH", PercentOff: 50, Duration: store.OfferRepeating, DurationMonths: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	plan := &store.SubscriptionPlan{ID: tiers[0].ID, AppID: appID, BillingCycle: store.CycleMonthly}
	var sub *store.Subscription
	if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		sub, err = store.StartSubscription(ctx, tx, appID, fan.ID, plan, 400, "USD", "stripe", "sub_mrr", nil, now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewUpdate().Model((*store.Subscription)(nil)).Set("offer_id = ?, list_amount = 800, discount_left = 0", offer.ID).
		Where("id = ?", sub.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	mrr := func() int64 {
		t.Helper()
		a, err := s.AppAnalytics(ctx, appID, store.AnalyticsRange{From: now.AddDate(0, 0, -1), To: now.AddDate(0, 0, 1), Bucket: store.BucketDay})
		if err != nil {
			t.Fatal(err)
		}
		return a.Recurring.MRR
	}
	if got := mrr(); got != 400 {
		t.Fatalf("MRR in the discounted month: %d, want 400", got)
	}
	ev := &store.PaymentEvent{Provider: "stripe", EventID: "evt_mrr_1", Type: "invoice.paid", PaymentRef: "sub_mrr", Amount: 800, Currency: "USD"}
	if _, _, err := s.ApplyProviderRenewalEvent(ctx, ev, "sub_mrr", "paid", sub.CurrentPeriodEnd.AddDate(0, 1, 0), 0); err != nil {
		t.Fatal(err)
	}
	if got := mrr(); got != 800 {
		t.Fatalf("MRR after the discount ended: %d, want 800", got)
	}
	hist, err := s.RoleHistory(ctx, appID)
	if err != nil {
		t.Fatal(err)
	}
	var fanLines []store.RoleChange
	for _, h := range hist {
		if h.UserID == fan.ID {
			fanLines = append(fanLines, h)
		}
	}
	if len(fanLines) != 1 || fanLines[0].Role != store.RoleSubscriber || fanLines[0].TierID != tiers[0].ID {
		t.Fatalf("the fan's history: %+v", fanLines)
	}
}

// A card trial (a Stripe subscription in its trial) ends as Stripe says:
// the first invoice paid converts it (a paid member at the tier's price,
// the trial marked converted, the role history's paid tier from then), a
// failed first charge or a subscription deleted before it returns the
// member to follower at once (no grace) and marks the trial ended unpaid.
func TestCardTrialEnds(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	s := seeded(t, db, store.NewMemoryCache())
	ctx := context.Background()
	appID, _, tiers := paidApp(t, db, s, "cardtrial")
	var itemID string
	if err := db.NewSelect().Table("subscription_plans").Column("store_item_id").Where("id = ?", tiers[0].ID).Scan(ctx, &itemID); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i, tc := range []struct {
		event     string
		role      string
		status    string
		converted bool
	}{
		{"paid", store.RoleSubscriber, store.SubActive, true},
		{"failed", store.RoleFollower, store.SubExpired, false},
		{"ended", store.RoleFollower, store.SubExpired, false},
	} {
		u := &store.User{ID: store.NewID(), Username: "cardtrial" + tc.event, Email: tc.event + "@cardtrial.test", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
		if _, err := db.NewInsert().Model(u).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartTrial(ctx, store.TrialStart{AppID: appID, UserID: u.ID, ItemID: itemID, Method: "musepay"}, now); err != store.ErrTrialNeedsCard {
			t.Fatalf("a card trial on the wallet: %v", err)
		}
		sub, err := s.StartTrial(ctx, store.TrialStart{AppID: appID, UserID: u.ID, ItemID: itemID, Method: "stripe"}, now)
		if err != nil {
			t.Fatal(err)
		}
		ref := "sub_trial_" + tc.event
		if _, err := db.NewUpdate().Table("subscriptions").Set("provider_ref = ?", ref).Where("id = ?", sub.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		ev := &store.PaymentEvent{Provider: "stripe", EventID: "evt_trial_" + tc.event, Type: "invoice." + tc.event, PaymentRef: ref, Amount: 800, Currency: "USD"}
		for range 2 { // a repeated delivery changes nothing
			if _, _, err := s.ApplyProviderRenewalEvent(ctx, ev, ref, tc.event, sub.CurrentPeriodEnd.AddDate(0, 1, 0), 0); err != nil {
				t.Fatal(err)
			}
		}
		after, _ := s.SubscriptionOf(ctx, appID, u.ID)
		m, _ := s.MembershipOf(ctx, appID, u.ID)
		if after.Status != tc.status || m.Role != tc.role || (tc.converted && (after.TrialUntil != nil || after.Amount != 800)) {
			t.Fatalf("%s: %+v role %s", tc.event, after, m.Role)
		}
		col := "ended_at"
		if tc.converted {
			col = "converted_at"
		}
		if n, _ := db.NewSelect().Table("trials").Where("user_id = ? AND "+col+" IS NOT NULL", u.ID).Count(ctx); n != 1 {
			t.Fatalf("%s: the trial is not marked (%s)", tc.event, col)
		}
		a, err := s.AppAnalytics(ctx, appID, store.AnalyticsRange{From: now.AddDate(0, 0, -1), To: now.AddDate(0, 0, 1), Bucket: store.BucketDay})
		if err != nil {
			t.Fatal(err)
		}
		if a.TrialsAndOffers.TrialsStarted != i+1 || a.Recurring.Paid != 1 || a.Recurring.MRR != 800 || a.PaidHistory[len(a.PaidHistory)-1].Paid != 1 {
			t.Fatalf("%s: analytics %+v %+v %+v", tc.event, a.TrialsAndOffers, a.Recurring, a.PaidHistory[len(a.PaidHistory)-1])
		}
	}
}
