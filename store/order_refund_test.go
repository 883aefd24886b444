package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// A partial refund leaves the order's status and what it granted, and
// records the amount; the refund that reaches the total makes the order
// REFUNDED and revokes. Nothing refunds past the total.
func TestPartialWalletRefunds(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		u := f.user(t, 1)
		if _, _, err := f.s.CreditWallet(ctx, f.shop.AppID, u, 5000, "seed:1", "welcome"); err != nil {
			t.Fatal(err)
		}
		album := f.item(t, store.ItemDigital, 1000, nil)
		o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: f.cart(t, u, album, nil, 1)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u, o.ID); err != nil {
			t.Fatal(err)
		}
		got, err := f.s.RefundOrderAmount(ctx, f.shop.AppID, o.ID, 300, "scratched")
		if err != nil || got.Status != store.OrderPaid || got.RefundedAmount != 300 || got.RefundReason != "scratched" {
			t.Fatalf("partial refund: %+v %v", got, err)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); !ok {
			t.Fatal("a partial refund revoked the download")
		}
		if _, err := f.s.RefundOrderAmount(ctx, f.shop.AppID, o.ID, 701, "too much"); err == nil {
			t.Fatal("refunded past the total")
		}
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != 5000-1000+300 {
			t.Fatalf("balance %d after a partial refund", bal)
		}
		// 0 is all that is left.
		got, err = f.s.RefundOrderAmount(ctx, f.shop.AppID, o.ID, 0, "rest")
		if err != nil || got.Status != store.OrderRefunded || got.RefundedAmount != 1000 {
			t.Fatalf("rest refunded: %+v %v", got, err)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); ok {
			t.Fatal("the full refund kept the download")
		}
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != 5000 {
			t.Fatalf("balance %d after refunding all", bal)
		}
		if _, err := f.s.RefundOrderAmount(ctx, f.shop.AppID, o.ID, 1, "again"); !errors.Is(err, store.ErrIllegalTransition) {
			t.Fatalf("refund of a refunded order: %v", err)
		}
	})
}

// Provider refunds set money aside under the order's lock: of many
// concurrent refunds only those that fit in what is left are begun, a
// failed one gives its amount back, and the one reaching the total
// revokes. A provider's running total (charge.refunded) that was counted
// already changes nothing.
func TestRefundReservations(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		u := f.user(t, 1)
		album := f.item(t, store.ItemDigital, 1000, nil)
		o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: f.cart(t, u, album, nil, 1)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.MarkOrderPaid(ctx, o.ID, "stripe", "pi_1", 1000); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var begun []*store.PendingRefund
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pr, err := f.s.BeginRefund(ctx, f.shop.AppID, o.ID, "stripe", 150, "r")
				if err == nil {
					mu.Lock()
					begun = append(begun, pr)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(begun) != 6 {
			t.Fatalf("%d refunds of 150 begun on a total of 1000", len(begun))
		}
		// One fails at the provider: its 150 is free again.
		if _, err := f.s.FinishRefund(ctx, begun[0], "", errors.New("provider down")); err != nil {
			t.Fatal(err)
		}
		for _, pr := range begun[1:] {
			if _, err := f.s.FinishRefund(ctx, pr, "re_"+pr.ID, nil); err != nil {
				t.Fatal(err)
			}
		}
		cur, _ := f.s.OrderByID(ctx, o.ID)
		if cur.Status != store.OrderPaid || cur.RefundedAmount != 750 {
			t.Fatalf("after five refunds: %s %d", cur.Status, cur.RefundedAmount)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); !ok {
			t.Fatal("partial refunds revoked the download")
		}
		// Stripe's running total of what we already counted changes nothing.
		ev := &store.PaymentEvent{Provider: "stripe", EventID: "evt_partial", Type: "charge.refunded", AppID: &o.AppID, OrderID: &o.ID}
		cur, _, err = f.s.ApplyPaymentEvent(ctx, ev, func(ctx context.Context, tx bun.Tx, o *store.Order) (string, error) {
			return f.s.RefundTotalTx(ctx, tx, o, 600, "Refunded in Stripe")
		})
		if err != nil || cur.RefundedAmount != 750 || ev.Outcome != store.OutcomeAlready {
			t.Fatalf("stale running total: %+v %s %v", cur, ev.Outcome, err)
		}
		pr, err := f.s.BeginRefund(ctx, f.shop.AppID, o.ID, "stripe", 0, "rest")
		if err != nil || pr.Amount != 250 {
			t.Fatalf("rest: %+v %v", pr, err)
		}
		cur, err = f.s.FinishRefund(ctx, pr, "re_last", nil)
		if err != nil || cur.Status != store.OrderRefunded || cur.RefundedAmount != 1000 {
			t.Fatalf("full: %+v %v", cur, err)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); ok {
			t.Fatal("the full refund kept the download")
		}
	})
}

// The wallet history lists movements in the order the ledger booked them,
// even when concurrent transfers share a timestamp.
func TestWalletHistoryInLedgerOrder(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	f := newShop(t, db)
	ctx := context.Background()
	u := f.user(t, 1)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := f.s.CreditWallet(ctx, f.shop.AppID, u, int64(i+1), "c:"+store.NewID(), "credit"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Give every entry the same time, as a busy second would.
	if _, err := db.ExecContext(ctx, "UPDATE wallet_entries SET created_at = '2026-01-01 00:00:00+00'"); err != nil {
		t.Fatal(err)
	}
	w, _, err := f.s.Wallet(ctx, f.shop.AppID, u, 1, 50)
	if err != nil || len(w.Movements) != 30 {
		t.Fatalf("movements %d %v", len(w.Movements), err)
	}
	// Newest first: each line's balance is the one before minus its amount.
	for i := 0; i+1 < len(w.Movements); i++ {
		m, older := w.Movements[i], w.Movements[i+1]
		if m.BalanceAfter-m.Amount != older.BalanceAfter {
			t.Fatalf("line %d (balance %d, amount %d) does not follow line %d (balance %d)", i, m.BalanceAfter, m.Amount, i+1, older.BalanceAfter)
		}
	}
}
