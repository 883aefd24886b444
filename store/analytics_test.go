package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// statsHistory builds a known history in a new app: orders of every source
// (one mixing a membership and a ticket, partly refunded; one refunded in
// full; one unpaid; one before the range), a wallet renewal, donations
// (one unpaid), members joining and a membership ending, posts with
// reactions and comments, and events with attendees; the members' history
// is roleHistory's.
func statsHistory(t *testing.T, db *bun.DB, s *store.Storage) string {
	t.Helper()
	ctx := context.Background()
	day := func(d, h int) time.Time { return time.Date(2026, time.November, d, h, 0, 0, 0, time.UTC) }
	ins := func(rows ...any) {
		t.Helper()
		for _, r := range rows {
			if _, err := db.NewInsert().Model(r).Exec(ctx); err != nil {
				t.Fatalf("insert %T: %v", r, err)
			}
		}
	}
	user := func(name string, joined time.Time) string {
		u := &store.User{ID: store.NewID(), Username: name, Email: name + "@stats.test", PasswordHash: "x", CreatedAt: joined, UpdatedAt: joined}
		ins(u)
		return u.ID
	}
	creator := user("statsowner", day(1, 0).AddDate(0, -1, 0))
	app, err := s.CreateAppWith(ctx, store.NewApp{Name: "stats", DisplayName: "Stats", CreatorID: creator})
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []any{(*store.Membership)(nil), (*store.RoleChange)(nil)} {
		if _, err := db.NewUpdate().Model(model).Set("created_at = ?", day(1, 0).AddDate(0, -1, 0)).Where("app_id = ?", app.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	shop, err := s.ShopOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	com, err := s.CommunityOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	f1, s1, f2 := user("fan1", day(1, 0)), user("sub1", day(1, 0)), user("late", day(1, 0))
	item := func(typ string, price int64) *store.StoreItem {
		it := &store.StoreItem{ID: store.NewID(), AppID: app.ID, StoreID: shop.ID, Name: typ, Type: typ, Price: price, Currency: "USD",
			Settings: "{}", CreatedAt: day(1, 0), UpdatedAt: day(1, 0)}
		ins(it)
		return it
	}
	tee, plan, ticket, album := item(store.ItemPhysical, 1500), item(store.ItemSubscription, 999), item(store.ItemEventTicket, 2000), item(store.ItemDigital, 700)
	n := 0
	order := func(status string, created time.Time, paid *time.Time, refunded int64, lines ...[2]any) {
		n++
		var total int64
		o := &store.Order{ID: store.NewID(), AppID: app.ID, StoreID: shop.ID, UserID: f1, OrderNumber: fmt.Sprintf("STATS-%d", n),
			Status: status, Currency: "USD", RefundedAmount: refunded, CreatedAt: created, UpdatedAt: created, PaidAt: paid}
		items := []any{}
		for _, l := range lines {
			it, qty := l[0].(*store.StoreItem), l[1].(int)
			total += it.Price * int64(qty)
			items = append(items, &store.OrderItem{ID: store.NewID(), AppID: app.ID, OrderID: o.ID, StoreItemID: it.ID, Name: it.Name,
				Type: it.Type, Quantity: int64(qty), Price: it.Price, Currency: "USD", CustomOptions: "{}"})
		}
		o.Subtotal, o.Total = total, total
		ins(o)
		ins(items...)
	}
	at := func(t time.Time) *time.Time { return &t }
	order(store.OrderPaid, day(2, 10), at(day(2, 10)), 0, [2]any{tee, 2})                        // orders 3000
	order(store.OrderPaid, day(2, 12), at(day(2, 12)), 1000, [2]any{plan, 1}, [2]any{ticket, 1}) // 999 + 2000, 1000 back
	order(store.OrderPending, day(5, 8), nil, 0, [2]any{tee, 1})                                 // unpaid: no revenue
	order(store.OrderRefunded, day(9, 8), at(day(9, 8)), 700, [2]any{album, 1})                  // all back
	order(store.OrderPaid, time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC), at(time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC)), 0, [2]any{tee, 1})

	ins(&store.WalletTransfer{ID: store.NewID(), AppID: app.ID, Reference: "subscription:x:period:1", Kind: store.TransferPayment,
		Amount: 999, Currency: "USD", Memo: "Membership renewal", CreatedAt: day(3, 7)},
		&store.WalletTransfer{ID: store.NewID(), AppID: app.ID, Reference: "order:y", Kind: store.TransferPayment,
			Amount: 3000, Currency: "USD", Memo: "Order", CreatedAt: day(2, 10)})
	ins(&store.Donation{ID: store.NewID(), AppID: app.ID, UserID: f1, Amount: 500, Currency: "USD", Status: store.DonationPaid, CreatedAt: day(2, 11), ProcessedAt: at(day(2, 11))},
		&store.Donation{ID: store.NewID(), AppID: app.ID, UserID: f1, Amount: 300, Currency: "USD", Status: store.DonationPending, CreatedAt: day(4, 11)})

	planRow := &store.SubscriptionPlan{ID: store.NewID(), AppID: app.ID, StoreItemID: plan.ID, BillingCycle: store.CycleMonthly}
	ins(planRow)
	roleHistory(t, db, s, app.ID, creator, planRow, f1, s1, f2, user)

	post := func(content string, when time.Time) string {
		m := &store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: com.ID, SenderID: creator, Type: "POST", Content: content, CreatedAt: when, UpdatedAt: when}
		ins(m)
		return m.ID
	}
	p1, _, p3 := post("Most loved post", day(3, 9)), post("Quiet post", day(4, 9)), post("Second post", day(6, 9))
	ins(&store.Reaction{ID: store.NewID(), AppID: app.ID, MessageID: p1, SenderID: f1, Reaction: "heart", CreatedAt: day(3, 10)},
		&store.Reaction{ID: store.NewID(), AppID: app.ID, MessageID: p1, SenderID: s1, Reaction: "heart", CreatedAt: day(3, 10)},
		&store.Reaction{ID: store.NewID(), AppID: app.ID, MessageID: p3, SenderID: f1, Reaction: "heart", CreatedAt: day(6, 10)},
		&store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: com.ID, SenderID: f1, Type: "REPLY", Content: "yes", ParentMessageID: &p1, CreatedAt: day(3, 11), UpdatedAt: day(3, 11)})

	event := func(name string, start time.Time, attendees ...string) {
		e, err := s.CreateEvent(ctx, app.ID, creator, store.EventInput{Name: name, Type: "MEETUP", StartDate: start, EndDate: start.Add(time.Hour), Settings: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range attendees {
			ins(&store.Attendee{ID: store.NewID(), AppID: app.ID, EventID: e.ID, UserID: u, Role: store.AttendeeAttendee, CreatedAt: start})
		}
	}
	event("Launch party", day(7, 18), f1, s1, f2)
	event("Later meetup", day(20, 18), f1)
	return app.ID
}

// roleHistory makes the members' history through the paths the product
// takes (follow, a paid membership starting and ending, the CLI's set-role,
// the studio's role change and removal, unfollow, a ban, an account
// deletion), each moved afterwards to a known time. By week (Monday to
// Sunday; the range starts on Sunday Nov 1):
//
//	Oct:   leaver follows (Oct 20), removed follows (Oct 28)
//	Nov 2: fan1 follows (9:00) and becomes SUBSCRIBER by a paid plan (12:00);
//	       removed is made SUBSCRIBER with the CLI (Nov 3); promoted follows
//	       (Nov 3); leaver unfollows (Nov 4); sub1 is made SUBSCRIBER with the
//	       CLI (Nov 5); banned follows (Nov 6); the studio makes promoted
//	       ADMIN (Nov 8)
//	Nov 9: fan1's membership ends, back to FOLLOWER (Nov 10 0:00, churned);
//	       sub1 is promoted to MODERATOR (Nov 10 8:00, not churned); the
//	       studio removes removed (Nov 12, churned); banned is banned (Nov 13);
//	       promoted deletes their account (Nov 14)
//	later: late follows (Nov 20)
func roleHistory(t *testing.T, db *bun.DB, s *store.Storage, appID, creator string, plan *store.SubscriptionPlan, f1, s1, f2 string,
	user func(string, time.Time) string) {
	t.Helper()
	ctx := context.Background()
	day := func(d, h int) time.Time { return time.Date(2026, time.November, d, h, 0, 0, 0, time.UTC) }
	// when runs a change and moves the history lines it wrote to at.
	when := func(at time.Time, change func() error) {
		t.Helper()
		var before []string
		if err := db.NewSelect().Model((*store.RoleChange)(nil)).Column("id").Where("app_id = ?", appID).Scan(ctx, &before); err != nil {
			t.Fatal(err)
		}
		if err := change(); err != nil {
			t.Fatalf("change at %s: %v", at, err)
		}
		q := db.NewUpdate().Model((*store.RoleChange)(nil)).Set("created_at = ?", at).Where("app_id = ?", appID)
		if len(before) > 0 {
			q = q.Where("id NOT IN (?)", bun.List(before))
		}
		res, err := q.Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("change at %s wrote %d history lines, want 1", at, n)
		}
	}
	follow := func(u string) func() error {
		return func() error { _, err := s.Follow(ctx, appID, u); return err }
	}
	leaver, removed, promoted, banned := user("leaver", day(1, 0)), user("removed", day(1, 0)), user("promoted", day(1, 0)), user("banned", day(1, 0))
	when(time.Date(2026, 10, 20, 9, 0, 0, 0, time.UTC), follow(leaver))
	when(time.Date(2026, 10, 28, 9, 0, 0, 0, time.UTC), follow(removed))
	when(day(2, 9), follow(f1))
	when(day(2, 12), func() error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := store.StartSubscription(ctx, tx, appID, f1, plan, 999, "USD", "stripe", "sub_fan1", nil, day(2, 12))
			return err
		})
	})
	when(day(3, 9), func() error { return s.SetMemberRole(ctx, appID, removed, store.RoleSubscriber) })
	when(day(3, 10), follow(promoted))
	when(day(4, 9), func() error { return s.Unfollow(ctx, appID, leaver) })
	when(day(5, 9), func() error { return s.SetMemberRole(ctx, appID, s1, store.RoleSubscriber) })
	when(day(6, 9), follow(banned))
	when(day(8, 9), func() error {
		return s.ChangeMemberRole(ctx, appID, creator, promoted, store.RoleFollower, store.RoleAdmin)
	})
	when(day(10, 0), func() error {
		_, err := s.ApplyProviderRenewal(ctx, "sub_fan1", "ended", day(10, 0), 0)
		return err
	})
	when(day(10, 8), func() error {
		return s.ChangeMemberRole(ctx, appID, creator, s1, store.RoleSubscriber, store.RoleModerator)
	})
	when(day(12, 9), func() error { return s.ChangeMemberRole(ctx, appID, creator, removed, store.RoleSubscriber, "NONE") })
	when(day(13, 9), func() error {
		_, err := s.BanMember(ctx, store.NewBan{AppID: appID, UserID: banned, ActorID: creator, Kind: store.BanKindBan, Reason: "spam"})
		return err
	})
	when(day(14, 9), func() error { return s.DeleteAccount(ctx, promoted) })
	when(day(20, 9), follow(f2))
	// Joining again, repeating a role or a follow writes nothing.
	for _, again := range []func() error{follow(f1), follow(s1), func() error { return s.SetMemberRole(ctx, appID, s1, store.RoleModerator) }} {
		if err := again(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.NewSelect().Model((*store.RoleChange)(nil)).Where("app_id = ?", appID).Count(ctx); err != nil || n != 17 {
		t.Fatalf("role history has %d lines (%v), want 17", n, err)
	}
}

// Every figure of the analytics, checked against the history above, on
// PostgreSQL and SQLite.
func TestAnalyticsExact(t *testing.T) {
	t.Parallel()
	storetest.Both(t, analyticsExact)
}

func analyticsExact(t *testing.T, db *bun.DB) {
	s := seeded(t, db, store.NewMemoryCache())
	appID := statsHistory(t, db, s)
	ctx := context.Background()
	from, to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)

	a, err := s.AppAnalytics(ctx, appID, store.AnalyticsRange{From: from, To: to, Bucket: store.BucketWeek})
	if err != nil {
		t.Fatal(err)
	}
	// Nov 1 2026 is a Sunday: weeks start on Oct 26, Nov 2 and Nov 9. The
	// mixed order gives 1000 back in proportion: 333 of the membership's
	// 999 and the remaining 667 of the ticket's 2000.
	wantRevenue := []store.RevenueRow{
		{Period: "2026-10-26"},
		{Period: "2026-11-02", Orders: 3000, Memberships: 999 - 333 + 999, Donations: 500, Tickets: 2000 - 667, Gross: 7498, Refunds: 1000, Net: 3000 + 1665 + 500 + 1333},
		{Period: "2026-11-09", Orders: 0, Gross: 700, Refunds: 700, Net: 0},
	}
	if !reflect.DeepEqual(a.Revenue, wantRevenue) {
		t.Errorf("revenue by week:\n got %+v\nwant %+v", a.Revenue, wantRevenue)
	}
	wantTotal := store.RevenueRow{Period: "Total", Orders: 3000, Memberships: 1665, Donations: 500, Tickets: 1333, Gross: 8198, Refunds: 1700, Net: 6498}
	if a.RevenueTotal != wantTotal {
		t.Errorf("total: %+v, want %+v", a.RevenueTotal, wantTotal)
	}
	// Members by the role they held at the end of each week (roleHistory):
	// promotions count from their day, leavers until theirs; the paid
	// membership that ended and the removed subscriber are churned, the
	// subscriber promoted to moderator is not.
	wantMembers := []store.MembersRow{
		{Period: "2026-10-26", Creators: 1, Followers: 2},
		{Period: "2026-11-02", Creators: 1, Followers: 1, Subscribers: 3, Admins: 1, NewMembers: 4},
		{Period: "2026-11-09", Creators: 1, Followers: 1, Moderators: 1, Churned: 2},
	}
	if !reflect.DeepEqual(a.Members, wantMembers) {
		t.Errorf("members by week:\n got %+v\nwant %+v", a.Members, wantMembers)
	}
	if len(a.TopPosts) != 2 || a.TopPosts[0].Excerpt != "Most loved post" || a.TopPosts[0].Reactions != 2 || a.TopPosts[0].Comments != 1 ||
		a.TopPosts[1].Excerpt != "Second post" || a.TopPosts[1].Reactions != 1 || a.TopPosts[1].Comments != 0 || a.TopPosts[0].Author != "statsowner" {
		t.Errorf("top posts: %+v", a.TopPosts)
	}
	byStatus := map[string]int{}
	for _, x := range a.OrdersByStatus {
		byStatus[x.Status] = x.Count
	}
	if want := map[string]int{store.OrderPending: 1, store.OrderPaid: 2, store.OrderProcessing: 0, store.OrderShipped: 0, store.OrderDelivered: 0,
		store.OrderCancelled: 0, store.OrderRefunded: 1}; !reflect.DeepEqual(byStatus, want) {
		t.Errorf("orders by status: %v", byStatus)
	}
	// The host counts as an attendee, as the event's attendeeCount does.
	if len(a.Attendance) != 1 || a.Attendance[0].Name != "Launch party" || a.Attendance[0].Attendees != 4 {
		t.Errorf("attendance: %+v", a.Attendance)
	}

	// By day: the same money on its days, nothing on the others.
	d, err := s.AppAnalytics(ctx, appID, store.AnalyticsRange{From: from, To: to, Bucket: store.BucketDay})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Revenue) != 14 {
		t.Fatalf("days: %d", len(d.Revenue))
	}
	nonZero := map[string]store.RevenueRow{}
	for _, r := range d.Revenue {
		if r != (store.RevenueRow{Period: r.Period}) {
			nonZero[r.Period] = r
		}
	}
	wantDays := map[string]store.RevenueRow{
		"2026-11-02": {Period: "2026-11-02", Orders: 3000, Memberships: 666, Donations: 500, Tickets: 1333, Gross: 6499, Refunds: 1000, Net: 5499},
		"2026-11-03": {Period: "2026-11-03", Memberships: 999, Gross: 999, Net: 999},
		"2026-11-09": {Period: "2026-11-09", Gross: 700, Refunds: 700},
	}
	if !reflect.DeepEqual(nonZero, wantDays) {
		t.Errorf("revenue by day:\n got %+v\nwant %+v", nonZero, wantDays)
	}
	if d.RevenueTotal != wantTotal {
		t.Errorf("daily total: %+v", d.RevenueTotal)
	}
	wantDaily := []store.MembersRow{
		{Period: "2026-11-10", Creators: 1, Followers: 2, Subscribers: 1, Moderators: 1, Admins: 1, Churned: 1},
		{Period: "2026-11-11", Creators: 1, Followers: 2, Subscribers: 1, Moderators: 1, Admins: 1},
		{Period: "2026-11-12", Creators: 1, Followers: 2, Moderators: 1, Admins: 1, Churned: 1},
		{Period: "2026-11-13", Creators: 1, Followers: 1, Moderators: 1, Admins: 1},
		{Period: "2026-11-14", Creators: 1, Followers: 1, Moderators: 1},
	}
	if len(d.Members) != 14 || !reflect.DeepEqual(d.Members[9:], wantDaily) {
		t.Errorf("members by day:\n got %+v\nwant %+v", d.Members, wantDaily)
	}
	if d.Members[1] != (store.MembersRow{Period: "2026-11-02", Creators: 1, Followers: 2, Subscribers: 1, NewMembers: 1}) {
		t.Errorf("members on Nov 2: %+v", d.Members[1])
	}

	// By month, the whole of November: the late follower joins, the late
	// event counts.
	m, err := s.AppAnalytics(ctx, appID, store.AnalyticsRange{From: from, To: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Bucket: store.BucketMonth})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Members) != 1 || m.Members[0] != (store.MembersRow{Period: "2026-11", Creators: 1, Followers: 2, Moderators: 1, NewMembers: 5, Churned: 2}) {
		t.Errorf("members by month: %+v", m.Members)
	}
	if len(m.Attendance) != 2 || m.Attendance[1].Attendees != 2 {
		t.Errorf("attendance in November: %+v", m.Attendance)
	}

	// The exports hold the same rows.
	rows, err := s.ExportOrders(ctx, appID, store.AnalyticsRange{From: from, To: to})
	if err != nil || len(rows) != 5 || rows[1][0] != "STATS-1" || rows[1][6] != "30.00" || rows[2][7] != "10.00" {
		t.Errorf("orders export: %v %v", rows, err)
	}
	don, err := s.ExportDonations(ctx, appID, store.AnalyticsRange{From: from, To: to})
	if err != nil || len(don) != 3 || don[1][4] != "5.00" || don[1][6] != store.DonationPaid {
		t.Errorf("donations export: %v %v", don, err)
	}
	mem, err := s.ExportMembers(ctx, appID)
	if err != nil || len(mem) != 5 {
		t.Errorf("members export: %v %v", mem, err)
	}
}

// TestAnalyticsCountsProviderRenewals: card and PayPal renewals (the
// provider's report of a paid period, RENEWED once per event) count as
// membership revenue on the day they were reported, at the amount charged,
// or the membership's price when the report carried none; a repeated
// delivery (ALREADY) and another app's renewal do not.
func TestAnalyticsCountsProviderRenewals(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	s := seeded(t, db, store.NewMemoryCache())
	appID := statsHistory(t, db, s)
	ctx := context.Background()
	from, to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)
	rng := store.AnalyticsRange{From: from, To: to, Bucket: store.BucketWeek}
	before, err := s.AppAnalytics(ctx, appID, rng)
	if err != nil {
		t.Fatal(err)
	}
	var sub store.Subscription
	if err := db.NewSelect().Model(&sub).Where("app_id = ?", appID).Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewUpdate().Model((*store.Subscription)(nil)).Set("provider = 'paypal', provider_ref = 'I-PAYPAL-1'").Where("id = ?", sub.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateAppWith(ctx, store.NewApp{Name: "otherstats", DisplayName: "Other", CreatorID: sub.UserID})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(provider, outcome, app, ref string, amount int64, at time.Time) *store.PaymentEvent {
		return &store.PaymentEvent{ID: store.NewID(), Provider: provider, EventID: store.NewID(), Type: "invoice.paid", AppID: &app,
			PaymentRef: ref, Amount: amount, Currency: "USD", Outcome: outcome, CreatedAt: at}
	}
	for _, e := range []*store.PaymentEvent{
		ev("stripe", store.OutcomeRenewed, appID, "sub_card", 1299, time.Date(2026, 11, 4, 9, 0, 0, 0, time.UTC)),
		ev("paypal", store.OutcomeRenewed, appID, "I-PAYPAL-1", 0, time.Date(2026, 11, 10, 9, 0, 0, 0, time.UTC)),
		ev("stripe", store.OutcomeAlready, appID, "sub_card", 1299, time.Date(2026, 11, 4, 9, 5, 0, 0, time.UTC)),
		ev("stripe", store.OutcomeRenewed, other.ID, "sub_elsewhere", 5000, time.Date(2026, 11, 4, 9, 0, 0, 0, time.UTC)),
	} {
		if _, err := db.NewInsert().Model(e).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	after, err := s.AppAnalytics(ctx, appID, rng)
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Revenue[1].Memberships - before.Revenue[1].Memberships; d != 1299 {
		t.Errorf("week of Nov 2: card renewal adds %d, want 1299", d)
	}
	if d := after.Revenue[2].Memberships - before.Revenue[2].Memberships; d != sub.Amount || sub.Amount != 999 {
		t.Errorf("week of Nov 9: PayPal renewal adds %d, want the membership's %d", d, sub.Amount)
	}
	if d := after.RevenueTotal.Net - before.RevenueTotal.Net; d != 1299+999 {
		t.Errorf("net grows by %d, want %d", d, 1299+999)
	}
}
