package server

import (
	"context"
	"sync"
	"testing"

	"marquee/store"
	"marquee/store/storetest"
)

// paidByCard makes a PENDING order for email and pays it through the card
// API, answering the order and its PaymentIntent.
func (f *payFixture) paidByCard(t *testing.T, email string, price int64) (*store.Order, string) {
	t.Helper()
	buyer := commUser(t, f.ts, email)
	o := f.order(t, email, price)
	a := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o.ID}))
	pi := a.Data["paymentIntentId"].(string)
	if r := f.post(t, "/stripe-payments/confirm", buyer, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("pay: %d %s", r.Status, r.Body)
	}
	return o, pi
}

// Fifty concurrent partial refunds of one order: the refunds are set aside
// one at a time under the order's lock, so what the order records never
// passes the total and is exactly what reached Stripe.
func TestConcurrentPartialRefunds(t *testing.T) {
	f := newPayFixture(t, storetest.Postgres(t), nil)
	o, pi := f.paidByCard(t, "follower@demo.test", 2050)
	admin := commUser(t, f.ts, "admin@demo.test")
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "amount": 100, "reason": "Part"})
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	got := f.reload(t, o.ID)
	atStripe := int64(f.stripe.Intent(pi)["amount_refunded"].(float64))
	if statuses[200] != 20 || got.RefundedAmount != 2000 || atStripe != 2000 || got.Status != store.OrderPaid {
		t.Fatalf("statuses %v, recorded %d, at Stripe %d, status %s", statuses, got.RefundedAmount, atStripe, got.Status)
	}
	evs, err := f.ts.store.PaymentEvents(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == "refund" && (e.Outcome == store.OutcomePartiallyRefunded || e.Outcome == store.OutcomeRefunded) {
			n++
		}
	}
	if n != 20 {
		t.Fatalf("%d refunds recorded, 20 made", n)
	}
	// The last 50 take it to the total.
	r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "reason": "Rest"})
	if got := f.reload(t, o.ID); r.Status != 200 || got.Status != store.OrderRefunded || got.RefundedAmount != 2050 {
		t.Fatalf("rest: %d %s %+v", r.Status, r.Body, got)
	}
}

// charge.refunded comes for partial refunds too: its amount_refunded (all
// refunded so far) is recorded, and only the whole total makes the order
// REFUNDED and revokes the download.
func TestStripePartialRefundWebhook(t *testing.T) {
	f := newPayFixture(t, storetest.Postgres(t), nil)
	o, pi := f.paidByCard(t, "follower@demo.test", 5000)
	ctx := context.Background()
	items, err := f.ts.store.OrderOf(ctx, f.shop.ID, "", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	itemID := items.Items[0].StoreItemID
	charge := func(refunded int64) map[string]any {
		return map[string]any{"id": "ch_x", "object": "charge", "amount": 5000, "amount_refunded": refunded, "refunded": refunded == 5000,
			"currency": "usd", "payment_intent": pi}
	}
	ev := f.stripe.Event("charge.refunded", charge(1200))
	if r := stripeHook(t, f, ev.Payload, ev.Header); r.Status != 200 {
		t.Fatalf("partial webhook: %d %s", r.Status, r.Body)
	}
	got := f.reload(t, o.ID)
	if got.Status != store.OrderPaid || got.RefundedAmount != 1200 {
		t.Fatalf("after a partial charge.refunded: %s %d", got.Status, got.RefundedAmount)
	}
	if ok, _ := f.ts.store.HasDownload(ctx, o.AppID, o.UserID, itemID); !ok {
		t.Fatal("a partial refund revoked the download")
	}
	// An older delivery arriving late changes nothing.
	late := f.stripe.Event("charge.refunded", charge(700))
	stripeHook(t, f, late.Payload, late.Header)
	if got := f.reload(t, o.ID); got.RefundedAmount != 1200 {
		t.Fatalf("a stale total lowered the refunded amount: %d", got.RefundedAmount)
	}
	full := f.stripe.Event("charge.refunded", charge(5000))
	stripeHook(t, f, full.Payload, full.Header)
	if got := f.reload(t, o.ID); got.Status != store.OrderRefunded || got.RefundedAmount != 5000 {
		t.Fatalf("after the full charge.refunded: %s %d", got.Status, got.RefundedAmount)
	}
	if ok, _ := f.ts.store.HasDownload(ctx, o.AppID, o.UserID, itemID); ok {
		t.Fatal("the full refund kept the download")
	}
}
