package server

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/store"
	"marquee/store/storetest"
)

// runStrayRefunds runs the refund_stray_payment jobs in the outbox and
// answers how many ran.
func runStrayRefunds(t *testing.T, f *payFixture) int {
	t.Helper()
	ctx := context.Background()
	var rows []store.JobOutbox
	if err := f.ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", store.JobRefundStrayPayment).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	w := &jobs.RefundStrayPaymentWorker{Refunds: f.ts.StrayRefunds()}
	for _, r := range rows {
		var args jobs.RefundStrayPaymentArgs
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
			t.Fatal(err)
		}
		if err := w.Work(ctx, &river.Job[jobs.RefundStrayPaymentArgs]{Args: args}); err != nil {
			t.Fatalf("refund_stray_payment: %v", err)
		}
		if _, err := f.ts.store.DB().NewDelete().Model((*store.JobOutbox)(nil)).Where("id = ?", r.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return len(rows)
}

// succeededHook plays the browser's Payment Element paying intent pi and
// Stripe's webhook about it.
func succeededHook(t *testing.T, f *payFixture, pi string) response {
	t.Helper()
	f.stripe.Succeed(pi)
	evs := f.stripe.Events()
	ev := evs[len(evs)-1]
	if ev.Type != "payment_intent.succeeded" {
		t.Fatalf("last event %s", ev.Type)
	}
	return stripeHook(t, f, ev.Payload, ev.Header)
}

func notified(t *testing.T, f *payFixture, userID, orderNumber string) bool {
	t.Helper()
	n, err := f.ts.store.DB().NewSelect().Model((*store.Notification)(nil)).
		Where("user_id = ? AND content LIKE ?", userID, "%"+orderNumber+"%being refunded%").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// Money that arrives for an order that can no longer take it is given back
// by a job written with the payment, and the buyer is told: a card payment
// for a cancelled order, a late card payment for an order the wallet paid.
// Confirm on the cancelled order does not say "Payment confirmed".
func TestStrayPaymentsAreRefunded(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	ctx := context.Background()
	const email = "follower@demo.test"
	buyer := commUser(t, f.ts, email)
	uid := f.userID(t, email)

	// Cancelled, then paid by the still open payment form.
	o := f.order(t, email, 2500)
	pi := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o.ID})).Data["paymentIntentId"].(string)
	if r := f.post(t, "/orders/"+o.ID+"/cancel", buyer, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	if r := succeededHook(t, f, pi); r.Status != 200 {
		t.Fatalf("late webhook: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderCancelled {
		t.Fatalf("a payment revived a cancelled order: %s", got.Status)
	}
	r := f.post(t, "/stripe-payments/confirm", buyer, map[string]any{"paymentIntentId": pi})
	if r.Status == 200 || strings.Contains(r.Body, "Payment confirmed") {
		t.Fatalf("confirm of a cancelled order: %d %s", r.Status, r.Body)
	}
	if !notified(t, f, uid, o.OrderNumber) {
		t.Fatal("the buyer was not told")
	}
	if n := runStrayRefunds(t, f); n != 1 {
		t.Fatalf("%d refund jobs for one stray payment (webhook and confirm)", n)
	}
	if got := f.stripe.Intent(pi)["amount_refunded"]; got != float64(2500) {
		t.Fatalf("refunded at Stripe: %v", got)
	}

	// Paid twice: the wallet first, then the card form's late payment.
	if _, _, err := f.ts.store.CreditWallet(ctx, f.shop.AppID, uid, 10000, "test:stray", "test"); err != nil {
		t.Fatal(err)
	}
	o2 := f.order(t, email, 1800)
	pi2 := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o2.ID})).Data["paymentIntentId"].(string)
	if _, err := f.ts.store.PayOrderFromWallet(ctx, f.shop.AppID, uid, o2.ID); err != nil {
		t.Fatal(err)
	}
	succeededHook(t, f, pi2)
	got := f.reload(t, o2.ID)
	if got.Status != store.OrderPaid || got.PaymentMethod != store.WalletMethod || got.PaymentRef == pi2 {
		t.Fatalf("the late card payment took over the wallet's: %+v", got)
	}
	if n := runStrayRefunds(t, f); n != 1 || f.stripe.Intent(pi2)["amount_refunded"] != float64(1800) || !notified(t, f, uid, o2.OrderNumber) {
		t.Fatalf("paid twice: %d jobs, refunded %v", n, f.stripe.Intent(pi2)["amount_refunded"])
	}
}

// A signed webhook pays only the order whose own payment is the intent: an
// intent whose metadata names another order neither pays that order nor
// overwrites its payment reference.
func TestWebhookPaysOnlyTheOrdersOwnIntent(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	buyer := commUser(t, f.ts, "follower@demo.test")
	a := f.order(t, "follower@demo.test", 1000)
	b := f.order(t, "follower@demo.test", 1000)
	piA := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": a.ID})).Data["paymentIntentId"].(string)
	piB := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": b.ID})).Data["paymentIntentId"].(string)
	ev := f.stripe.Event("payment_intent.succeeded", intentObject(piB, a.ID, 1000, "succeeded"))
	if r := stripeHook(t, f, ev.Payload, ev.Header); r.Status != 200 {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, a.ID); got.Status != store.OrderPending || got.PaymentRef != piA {
		t.Fatalf("order A after B's intent named it: %s %s", got.Status, got.PaymentRef)
	}
}

// A double-clicked confirm: both clicks are answered with the success.
func TestDoubleClickedConfirm(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	buyer := commUser(t, f.ts, "follower@demo.test")
	o := f.order(t, "follower@demo.test", 1500)
	pi := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o.ID})).Data["paymentIntentId"].(string)
	var wg sync.WaitGroup
	answers := make([]response, 2)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = f.post(t, "/stripe-payments/confirm", buyer, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"})
		}()
	}
	wg.Wait()
	for i, r := range answers {
		if a := decodePay(t, r); r.Status != 200 || a.Message != "Payment confirmed" {
			t.Fatalf("click %d: %d %s", i, r.Status, r.Body)
		}
	}
	// And a click after the order is paid.
	if r := f.post(t, "/stripe-payments/confirm", buyer, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("third click: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderPaid {
		t.Fatalf("order %s", got.Status)
	}
}

// Cancelling an unpaid card order, or its expiry, cancels its
// PaymentIntent through a job written with the cancel, so the payment form
// left open can no longer pay it.
func TestCancelledOrderCancelsItsIntent(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	ctx := context.Background()
	buyer := commUser(t, f.ts, "follower@demo.test")
	cancelled := f.order(t, "follower@demo.test", 1200)
	pi := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": cancelled.ID})).Data["paymentIntentId"].(string)
	expired := f.order(t, "follower@demo.test", 1300)
	pi2 := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": expired.ID})).Data["paymentIntentId"].(string)
	if r := f.post(t, "/orders/"+cancelled.ID+"/cancel", buyer, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	if _, err := f.ts.store.ExpirePendingOrders(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var rows []store.JobOutbox
	if err := f.ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", store.JobCancelPayment).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d cancel_payment jobs for two orders", len(rows))
	}
	w := &jobs.CancelPaymentWorker{Refunds: f.ts.StrayRefunds()}
	for _, r := range rows {
		var args jobs.CancelPaymentArgs
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
			t.Fatal(err)
		}
		for range 2 { // a retried job is harmless
			if err := w.Work(ctx, &river.Job[jobs.CancelPaymentArgs]{Args: args}); err != nil {
				t.Fatalf("cancel_payment: %v", err)
			}
		}
	}
	for _, id := range []string{pi, pi2} {
		if st := f.stripe.Intent(id)["status"]; st != "canceled" {
			t.Fatalf("intent %s is %v", id, st)
		}
	}
}

// A wallet top-up left unpaid expires (the expire_orders job's run), and a
// card payment that lands after it (a payment form left open) is given back
// by the same durable refund_stray_payment job orders use: the wallet is
// not credited however often the payment is reported (webhook twice, the
// confirm call), one refund job is written, Stripe refunds it in full, and
// the member is told. An expired PayPal top-up is never captured.
func TestLateTopupPaymentIsRefunded(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), func(cfg *Config) { cfg.WalletTopupAmounts = []int64{2500} })
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	st := "/api/store/" + f.shop.ID + "/wallet/topups"
	before, _ := f.ts.store.WalletBalance(ctx, f.demo.ID, uid)

	a := decodePay(t, f.ts.do(t, "POST", st, body(map[string]any{"amount": 2500, "method": "stripe"}), as))
	id, pi := a.Data["topupId"].(string), a.Data["paymentRef"].(string)
	pa := decodePay(t, f.ts.do(t, "POST", st, body(map[string]any{"amount": 2500, "method": "paypal"}), as))
	ppID, ppRef := pa.Data["topupId"].(string), pa.Data["paymentRef"].(string)
	if _, err := f.ts.store.DB().NewUpdate().Model((*store.WalletTopup)(nil)).Set("created_at = created_at - interval '2 days'").
		Where("id IN (?)", bun.List([]string{id, ppID})).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := f.ts.store.ExpirePendingTopups(ctx, 0); err != nil || n != 2 {
		t.Fatalf("expired %d top-ups: %v", n, err)
	}
	if n, _ := f.ts.store.ExpirePendingTopups(ctx, 0); n != 0 {
		t.Fatalf("a second run expired %d more", n)
	}
	if tp, _ := f.ts.store.TopupByID(ctx, id); tp.Status != store.TopupExpired {
		t.Fatalf("top-up %s", tp.Status)
	}
	var cancels int64
	cancels, _ = f.ts.store.DB().NewSelect().Model((*store.JobOutbox)(nil)).Where("kind = ? AND args LIKE ?", store.JobCancelPayment, "%"+pi+"%").Count(ctx)
	if cancels != 1 {
		t.Fatalf("cancel_payment jobs for the open intent: %d", cancels)
	}

	// The open form pays anyway; every report of it is refused.
	if r := succeededHook(t, f, pi); r.Status != 200 {
		t.Fatalf("late webhook: %d %s", r.Status, r.Body)
	}
	ev := lastEvent(t, f.stripe, "payment_intent.succeeded")
	stripeHook(t, f, ev.Payload, ev.Header)
	if r := f.ts.do(t, "POST", st+"/"+id+"/confirm", body(map[string]any{}), as); r.Status != 409 {
		t.Fatalf("confirm of an expired top-up: %d %s", r.Status, r.Body)
	}
	if n, sum := topupCredits(t, f, id); n != 0 || sum != 0 {
		t.Fatalf("an expired top-up credited %d", sum)
	}
	if b, _ := f.ts.store.WalletBalance(ctx, f.demo.ID, uid); b != before {
		t.Fatalf("balance %d, want %d", b, before)
	}
	if n := runStrayRefunds(t, f); n != 1 {
		t.Fatalf("refund jobs: %d", n)
	}
	if in := f.stripe.Intent(pi); int64(in["amount_refunded"].(float64)) != 2500 {
		t.Fatalf("refunded at Stripe: %v", in["amount_refunded"])
	}
	n, err := f.ts.store.DB().NewSelect().Model((*store.Notification)(nil)).
		Where("user_id = ? AND content LIKE ?", uid, "%$25.00 to add funds arrived after the top-up had expired%refunded%").Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("member told %d times: %v", n, err)
	}

	// PayPal: approved after expiry, the return page does not capture.
	if !f.paypal.Approve(ppRef) {
		t.Fatal("approve")
	}
	if r := f.ts.do(t, "POST", st+"/"+ppID+"/confirm", body(map[string]any{}), as); r.Status != 409 {
		t.Fatalf("confirm of an expired PayPal top-up: %d %s", r.Status, r.Body)
	}
	if captures, _, _ := f.paypal.Captured(ppRef); captures != 0 {
		t.Fatalf("an expired top-up was captured %d times", captures)
	}
}
