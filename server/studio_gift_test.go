package server

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store"
)

// Complimentary memberships (issue 40 item 5): the creator gives a member
// a tier for some months or for good, from the studio form (no JavaScript)
// and the JSON call; the member reads what the tier opens, pays nothing,
// is told, and the audit log has it. Only the creator gives; a paying
// member, a stranger, a draft tier and a length out of range are refused
// clearly; 50 gifts at once leave one membership; ending a gift, or its
// time running out (the renewal job), makes the member a follower again.
func TestComplimentaryMemberships(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ts := f.ts
	ctx := context.Background()
	fanID, fanSession := f.fan(t, "giftee", 0)
	creator := withSession(sessionFor(t, ts, "creator@demo.test"))
	api := func(method, userID, body string, h map[string]string) response {
		return ts.do(t, method, "/api/studio/apps/demo/members/"+userID+"/gift", strings.NewReader(body), jsonHeaders(h))
	}

	// The studio form, without JavaScript: three months of the second tier.
	page := ts.do(t, "GET", "/apps/demo/studio/members", nil, creator)
	if !strings.Contains(page.Body, `action="/apps/demo/studio/members/`+fanID+`/gift"`) || !strings.Contains(page.Body, "Give a membership") {
		t.Fatalf("the members screen has no gift form")
	}
	seeOther(t, ts.do(t, "POST", "/apps/demo/studio/members/"+fanID+"/gift", strings.NewReader("tierId="+f.tiers[1].ID+"&months=3"),
		form(creator)), "/apps/demo/studio/members?notice=gift-given")
	sub, err := ts.store.SubscriptionOf(ctx, f.app.ID, fanID)
	if err != nil || sub == nil {
		t.Fatalf("no membership: %v", err)
	}
	want := time.Now().AddDate(0, 3, 0)
	if sub.Provider != store.CompProvider || sub.Amount != 0 || sub.PlanID != f.tiers[1].ID || sub.Status != store.SubActive ||
		sub.CurrentPeriodEnd.Before(want.Add(-time.Hour)) || sub.CurrentPeriodEnd.After(want.Add(time.Hour)) {
		t.Fatalf("the gift: %+v", sub)
	}
	if m, _ := ts.store.MembershipOf(ctx, f.app.ID, fanID); m == nil || m.Role != store.RoleSubscriber {
		t.Fatalf("the member's role: %+v", m)
	}
	if r, _ := ts.store.ReaderOf(ctx, f.app.ID, fanID, store.RoleSubscriber, time.Now()); !r.Member || r.Rank != f.tiers[1].Rank {
		t.Fatalf("the member reads as %+v", r)
	}
	if bal, err := ts.store.WalletBalance(ctx, f.app.ID, fanID); err != nil || bal != 0 {
		t.Fatalf("a gift moved money: %d %v", bal, err)
	}
	notes := ts.do(t, "GET", "/api/notifications/unread/"+f.app.ID+"?page=1&limit=20", nil, withSession(fanSession))
	if !strings.Contains(notes.Body, "gave you a Backstage Pass membership") {
		t.Fatalf("the member was not told: %s", notes.Body)
	}
	if page := ts.do(t, "GET", "/apps/demo/studio/members", nil, creator); !strings.Contains(page.Body, "Backstage Pass (gift, active)") {
		t.Fatalf("the members screen does not show the gift")
	}
	var audit int64
	if audit, err = ts.store.DB().NewSelect().Table("moderation_log").Where("app_id = ? AND action = ? AND target_id = ?", f.app.ID, "membership.give", fanID).Count(ctx); err != nil || audit != 1 {
		t.Fatalf("audit lines: %d %v", audit, err)
	}

	// Refusals, each said clearly.
	for _, tc := range []struct {
		name, user, body string
		h                map[string]string
		status           int
		says             string
	}{
		{"an admin", fanID, `{"tierId":"` + f.tiers[0].ID + `","months":1}`, withSession(sessionFor(t, ts, "admin@demo.test")), 403, "Only the creator"},
		{"a paying member", userID(t, ts, "subscriber@demo.test"), `{"tierId":"` + f.tiers[0].ID + `","months":1}`, creator, 409, "pays for a membership"},
		{"a stranger", userID(t, ts, "member@demo.test"), `{"tierId":"` + f.tiers[0].ID + `","months":1}`, creator, 404, "Member not found"},
		{"another app's tier", fanID, `{"tierId":"nope","months":1}`, creator, 400, "Choose one of the app's tiers"},
		{"too long", fanID, `{"tierId":"` + f.tiers[0].ID + `","months":500}`, creator, 400, "between 1 and 120"},
		{"no length", fanID, `{"tierId":"` + f.tiers[0].ID + `"}`, creator, 400, "months is required"},
	} {
		r := api("POST", tc.user, tc.body, tc.h)
		if r.Status != tc.status || !strings.Contains(r.Body, tc.says) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
		}
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/members/"+fanID+"/gift", strings.NewReader("tierId="+f.tiers[0].ID+"&months=many"), form(creator)); r.Status != 400 || !strings.Contains(r.Body, "Choose how many months") {
		t.Errorf("a refused form: %d", r.Status)
	}

	// 50 gifts at once (for good, the first tier): one membership, given.
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			statuses[i] = api("POST", fanID, `{"tierId":"`+f.tiers[0].ID+`","months":0}`, creator).Status
		}(i)
	}
	wg.Wait()
	for i, st := range statuses {
		if st != 200 {
			t.Fatalf("gift %d answered %d", i, st)
		}
	}
	if n, _ := ts.store.DB().NewSelect().Table("subscriptions").Where("app_id = ? AND user_id = ?", f.app.ID, fanID).Count(ctx); n != 1 {
		t.Fatalf("%d memberships after 50 gifts", n)
	}
	if sub, _ = ts.store.SubscriptionOf(ctx, f.app.ID, fanID); sub.PlanID != f.tiers[0].ID || sub.CurrentPeriodEnd.Before(time.Now().AddDate(50, 0, 0)) {
		t.Fatalf("the gift for good: %+v", sub)
	}

	// Ending it: a follower again; a second end finds nothing.
	if r := api("DELETE", fanID, "", creator); r.Status != 200 {
		t.Fatalf("end: %d %s", r.Status, r.Body)
	}
	if m, _ := ts.store.MembershipOf(ctx, f.app.ID, fanID); m.Role != store.RoleFollower {
		t.Fatalf("after the end: %s", m.Role)
	}
	if r := api("DELETE", fanID, "", creator); r.Status != 404 || !strings.Contains(r.Body, "no gift to end") {
		t.Fatalf("second end: %d %s", r.Status, r.Body)
	}

	// A month's gift runs out: the renewal job ends it, charging nothing.
	if r := api("POST", fanID, `{"tierId":"`+f.tiers[0].ID+`","months":1}`, creator); r.Status != 200 {
		t.Fatalf("regive: %d %s", r.Status, r.Body)
	}
	sub, _ = ts.store.SubscriptionOf(ctx, f.app.ID, fanID)
	if _, err := ts.store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: sub.CurrentPeriodEnd.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	sub, _ = ts.store.SubscriptionOf(ctx, f.app.ID, fanID)
	m, _ := ts.store.MembershipOf(ctx, f.app.ID, fanID)
	if sub.Status != store.SubExpired || m.Role != store.RoleFollower {
		t.Fatalf("after its time: %s %s", sub.Status, m.Role)
	}
	if n, _ := ts.store.DB().NewSelect().Table("moderation_log").Where("app_id = ? AND action LIKE ?", f.app.ID, "membership.%").Count(ctx); n != 53 {
		t.Fatalf("audit lines for 52 gifts and an end: %d", n)
	}
}

// The members screen filters by tier (issue 40 item 6): the JSON call and
// the page without JavaScript list only the members holding the tier, paid
// or given, and the page's tier select keeps the choice.
func TestStudioMembersByTier(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ts := f.ts
	creator := withSession(sessionFor(t, ts, "creator@demo.test"))
	fanID, _ := f.fan(t, "tiertwofan", 0)
	if r := ts.do(t, "POST", "/api/studio/apps/demo/members/"+fanID+"/gift", strings.NewReader(`{"tierId":"`+f.tiers[1].ID+`","months":1}`), jsonHeaders(creator)); r.Status != 200 {
		t.Fatalf("gift: %d %s", r.Status, r.Body)
	}
	list := func(tier string) []string {
		t.Helper()
		var got struct{ Data StudioMembers }
		commJSON(t, ts.do(t, "GET", "/api/studio/apps/demo/members?tier="+tier, nil, creator), &got)
		var names []string
		for _, m := range got.Data.Members {
			names = append(names, m.Username)
		}
		if len(got.Data.Tiers) != 3 || !got.Data.CanGift {
			t.Fatalf("tiers offered: %d, canGift %v", len(got.Data.Tiers), got.Data.CanGift)
		}
		return names
	}
	if got := list(f.tiers[1].ID); len(got) != 1 || got[0] != "tiertwofan" {
		t.Fatalf("second tier: %v", got)
	}
	if got := list(f.tiers[0].ID); len(got) != 1 || got[0] != "subscriber" {
		t.Fatalf("first tier: %v", got)
	}
	if got := list(""); len(got) < 5 {
		t.Fatalf("all members: %v", got)
	}
	page := ts.do(t, "GET", "/apps/demo/studio/members?tier="+f.tiers[1].ID, nil, creator)
	if !strings.Contains(page.Body, `data-member="tiertwofan"`) || strings.Contains(page.Body, `data-member="subscriber"`) ||
		!strings.Contains(page.Body, `<option value="`+f.tiers[1].ID+`" selected="">Backstage Pass</option>`) {
		t.Fatalf("the page filtered by tier: %.300s", page.Body)
	}
}

// Analytics show monthly recurring revenue and members by tier as they
// stand (issue 40 item 6), exact to the cent: a monthly member adds their
// price, a yearly one their price over twelve, a gift a member who pays
// nothing; the analytics page shows the figure.
func TestRecurringRevenue(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ts := f.ts
	creator := withSession(sessionFor(t, ts, "creator@demo.test"))
	read := func() store.Recurring {
		t.Helper()
		var got struct {
			Data struct{ Recurring store.Recurring }
		}
		commJSON(t, ts.do(t, "GET", "/api/studio/apps/demo/analytics", nil, creator), &got)
		return got.Data.Recurring
	}
	tierRow := func(r store.Recurring, id string) store.TierMembers {
		for _, x := range r.Tiers {
			if x.TierID == id {
				return x
			}
		}
		t.Fatalf("no row for tier %s in %+v", id, r)
		return store.TierMembers{}
	}
	f.noTrials(t) // paid joins (a trial pays nothing: TestFreeTrial)
	before := read()
	monthly, yearly := f.tiers[1], f.tiers[2]
	if monthly.Cycle != store.CycleMonthly || yearly.Cycle != store.CycleYearly || yearly.Price != 10000 {
		t.Fatalf("demo tiers changed: %+v %+v", monthly, yearly)
	}
	join := func(name, itemID string) {
		t.Helper()
		_, tok := f.fan(t, name, 500_00)
		if r := ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", body(map[string]any{"itemId": itemID, "paymentMethod": "musepay"}),
			jsonHeaders(withSession(tok))); r.Status != 200 {
			t.Fatalf("join: %d %s", r.Status, r.Body)
		}
	}
	join("mrrmonthly", monthly.ItemID)
	join("mrryearly", yearly.ItemID)
	giftee, _ := f.fan(t, "mrrgift", 0)
	if r := ts.do(t, "POST", "/api/studio/apps/demo/members/"+giftee+"/gift", strings.NewReader(`{"tierId":"`+yearly.ID+`","months":0}`), jsonHeaders(creator)); r.Status != 200 {
		t.Fatalf("gift: %d", r.Status)
	}
	after := read()
	if after.Paid != before.Paid+2 || after.Gifted != before.Gifted+1 {
		t.Fatalf("members: %+v -> %+v", before, after)
	}
	// The yearly tier had no yearly payer before (demo), so its MRR is 10000/12 = 833.
	if got, want := after.MRR-before.MRR, monthly.Price+833; got != want {
		t.Fatalf("MRR grew by %d, want %d (%+v)", got, want, after)
	}
	if m := tierRow(after, monthly.ID); m.MRR != tierRow(before, monthly.ID).MRR+monthly.Price || m.Paid != tierRow(before, monthly.ID).Paid+1 {
		t.Fatalf("monthly tier row: %+v", m)
	}
	if y := tierRow(after, yearly.ID); y.Gifted != 1 || y.Paid != tierRow(before, yearly.ID).Paid+1 {
		t.Fatalf("yearly tier row: %+v", y)
	}
	page := ts.do(t, "GET", "/apps/demo/studio/analytics", nil, creator)
	if !strings.Contains(page.Body, "Monthly recurring revenue") || !strings.Contains(page.Body, store.Money(after.MRR, "USD")) {
		t.Fatalf("the analytics page lacks the MRR %s", store.Money(after.MRR, "USD"))
	}
}
