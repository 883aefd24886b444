package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/store"
	"marquee/store/storetest"
)

// memberOnWallet takes a copy of the seeded demo (db) and gives follower@demo.test a paid wallet
// membership with money for one more period.
func memberOnWallet(t *testing.T, db *bun.DB) (*store.Storage, *store.Subscription) {
	t.Helper()
	ctx := context.Background()
	st := store.New(store.Options{DB: db, Logger: quiet()})
	var appID, itemID string
	if err := db.NewSelect().Table("apps").Column("id").Where("name = 'demo'").Scan(ctx, &appID); err != nil {
		t.Fatal(err)
	}
	if err := db.NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = 'SUBSCRIPTION' AND sku = 'SUB-SC-01'", appID).Limit(1).Scan(ctx, &itemID); err != nil {
		t.Fatal(err)
	}
	u, err := st.UserByEmail(ctx, "follower@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	// Exactly two periods: the demo's welcome credit goes back out first.
	if bal, _ := st.WalletBalance(ctx, appID, u.ID); bal > 0 {
		if _, _, err := st.Transfer(ctx, store.TransferInput{AppID: appID, Reference: "test-drain", Kind: "DEBIT",
			From: store.Member(u.ID), To: store.OutsideMoney, Amount: bal}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.CreditWallet(ctx, appID, u.ID, 1600, "job-test", "test"); err != nil {
		t.Fatal(err)
	}
	o, err := st.CreatePlanOrder(ctx, appID, u.ID, itemID, store.WalletMethod)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PayOrderFromWallet(ctx, appID, u.ID, o.ID); err != nil {
		t.Fatal(err)
	}
	sub, err := st.SubscriptionOf(ctx, appID, u.ID)
	if err != nil || sub == nil {
		t.Fatalf("subscription: %v %v", sub, err)
	}
	return st, sub
}

func startWork(t *testing.T, db *bun.DB, work jobs.Work) *jobs.Queue {
	t.Helper()
	ctx := context.Background()
	q, err := jobs.New(ctx, jobs.Options{DB: db, DatabaseURL: storetest.URL(db), MaxConns: storetest.JobConns, Work: work, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return q
}

// A renewal enqueued while no server runs (a crash, a deploy) is done by
// the next server to start, exactly once.
func TestRenewMembershipsSurvivesRestart(t *testing.T) {
	t.Parallel()
	db := demoPostgres(t)
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db, storetest.URL(db), quiet()); err != nil {
		t.Fatal(err)
	}
	st, sub := memberOnWallet(t, db)
	due := sub.CurrentPeriodEnd.Add(-30 * time.Minute)
	work := func() jobs.Work {
		w := river.NewWorkers()
		river.AddWorker(w, &jobs.RenewMembershipsWorker{Store: st, Logger: quiet(), Now: func() time.Time { return due }})
		return jobs.Work{Workers: w}
	}

	// A queue runs and stops; then the job is enqueued with none running.
	stopQueue(t, startWork(t, db, work()))
	if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return jobs.Enqueue(ctx, tx, jobs.RenewMembershipsArgs{})
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if got, _ := st.SubscriptionOf(ctx, sub.AppID, sub.UserID); got.Renewals != 0 {
		t.Fatalf("renewed with no queue running")
	}
	q := startWork(t, db, work())
	defer stopQueue(t, q)
	waitFor(t, "the renewal", func() bool {
		got, _ := st.SubscriptionOf(ctx, sub.AppID, sub.UserID)
		return got != nil && got.Renewals == 1
	})
	// Enqueued again: the period is already paid, nothing more is charged.
	if err := jobs.Enqueue(ctx, db, jobs.RenewMembershipsArgs{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	got, _ := st.SubscriptionOf(ctx, sub.AppID, sub.UserID)
	bal, _ := st.WalletBalance(ctx, sub.AppID, sub.UserID)
	if got.Renewals != 1 || bal != 0 || !got.CurrentPeriodEnd.Equal(sub.CurrentPeriodEnd.AddDate(0, 1, 0)) {
		t.Errorf("after the job: %+v balance %d", got, bal)
	}
}

// The product registry runs the renewal as a repeating job from start.
func TestProductRegistersRenewals(t *testing.T) {
	t.Parallel()
	db := demoPostgres(t)
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db, storetest.URL(db), quiet()); err != nil {
		t.Fatal(err)
	}
	st, sub := memberOnWallet(t, db)
	soon := time.Now().UTC().Add(10 * time.Minute)
	if _, err := db.NewUpdate().Table("subscriptions").Set("current_period_end = ?", soon).Where("id = ?", sub.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	q := startWork(t, db, jobs.Product(jobs.Deps{Store: st, Logger: quiet()}))
	defer stopQueue(t, q)
	waitFor(t, "the periodic renewal", func() bool {
		got, _ := st.SubscriptionOf(ctx, sub.AppID, sub.UserID)
		return got != nil && got.Renewals == 1
	})
}
