package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/store"
	"marquee/store/storetest"
)

// The product's queue cancels an unpaid order past ORDER_EXPIRY on its own
// (the periodic job runs on start) and the stock comes back; a fresh order
// is left alone.
func TestOrderExpiryRunsAsAJob(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		files := &media.Local{Dir: t.TempDir(), BaseURL: "http://test", Key: []byte("k")}
		s := store.New(store.Options{DB: db, Media: media.Signer{Storage: files}, Logger: quiet()})
		app, err := s.AppByIDOrName(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		shop, err := s.ShopOfApp(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		stock := int64(4)
		it := &store.StoreItem{ID: store.NewID(), AppID: app.ID, StoreID: shop.ID, Name: "Poster", Type: store.ItemDigital,
			Price: 500, Currency: "USD", Stock: &stock, Settings: "{}", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if _, err := db.NewInsert().Model(it).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		order := func(email string) *store.Order {
			u, err := s.UserByEmail(ctx, email)
			if err != nil {
				t.Fatal(err)
			}
			cart, err := s.AddToCart(ctx, shop, u.ID, it.ID, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			o, _, err := s.CreateOrder(ctx, shop, u.ID, store.CheckoutInput{CartID: cart.ID})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		stale, fresh := order("follower@demo.test"), order("subscriber@demo.test")
		if _, err := db.NewUpdate().Model((*store.Order)(nil)).Set("created_at = ?", time.Now().Add(-2*time.Hour)).Where("id = ?", stale.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := jobs.Migrate(ctx, db, storetest.URL(db), quiet()); err != nil {
			t.Fatal(err)
		}
		q, err := jobs.New(ctx, jobs.Options{DB: db, DatabaseURL: storetest.URL(db), MaxConns: storetest.JobConns, Logger: quiet(),
			Work: jobs.Product(jobs.Deps{Store: s, Files: files, Logger: quiet(), OrderExpiry: time.Hour})})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopQueue(t, q) })
		status := func(id string) string {
			var st string
			if err := db.NewSelect().Model((*store.Order)(nil)).Column("status").Where("id = ?", id).Scan(ctx, &st); err != nil {
				t.Fatal(err)
			}
			return st
		}
		waitFor(t, "the stale order to expire", func() bool { return status(stale.ID) == store.OrderCancelled })
		if status(fresh.ID) != store.OrderPending {
			t.Fatalf("fresh order is %s", status(fresh.ID))
		}
		got, err := s.ItemByID(ctx, it.ID)
		if err != nil || *got.Stock != 3 {
			t.Fatalf("stock %v (%v), want 3", got.Stock, err)
		}
	})
}
