package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// The demo app's welcome credit (wallet.welcomeCredit) reaches a member who
// follows for the first time, once however many follow calls race; a
// member who follows again later gets nothing more.
func TestWelcomeCreditOnce(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		app, err := f.s.AppByIDOrName(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		if app.Settings.Wallet.WelcomeCredit <= 0 {
			t.Fatalf("the demo app gives no welcome credit: %+v", app.Settings.Wallet)
		}
		u := f.user(t, 1)
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.s.Follow(ctx, app.ID, u); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if err := f.s.Unfollow(ctx, app.ID, u); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Follow(ctx, app.ID, u); err != nil {
			t.Fatal(err)
		}
		if bal, _ := f.s.WalletBalance(ctx, app.ID, u); bal != app.Settings.Wallet.WelcomeCredit {
			t.Fatalf("balance %d, want one welcome credit of %d", bal, app.Settings.Wallet.WelcomeCredit)
		}
		// Another app without the setting gives none.
		acme, err := f.s.AppByIDOrName(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Follow(ctx, acme.ID, u); err != nil {
			t.Fatal(err)
		}
		if bal, _ := f.s.WalletBalance(ctx, acme.ID, u); bal != 0 {
			t.Fatalf("acme balance %d", bal)
		}
	})
}

// A top-up is credited once however many reports of its payment race,
// with one event id or many (webhook deliveries, the server's own reads),
// on SQLite and PostgreSQL; a report of another amount or another payment
// credits nothing.
func TestTopupAppliedOnce(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		u := f.user(t, 2)
		tp, err := f.s.CreateTopup(ctx, f.shop.AppID, u, 2500, "stripe")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.s.AttachTopupPayment(ctx, tp.ID, "stripe", "pi_1"); err != nil {
			t.Fatal(err)
		}
		report := func(eventID, ref string, amount int64) (*store.WalletTopup, error) {
			ev := &store.PaymentEvent{Provider: "stripe", EventID: eventID, Type: "payment_intent.succeeded", AppID: &f.shop.AppID, PaymentRef: ref, Amount: amount, Currency: "USD"}
			out, _, err := f.s.ApplyTopupPaymentEvent(ctx, ev, tp.ID, "stripe", ref, amount, "usd")
			return out, err
		}
		if out, err := report("ev_wrong_amount", "pi_1", 2400); err != nil || out.Status != store.TopupPending {
			t.Fatalf("another amount: %+v %v", out, err)
		}
		if out, err := report("ev_other_payment", "pi_2", 2500); err != nil || out.Status != store.TopupPending {
			t.Fatalf("another payment: %+v %v", out, err)
		}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := "ev_same"
				if i%2 == 1 {
					id = "ev_" + string(rune('a'+i%26)) + store.NewID()
				}
				if out, err := report(id, "pi_1", 2500); err != nil || out.Status != store.TopupPaid {
					t.Errorf("report %d: %+v %v", i, out, err)
				}
			}()
		}
		wg.Wait()
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != 2500 {
			t.Fatalf("balance %d after 50 reports of one 2500 top-up", bal)
		}
		n, err := db.NewSelect().Model((*store.WalletTransfer)(nil)).Where("reference = ?", store.TopupTransferRef(tp.ID)).Count(ctx)
		if err != nil || n != 1 {
			t.Fatalf("%d credits (%v)", n, err)
		}
	})
}

// 50 concurrent top-ups by one member, each paid and each reported twice at
// once (webhook and the member's confirm), are applied once each and never
// twice: the wallet grows by exactly their sum, one credit per top-up.
func TestFiftyConcurrentTopupsOfOneMember(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		u := f.user(t, 3)
		before, _ := f.s.WalletBalance(ctx, f.shop.AppID, u)
		var wg sync.WaitGroup
		ids := make([]string, 50)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tp, err := f.s.CreateTopup(ctx, f.shop.AppID, u, 1000, "stripe")
				if err != nil {
					t.Errorf("create %d: %v", i, err)
					return
				}
				ids[i] = tp.ID
				ref := "pi_c" + tp.ID
				if err := f.s.AttachTopupPayment(ctx, tp.ID, "stripe", ref); err != nil {
					t.Errorf("attach %d: %v", i, err)
					return
				}
				var inner sync.WaitGroup
				for _, ev := range []string{"evt_" + tp.ID, "intent:" + ref + ":succeeded"} {
					inner.Add(1)
					go func() {
						defer inner.Done()
						rec := &store.PaymentEvent{Provider: "stripe", EventID: ev, Type: "payment_intent.succeeded", AppID: &f.shop.AppID,
							PaymentRef: ref, Amount: 1000, Currency: "USD"}
						if out, _, err := f.s.ApplyTopupPaymentEvent(ctx, rec, tp.ID, "stripe", ref, 1000, "usd"); err != nil || out.Status != store.TopupPaid {
							t.Errorf("report %s: %+v %v", ev, out, err)
						}
					}()
				}
				inner.Wait()
			}()
		}
		wg.Wait()
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != before+50*1000 {
			t.Fatalf("balance %d, want %d", bal, before+50*1000)
		}
		for _, id := range ids {
			n, err := db.NewSelect().Model((*store.WalletTransfer)(nil)).Where("reference = ?", store.TopupTransferRef(id)).Count(ctx)
			if err != nil || n != 1 {
				t.Fatalf("top-up %s: %d credits (%v)", id, n, err)
			}
		}
	})
}
