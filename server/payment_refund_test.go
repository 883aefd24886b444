package server

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"marquee/server/payments/paymentstest"
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
	t.Parallel()
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
	t.Parallel()
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

// paidByPayPal makes a PENDING order for email and pays it through the
// PayPal calls (create, approve, capture), answering the order and the id
// of PayPal's capture.
func (f *payFixture) paidByPayPal(t *testing.T, email string, price int64) (*store.Order, string) {
	t.Helper()
	buyer := commUser(t, f.ts, email)
	o := f.order(t, email, price)
	id, _ := decodePay(t, f.post(t, "/paypal/create-order", buyer, map[string]any{"orderId": o.ID})).Data["paypalOrderId"].(string)
	f.approve(t, id)
	if r := f.post(t, "/paypal/capture-order", buyer, map[string]any{"paypalOrderId": id}); r.Status != 200 {
		t.Fatalf("capture: %d %s", r.Status, r.Body)
	}
	for _, ev := range f.paypal.Events() {
		var e struct {
			Resource struct {
				ID string `json:"id"`
			} `json:"resource"`
		}
		if ev.Type == "PAYMENT.CAPTURE.COMPLETED" && json.Unmarshal(ev.Body, &e) == nil && e.Resource.ID != "" {
			return o, e.Resource.ID
		}
	}
	t.Fatal("no capture event")
	return nil, ""
}

// PayPal refunds partly too (a refund made in PayPal's dashboard):
// PAYMENT.CAPTURE.REFUNDED names all refunded of the capture so far, which
// is recorded; only the whole total makes the order REFUNDED and revokes the
// download. A late delivery of an older total lowers nothing.
func TestPayPalPartialRefundWebhook(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	o, captureID := f.paidByPayPal(t, "follower@demo.test", 5000)
	ctx := context.Background()
	view, err := f.ts.store.OrderOf(ctx, f.shop.ID, "", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	itemID := view.Items[0].StoreItemID
	refund := func(amount, total string) paymentstest.PayPalEvent {
		return f.paypal.Event("PAYMENT.CAPTURE.REFUNDED", map[string]any{"id": "REF-" + total, "status": "COMPLETED",
			"amount":                   map[string]string{"currency_code": "USD", "value": amount},
			"seller_payable_breakdown": map[string]any{"total_refunded_amount": map[string]string{"currency_code": "USD", "value": total}},
			"links":                    []map[string]string{{"rel": "up", "href": f.paypal.URL + "/v2/payments/captures/" + captureID}}}, time.Now())
	}
	partial := refund("12.00", "12.00")
	for range 2 { // a repeated delivery counts once
		if r := paypalHook(t, f, partial); r.Status != 200 {
			t.Fatalf("partial webhook: %d %s", r.Status, r.Body)
		}
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderPaid || got.RefundedAmount != 1200 || got.RefundedAt != nil {
		t.Fatalf("after a partial PAYMENT.CAPTURE.REFUNDED: %s %d", got.Status, got.RefundedAmount)
	}
	if ok, _ := f.ts.store.HasDownload(ctx, o.AppID, o.UserID, itemID); !ok {
		t.Fatal("a partial refund revoked the download")
	}
	paypalHook(t, f, refund("7.00", "7.00"))
	if got := f.reload(t, o.ID); got.RefundedAmount != 1200 {
		t.Fatalf("a stale total lowered the refunded amount: %d", got.RefundedAmount)
	}
	paypalHook(t, f, refund("38.00", "50.00"))
	got := f.reload(t, o.ID)
	if got.Status != store.OrderRefunded || got.RefundedAmount != 5000 || got.RefundReason != "Refunded in PayPal" {
		t.Fatalf("after the full PAYMENT.CAPTURE.REFUNDED: %s %d %q", got.Status, got.RefundedAmount, got.RefundReason)
	}
	if ok, _ := f.ts.store.HasDownload(ctx, o.AppID, o.UserID, itemID); ok {
		t.Fatal("the full refund kept the download")
	}
}
