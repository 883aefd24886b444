package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/payments/paymentstest"
	"marquee/store"
	"marquee/store/storetest"
)

const (
	testStripeWebhookSecret = "whsec_test_marquee"
	testPayPalWebhookID     = "WH-TEST-MARQUEE"
	testPayPalBNCode        = "MARQUEE_SP_TEST"
)

// payFixture is a seeded server with the card and PayPal methods pointed at
// the local fakes.
type payFixture struct {
	ts     *testServer
	stripe *paymentstest.Stripe
	paypal *paymentstest.PayPal
	shop   *store.Shop
	demo   *store.AppView
}

func newPayFixture(t *testing.T, db *bun.DB, configure func(*Config)) *payFixture {
	t.Helper()
	fs := paymentstest.StartStripe(t, testStripeWebhookSecret)
	fp := paymentstest.StartPayPal(t, "pp-client", "pp-secret", testPayPalWebhookID)
	ts := newTestServerWith(t, db, func(cfg *Config) {
		cfg.Stripe = StripeConfig{SecretKey: "sk_test_marquee", PublishableKey: "pk_test_marquee", WebhookSecret: testStripeWebhookSecret, APIBase: fs.URL}
		cfg.PayPal = PayPalConfig{ClientID: "pp-client", ClientSecret: "pp-secret", APIBase: fp.URL, WebhookID: testPayPalWebhookID, BNCode: testPayPalBNCode}
		if configure != nil {
			configure(cfg)
		}
	})
	st := ts.store
	ctx := context.Background()
	demo, err := st.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	shop := new(store.Shop)
	if err := db.NewSelect().Model(shop).Where("app_id = ?", demo.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	return &payFixture{ts: ts, stripe: fs, paypal: fp, shop: shop, demo: demo}
}

func (f *payFixture) userID(t *testing.T, email string) string {
	t.Helper()
	var u store.User
	if err := f.ts.store.DB().NewSelect().Model(&u).Where("email = ?", email).Scan(context.Background()); err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return u.ID
}

// order makes a PENDING order of one new DIGITAL item at price for email.
func (f *payFixture) order(t *testing.T, email string, price int64) *store.Order {
	t.Helper()
	ctx := context.Background()
	it := &store.StoreItem{ID: store.NewID(), AppID: f.shop.AppID, StoreID: f.shop.ID, Name: "Payment test item", Type: store.ItemDigital,
		Price: price, Currency: "USD", Settings: "{}", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := f.ts.store.DB().NewInsert().Model(it).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	uid := f.userID(t, email)
	cart, err := f.ts.store.AddToCart(ctx, f.shop, uid, it.ID, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := f.ts.store.CreateOrder(ctx, f.shop, uid, store.CheckoutInput{CartID: cart.ID})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (f *payFixture) reload(t *testing.T, id string) *store.Order {
	t.Helper()
	o, err := f.ts.store.OrderByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (f *payFixture) post(t *testing.T, path string, as map[string]string, v any) response {
	t.Helper()
	return f.ts.do(t, "POST", "/api/store/"+f.shop.ID+path, body(v), as)
}

type payAnswer struct {
	Success bool
	Message string
	Data    map[string]any
}

func decodePay(t *testing.T, r response) payAnswer {
	t.Helper()
	var a payAnswer
	if err := json.Unmarshal([]byte(r.Body), &a); err != nil {
		t.Fatalf("decode %d %q: %v", r.Status, r.Body, err)
	}
	return a
}

func eventCount(t *testing.T, db bun.IDB, provider, eventID string) int {
	t.Helper()
	n, err := db.NewSelect().Model((*store.PaymentEvent)(nil)).Where("provider = ? AND event_id = ?", provider, eventID).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestPaymentConfig(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, func(c *Config) { c.Stripe = StripeConfig{}; c.PayPal = PayPalConfig{} })
	follower := commUser(t, f.ts, "follower@demo.test")
	f.ts.run(t, []scenario{
		{name: "nothing configured: card and PayPal are not offered", method: "GET", path: "/api/store/" + f.shop.ID + "/stripe-payments/config",
			as: "follower@demo.test", status: 200, json: map[string]any{"data.stripe.publishableKey": "", "data.paypal.enabled": false,
				"data.crypto.enabled": true}},
	})
	r := f.ts.do(t, "POST", "/api/store/"+f.shop.ID+"/stripe-payments/create-intent", body(map[string]any{"orderId": "x"}), follower)
	commExpect(t, "card off", r, 400, "Payment method not available")

	f2 := newPayFixture(t, demoDB(t), nil)
	f2.ts.run(t, []scenario{
		{name: "keys configured", method: "GET", path: "/api/store/" + f2.shop.ID + "/stripe-payments/config",
			as: "follower@demo.test", status: 200, json: map[string]any{"data.stripe.publishableKey": "pk_test_marquee",
				"data.paypal.enabled": true, "data.crypto.enabled": true}, absent: []string{"sk_test_marquee", "pp-secret"}},
		{name: "visitors are asked to sign in", method: "GET", path: "/api/store/" + f2.shop.ID + "/stripe-payments/config", status: 401},
	})
}

// Fifty concurrent Pay clicks on one order make exactly one PaymentIntent,
// and every click gets it.
func TestStripeConcurrentPayClicksMakeOneIntent(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	o := f.order(t, "follower@demo.test", 2599)
	as := commUser(t, f.ts, "follower@demo.test")
	const clicks = 50
	ids := make([]string, clicks)
	statuses := make([]int, clicks)
	var wg sync.WaitGroup
	for i := 0; i < clicks; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := f.post(t, "/stripe-payments/create-intent", as, map[string]any{"amount": 2599, "currency": "USD", "orderId": o.ID})
			statuses[i] = r.Status
			var a payAnswer
			_ = json.Unmarshal([]byte(r.Body), &a)
			ids[i], _ = a.Data["paymentIntentId"].(string)
		}(i)
	}
	wg.Wait()
	for i := range ids {
		if statuses[i] != 200 || ids[i] == "" || ids[i] != ids[0] {
			t.Fatalf("click %d: status %d intent %q, first %q", i, statuses[i], ids[i], ids[0])
		}
	}
	if n := f.stripe.IntentCount(); n != 1 {
		t.Fatalf("%d PaymentIntents for one order, want 1", n)
	}
	pi := f.stripe.Intent(ids[0])
	if pi["amount"].(float64) != 2599 || pi["currency"] != "usd" || pi["metadata"].(map[string]any)["orderId"] != o.ID {
		t.Fatalf("intent %v", pi)
	}
	if got := f.reload(t, o.ID); got.PaymentRef != ids[0] || got.PaymentMethod != "stripe" || got.Status != store.OrderPending {
		t.Fatalf("order after start: %+v", got)
	}
}

// The amount is the server's: a client amount or currency that is not the
// order's is refused before Stripe is asked, and the client's number never
// reaches Stripe.
func TestStripeTamperedAmountRefused(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	o := f.order(t, "follower@demo.test", 5000)
	as := commUser(t, f.ts, "follower@demo.test")
	for _, tc := range []struct {
		name string
		body map[string]any
		code int
		want string
	}{
		{"lower amount", map[string]any{"amount": 1, "currency": "USD", "orderId": o.ID}, 400, "does not match the order total"},
		{"higher amount", map[string]any{"amount": 500000, "currency": "USD", "orderId": o.ID}, 400, "does not match the order total"},
		{"other currency", map[string]any{"amount": 5000, "currency": "EUR", "orderId": o.ID}, 400, "does not match the order total"},
		{"no order", map[string]any{"amount": 5000, "currency": "USD"}, 400, "orderId is required"},
		{"unknown order", map[string]any{"amount": 5000, "currency": "USD", "orderId": "nope"}, 404, "No order found. Please try again."},
	} {
		r := f.post(t, "/stripe-payments/create-intent", as, tc.body)
		commExpect(t, tc.name, r, tc.code, tc.want)
		r = f.post(t, "/paypal/create-order", as, tc.body)
		commExpect(t, tc.name+" (paypal)", r, tc.code, tc.want)
	}
	// Someone else's order does not exist for this member.
	other := commUser(t, f.ts, "subscriber@demo.test")
	commExpect(t, "someone else's order", f.post(t, "/stripe-payments/create-intent", other, map[string]any{"orderId": o.ID}), 404, "No order found")
	if n := f.stripe.IntentCount(); n != 0 {
		t.Fatalf("%d intents made from refused requests", n)
	}
	if n := f.paypal.OrderCount(); n != 0 {
		t.Fatalf("%d PayPal orders made from refused requests", n)
	}
	// Without an amount the server's total is used.
	r := f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o.ID})
	a := decodePay(t, r)
	if r.Status != 200 || a.Data["amount"].(float64) != 5000 || f.stripe.Intent(a.Data["paymentIntentId"].(string))["amount"].(float64) != 5000 {
		t.Fatalf("create without amount: %d %s", r.Status, r.Body)
	}
}

// The browser saying "paid" is not enough: confirm asks Stripe. A declined
// card leaves the order PENDING with Stripe's reason; a good one pays it.
func TestStripeConfirmOnlyOnStripesWord(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPayFixture(t, db, nil)
		o := f.order(t, "follower@demo.test", 1250)
		as := commUser(t, f.ts, "follower@demo.test")
		a := decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"amount": 1250, "currency": "usd", "orderId": o.ID}))
		pi, _ := a.Data["paymentIntentId"].(string)
		if pi == "" || a.Data["clientSecret"] == "" {
			t.Fatalf("create: %+v", a)
		}

		// Not paid at Stripe yet: the order stays PENDING.
		r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi})
		if a := decodePay(t, r); r.Status != 200 || a.Data["orderStatus"] != store.OrderPending || a.Data["status"] != "requires_payment_method" {
			t.Fatalf("confirm before paying: %d %s", r.Status, r.Body)
		}
		// A declined card: 402 with a clear message, order still PENDING.
		r = f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_chargeDeclined"})
		commExpect(t, "declined", r, 402, "Payment failed. Please try again. Your card was declined.")
		if got := f.reload(t, o.ID); got.Status != store.OrderPending || got.PaidAt != nil {
			t.Fatalf("declined card changed the order: %+v", got)
		}
		// Someone else cannot confirm this member's payment.
		other := commUser(t, f.ts, "subscriber@demo.test")
		commExpect(t, "other member", f.post(t, "/stripe-payments/confirm", other, map[string]any{"paymentIntentId": pi}), 404, "No order found")

		// A good card.
		r = f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"})
		if a := decodePay(t, r); r.Status != 200 || a.Data["orderStatus"] != store.OrderPaid || a.Data["status"] != "succeeded" {
			t.Fatalf("confirm good card: %d %s", r.Status, r.Body)
		}
		got := f.reload(t, o.ID)
		if got.Status != store.OrderPaid || got.PaymentMethod != "stripe" || got.PaymentRef != pi || got.PaidAt == nil {
			t.Fatalf("paid order: %+v", got)
		}
		// Confirming again (a second tab) answers the paid order.
		r = f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi})
		if a := decodePay(t, r); r.Status != 200 || a.Data["orderStatus"] != store.OrderPaid {
			t.Fatalf("confirm again: %d %s", r.Status, r.Body)
		}
		// And its webhook, arriving late, changes nothing.
		evs := f.stripe.Events()
		last := evs[len(evs)-1]
		if last.Type != "payment_intent.succeeded" {
			t.Fatalf("last event %s", last.Type)
		}
		r = f.ts.do(t, "POST", "/api/webhooks/stripe", strings.NewReader(string(last.Payload)), map[string]string{"Stripe-Signature": last.Header})
		if r.Status != 200 || f.reload(t, o.ID).PaidAt.UnixNano() != got.PaidAt.UnixNano() {
			t.Fatalf("late webhook: %d %s", r.Status, r.Body)
		}
		// A creator cannot pay the order again by starting a new intent.
		commExpect(t, "pay a paid order", f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o.ID}), 409, msgNotAwaiting)
	})
}

func stripeHook(t *testing.T, f *payFixture, payload []byte, header string) response {
	return f.ts.do(t, "POST", "/api/webhooks/stripe", strings.NewReader(string(payload)), map[string]string{"Stripe-Signature": header, "Content-Type": "application/json"})
}

func intentObject(id, orderID string, amount int64, status string) map[string]any {
	return map[string]any{"id": id, "object": "payment_intent", "amount": amount, "amount_received": amount, "currency": "usd",
		"status": status, "metadata": map[string]any{"orderId": orderID}}
}

// Forged and stale webhooks answer 400 and change nothing; the same event
// delivered ten times at once pays the order once.
func TestStripeWebhooks(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPayFixture(t, db, nil)
		o := f.order(t, "follower@demo.test", 4200)
		as := commUser(t, f.ts, "follower@demo.test")
		a := decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o.ID}))
		pi := a.Data["paymentIntentId"].(string)

		ev := f.stripe.Event("payment_intent.succeeded", intentObject(pi, o.ID, 4200, "succeeded"))
		// Forged: signed with another secret.
		forger := paymentstest.NewStripe("whsec_attacker")
		commExpect(t, "forged", stripeHook(t, f, ev.Payload, forger.Sign(ev.Payload, time.Now())), 400, msgInvalidSignature)
		// Tampered: a good signature over another body.
		tampered := []byte(strings.Replace(string(ev.Payload), "4200", "1", 1))
		commExpect(t, "tampered body", stripeHook(t, f, tampered, ev.Header), 400, msgInvalidSignature)
		// Stale: correctly signed, six minutes ago.
		commExpect(t, "stale", stripeHook(t, f, ev.Payload, f.stripe.Sign(ev.Payload, time.Now().Add(-6*time.Minute))), 400, msgInvalidSignature)
		commExpect(t, "unsigned", stripeHook(t, f, ev.Payload, ""), 400, msgInvalidSignature)
		if got := f.reload(t, o.ID); got.Status != store.OrderPending {
			t.Fatalf("refused webhooks changed the order: %s", got.Status)
		}
		if n := eventCount(t, db, "stripe", ev.ID); n != 0 {
			t.Fatalf("refused webhook recorded %d events", n)
		}

		// The real one, ten times concurrently.
		var wg sync.WaitGroup
		codes := make([]int, 10)
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				codes[i] = stripeHook(t, f, ev.Payload, ev.Header).Status
			}(i)
		}
		wg.Wait()
		for i, c := range codes {
			if c != 200 {
				t.Fatalf("delivery %d: %d", i, c)
			}
		}
		got := f.reload(t, o.ID)
		if got.Status != store.OrderPaid || got.PaymentRef != pi {
			t.Fatalf("after webhook: %+v", got)
		}
		if n := eventCount(t, db, "stripe", ev.ID); n != 1 {
			t.Fatalf("event recorded %d times", n)
		}
		evs, _ := f.ts.store.PaymentEvents(context.Background(), o.ID)
		if len(evs) != 1 || evs[0].Outcome != store.OutcomePaid || evs[0].Amount != 4200 {
			t.Fatalf("events: %+v", evs)
		}
		// The paid hook ran once: one download entitlement.
		if n, _ := db.NewSelect().Model((*store.Entitlement)(nil)).Where("order_id = ?", o.ID).Count(context.Background()); n != 1 {
			t.Fatalf("%d entitlements", n)
		}

		// A succeeded event for less than the total does not pay an order.
		o2 := f.order(t, "follower@demo.test", 3000)
		a = decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o2.ID}))
		pi2 := a.Data["paymentIntentId"].(string)
		short := f.stripe.Event("payment_intent.succeeded", intentObject(pi2, o2.ID, 300, "succeeded"))
		r := stripeHook(t, f, short.Payload, short.Header)
		if r.Status != 200 || f.reload(t, o2.ID).Status != store.OrderPending {
			t.Fatalf("short payment: %d %s, order %s", r.Status, r.Body, f.reload(t, o2.ID).Status)
		}
		// A failed payment leaves the order PENDING, with Stripe's reason kept.
		fail := intentObject(pi2, o2.ID, 3000, "requires_payment_method")
		fail["amount_received"] = 0
		fail["last_payment_error"] = map[string]any{"type": "card_error", "message": "Your card has insufficient funds."}
		failed := f.stripe.Event("payment_intent.payment_failed", fail)
		if r := stripeHook(t, f, failed.Payload, failed.Header); r.Status != 200 {
			t.Fatalf("failed event: %d %s", r.Status, r.Body)
		}
		evs, _ = f.ts.store.PaymentEvents(context.Background(), o2.ID)
		// Both events may share a timestamp (SQLite keeps seconds), so
		// they are matched by type, not by position.
		outcome := map[string]store.PaymentEvent{}
		for _, e := range evs {
			outcome[e.Type] = e
		}
		if f.reload(t, o2.ID).Status != store.OrderPending || len(evs) != 2 ||
			outcome["payment_intent.payment_failed"].Outcome != store.OutcomeFailed ||
			outcome["payment_intent.payment_failed"].Message != "Your card has insufficient funds." ||
			outcome["payment_intent.succeeded"].Outcome != store.OutcomeMismatch {
			t.Fatalf("failed payment: %+v", evs)
		}

		// charge.refunded (a refund made in Stripe's dashboard) refunds the order, once.
		ref := f.stripe.Event("charge.refunded", map[string]any{"id": "ch_1", "object": "charge", "amount": 4200, "amount_refunded": 4200,
			"refunded": true, "currency": "usd", "payment_intent": pi})
		for i := 0; i < 3; i++ {
			if r := stripeHook(t, f, ref.Payload, ref.Header); r.Status != 200 {
				t.Fatalf("refund event: %d %s", r.Status, r.Body)
			}
		}
		got = f.reload(t, o.ID)
		if got.Status != store.OrderRefunded || got.RefundReason != "Refunded in Stripe" || eventCount(t, db, "stripe", ref.ID) != 1 {
			t.Fatalf("after charge.refunded: %+v", got)
		}
	})
}

// Only the creator and admins refund; a refund moves the order to REFUNDED
// with the reason, and refunding twice is refused.
func TestPaymentRefundPermissions(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	buyer := commUser(t, f.ts, "follower@demo.test")
	paid := func(price int64) (*store.Order, string) {
		o := f.order(t, "follower@demo.test", price)
		a := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o.ID}))
		pi := a.Data["paymentIntentId"].(string)
		if r := f.post(t, "/stripe-payments/confirm", buyer, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
			t.Fatalf("pay: %d %s", r.Status, r.Body)
		}
		return o, pi
	}
	o, pi := paid(8000)
	req := map[string]any{"paymentIntentId": pi, "amount": 3000, "reason": "Damaged in transit"}
	for _, who := range []string{"follower@demo.test", "subscriber@demo.test", "moderator@demo.test"} {
		commExpect(t, who, f.post(t, "/stripe-payments/refund", commUser(t, f.ts, who), req), 403, msgRefundOnly)
	}
	commExpect(t, "visitor", f.post(t, "/stripe-payments/refund", map[string]string{"Content-Type": "application/json"}, req), 401, "Authentication required")
	if f.reload(t, o.ID).Status != store.OrderPaid {
		t.Fatal("refused refund changed the order")
	}
	admin := commUser(t, f.ts, "admin@demo.test")
	commExpect(t, "too much", f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "amount": 8001}), 400, "between 1 and the order total")
	commExpect(t, "unknown payment", f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": "pi_nope"}), 404, "Order not found")
	// A partial refund leaves the order PAID with the amount recorded; a
	// second is a refund of its own; what is left bounds a third.
	r := f.post(t, "/stripe-payments/refund", admin, req)
	a := decodePay(t, r)
	if r.Status != 200 || a.Data["status"] != store.OrderPaid || a.Data["refundReason"] != "Damaged in transit" ||
		a.Data["amount"].(float64) != 3000 || a.Data["refundedAmount"].(float64) != 3000 {
		t.Fatalf("admin partial refund: %d %s", r.Status, r.Body)
	}
	got := f.reload(t, o.ID)
	if got.Status != store.OrderPaid || got.RefundReason != "Damaged in transit" || got.RefundedAmount != 3000 || got.RefundedAt != nil {
		t.Fatalf("partly refunded order: %+v", got)
	}
	if f.stripe.Intent(pi)["amount_refunded"].(float64) != 3000 {
		t.Fatalf("stripe refunded %v", f.stripe.Intent(pi)["amount_refunded"])
	}
	if r := f.post(t, "/stripe-payments/refund", admin, req); r.Status != 200 || f.reload(t, o.ID).RefundedAmount != 6000 {
		t.Fatalf("second partial refund: %d %s", r.Status, r.Body)
	}
	commExpect(t, "more than is left", f.post(t, "/stripe-payments/refund", admin, req), 400, "between 1 and the order total")
	r = f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "reason": "The rest"})
	if a := decodePay(t, r); r.Status != 200 || a.Data["status"] != store.OrderRefunded || a.Data["amount"].(float64) != 2000 {
		t.Fatalf("refund of the rest: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderRefunded || got.RefundedAmount != 8000 || got.RefundedAt == nil ||
		f.stripe.Intent(pi)["amount_refunded"].(float64) != 8000 {
		t.Fatalf("fully refunded order: %+v", got)
	}
	commExpect(t, "refund twice", f.post(t, "/stripe-payments/refund", admin, req), 409, msgNotRefundable)

	// The creator refunds a whole order (no amount).
	o2, pi2 := paid(1999)
	r = f.post(t, "/stripe-payments/refund", commUser(t, f.ts, "creator@demo.test"), map[string]any{"paymentIntentId": pi2})
	if a := decodePay(t, r); r.Status != 200 || a.Data["amount"].(float64) != 1999 || f.reload(t, o2.ID).RefundReason != "Refunded by the store" {
		t.Fatalf("creator full refund: %d %s", r.Status, r.Body)
	}
	// An unpaid order cannot be refunded.
	o3 := f.order(t, "follower@demo.test", 500)
	a = decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o3.ID}))
	commExpect(t, "unpaid", f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": a.Data["paymentIntentId"]}), 409, msgNotRefundable)
	// The admin of one app cannot refund in another: acme's store is not the
	// demo's, and the order is looked up in the store of the path.
	acme, _ := f.ts.store.Landing(context.Background(), "acme")
	if acme.Store != nil {
		r := f.ts.do(t, "POST", "/api/store/"+acme.Store.ID+"/stripe-payments/refund", body(req), admin)
		if r.Status != 403 && r.Status != 404 {
			t.Fatalf("cross-app refund: %d %s", r.Status, r.Body)
		}
	}
}

// The PayPal path: create (approval URL), capture refused before approval,
// capture after approval pays, capturing twice is harmless, the token is
// fetched once.
func TestPayPalCreateAndCapture(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPayFixture(t, db, nil)
		o := f.order(t, "follower@demo.test", 1500)
		as := commUser(t, f.ts, "follower@demo.test")
		r := f.post(t, "/paypal/create-order", as, map[string]any{"amount": 1500, "currency": "USD", "orderId": o.ID})
		var top struct {
			PaypalOrderID string `json:"paypalOrderId"`
			ApprovalURL   string `json:"approvalUrl"`
		}
		commJSON(t, r, &top)
		if r.Status != 200 || top.PaypalOrderID == "" || !strings.HasPrefix(top.ApprovalURL, f.paypal.URL+"/checkoutnow?token=") {
			t.Fatalf("create-order: %d %s", r.Status, r.Body)
		}
		// A second click reuses the same PayPal order.
		r2 := f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o.ID})
		if a := decodePay(t, r2); a.Data["paypalOrderId"] != top.PaypalOrderID || f.paypal.OrderCount() != 1 {
			t.Fatalf("second create: %s (orders %d)", r2.Body, f.paypal.OrderCount())
		}
		// The return address carries our order; PayPal adds its token.
		page := f.paypalApprovalPage(t, top.ApprovalURL)
		if !strings.Contains(page, "15.00 USD") {
			t.Fatalf("approval page: %s", page)
		}

		capture := map[string]any{"paypalOrderId": top.PaypalOrderID}
		commExpect(t, "capture before approval", f.post(t, "/paypal/capture-order", as, capture), 402, "not approved")
		if f.reload(t, o.ID).Status != store.OrderPending {
			t.Fatal("unapproved capture changed the order")
		}
		loc := f.approve(t, top.PaypalOrderID)
		if !strings.HasPrefix(loc, "http://main.test/apps/demo/payment-success?") || !strings.Contains(loc, "orderId="+o.ID) ||
			!strings.Contains(loc, "token="+top.PaypalOrderID) || !strings.Contains(loc, "processor=paypal") {
			t.Fatalf("return address %q", loc)
		}
		commExpect(t, "someone else's capture", f.post(t, "/paypal/capture-order", commUser(t, f.ts, "subscriber@demo.test"), capture), 404, "No order found")
		r = f.post(t, "/paypal/capture-order", as, capture)
		if a := decodePay(t, r); r.Status != 200 || a.Data["status"] != "COMPLETED" || a.Data["orderStatus"] != store.OrderPaid {
			t.Fatalf("capture: %d %s", r.Status, r.Body)
		}
		got := f.reload(t, o.ID)
		if got.Status != store.OrderPaid || got.PaymentMethod != "paypal" || got.PaymentRef != top.PaypalOrderID {
			t.Fatalf("captured order: %+v", got)
		}
		// Capturing twice (reload of payment-success) is harmless.
		for i := 0; i < 2; i++ {
			r = f.post(t, "/paypal/capture-order", as, capture)
			if a := decodePay(t, r); r.Status != 200 || a.Data["orderStatus"] != store.OrderPaid {
				t.Fatalf("capture again: %d %s", r.Status, r.Body)
			}
		}
		if n := f.paypal.CaptureCount(); n != 1 {
			t.Fatalf("%d captures", n)
		}
		if n := f.paypal.TokenCalls(); n != 1 {
			t.Fatalf("%d OAuth token calls, want the cached one", n)
		}
		// Refund through the same call, by the PayPal order id.
		admin := commUser(t, f.ts, "admin@demo.test")
		r = f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": top.PaypalOrderID, "reason": "Changed mind"})
		if r.Status != 200 || f.reload(t, o.ID).Status != store.OrderRefunded {
			t.Fatalf("paypal refund: %d %s", r.Status, r.Body)
		}
	})
}

func (f *payFixture) paypalApprovalPage(t *testing.T, approval string) string {
	t.Helper()
	res, err := http.Get(approval)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// approve presses Pay Now on the fake's approval page and answers where
// PayPal sends the buyer.
func (f *payFixture) approve(t *testing.T, paypalOrderID string) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.PostForm(f.paypal.URL+"/checkoutnow", url.Values{"token": {paypalOrderID}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.StatusCode)
	}
	return res.Header.Get("Location")
}

func TestPayPalMissingApprovalAndDeclinedCapture(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	as := commUser(t, f.ts, "follower@demo.test")
	f.paypal.OmitApprovalLink = true
	o := f.order(t, "follower@demo.test", 700)
	commExpect(t, "no approval link", f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o.ID}), 502,
		"PayPal order created but approval URL is missing")
	f.paypal.OmitApprovalLink = false

	f.paypal.DeclineCaptures = true
	o2 := f.order(t, "follower@demo.test", 900)
	a := decodePay(t, f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o2.ID}))
	id := a.Data["paypalOrderId"].(string)
	f.approve(t, id)
	commExpect(t, "declined capture", f.post(t, "/paypal/capture-order", as, map[string]any{"paypalOrderId": id}), 402, "Payment failed. Please try again.")
	if got := f.reload(t, o2.ID); got.Status != store.OrderPending {
		t.Fatalf("declined capture: %s", got.Status)
	}
}

func paypalHook(t *testing.T, f *payFixture, ev paymentstest.PayPalEvent) response {
	h := map[string]string{"Content-Type": "application/json"}
	for k := range ev.Header {
		h[k] = ev.Header.Get(k)
	}
	return f.ts.do(t, "POST", "/api/webhooks/paypal", strings.NewReader(string(ev.Body)), h)
}

func TestPayPalWebhooks(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPayFixture(t, db, nil)
		as := commUser(t, f.ts, "follower@demo.test")
		o := f.order(t, "follower@demo.test", 2500)
		a := decodePay(t, f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o.ID}))
		ppID := a.Data["paypalOrderId"].(string)
		capture := map[string]any{"id": "CAP-1", "status": "COMPLETED", "custom_id": o.ID,
			"amount":             map[string]string{"currency_code": "USD", "value": "25.00"},
			"supplementary_data": map[string]any{"related_ids": map[string]string{"order_id": ppID}}}
		ev := f.paypal.Event("PAYMENT.CAPTURE.COMPLETED", capture, time.Now())

		forged := ev
		forged.Header = ev.Header.Clone()
		forged.Header.Set("PAYPAL-TRANSMISSION-SIG", "Zm9yZ2Vk")
		commExpect(t, "forged", paypalHook(t, f, forged), 400, msgInvalidSignature)
		tampered := ev
		tampered.Body = []byte(strings.Replace(string(ev.Body), "25.00", "0.01", 1))
		commExpect(t, "tampered", paypalHook(t, f, tampered), 400, msgInvalidSignature)
		stale := f.paypal.Event("PAYMENT.CAPTURE.COMPLETED", capture, time.Now().Add(-10*time.Minute))
		commExpect(t, "stale", paypalHook(t, f, stale), 400, msgInvalidSignature)
		if f.reload(t, o.ID).Status != store.OrderPending || eventCount(t, db, "paypal", ev.ID) != 0 {
			t.Fatal("refused webhooks changed something")
		}

		var wg sync.WaitGroup
		codes := make([]int, 10)
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				codes[i] = paypalHook(t, f, ev).Status
			}(i)
		}
		wg.Wait()
		for i, c := range codes {
			if c != 200 {
				t.Fatalf("delivery %d: %d", i, c)
			}
		}
		got := f.reload(t, o.ID)
		if got.Status != store.OrderPaid || got.PaymentRef != ppID || eventCount(t, db, "paypal", ev.ID) != 1 {
			t.Fatalf("after webhook: %+v", got)
		}
		evs, _ := f.ts.store.PaymentEvents(context.Background(), o.ID)
		if len(evs) != 1 || evs[0].Outcome != store.OutcomePaid {
			t.Fatalf("events %+v", evs)
		}
	})
}

func TestWebhooksWithoutConfiguration(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), func(c *Config) { c.Stripe.WebhookSecret = ""; c.PayPal.WebhookID = "" })
	o := f.order(t, "follower@demo.test", 100)
	ev := f.stripe.Event("payment_intent.succeeded", intentObject("pi_x", o.ID, 100, "succeeded"))
	commExpect(t, "stripe without secret", stripeHook(t, f, ev.Payload, ev.Header), 400, msgInvalidSignature)
	pev := f.paypal.Event("PAYMENT.CAPTURE.COMPLETED", map[string]any{"custom_id": o.ID}, time.Now())
	commExpect(t, "paypal without webhook id", paypalHook(t, f, pev), 400, msgInvalidSignature)
	if f.reload(t, o.ID).Status != store.OrderPending {
		t.Fatal("unverifiable webhook paid an order")
	}
}

// payment-success is where PayPal sends the buyer back: the page captures
// (PayPal's token is its order id), and says why when it cannot.
func TestPaymentSuccessPageCapturesPayPal(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	as := commUser(t, f.ts, "follower@demo.test")
	o := f.order(t, "follower@demo.test", 2200)
	a := decodePay(t, f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o.ID}))
	ppID := a.Data["paypalOrderId"].(string)
	page := "/apps/demo/payment-success?processor=paypal&orderId=" + o.ID + "&token=" + ppID + "&PayerID=X"

	r := f.ts.do(t, "GET", page, nil, as)
	if r.Status != 200 || !strings.Contains(r.Body, "The payment was not approved on PayPal.") || strings.Contains(r.Body, "Payment Successful!") {
		t.Fatalf("unapproved return: %d", r.Status)
	}
	if f.reload(t, o.ID).Status != store.OrderPending {
		t.Fatal("unapproved return paid the order")
	}
	// Another order's id with this PayPal order pays nothing.
	other := f.order(t, "follower@demo.test", 100)
	r = f.ts.do(t, "GET", "/apps/demo/payment-success?processor=paypal&orderId="+other.ID+"&token="+ppID, nil, as)
	if !strings.Contains(r.Body, "Missing payment information") && !strings.Contains(r.Body, "Processing") {
		t.Fatalf("mismatched return: %d", r.Status)
	}
	f.approve(t, ppID)
	for i := 0; i < 2; i++ {
		r = f.ts.do(t, "GET", page, nil, as)
		if r.Status != 200 || !strings.Contains(r.Body, "Payment Successful!") {
			t.Fatalf("approved return %d: %d", i, r.Status)
		}
	}
	if f.reload(t, o.ID).Status != store.OrderPaid || f.paypal.CaptureCount() != 1 || f.reload(t, other.ID).Status != store.OrderPending {
		t.Fatal("return did not capture exactly once")
	}
	r = f.ts.do(t, "GET", "/apps/demo/payment-success?processor=paypal&orderId="+o.ID, nil, as)
	if !strings.Contains(r.Body, "Missing payment information") {
		t.Fatalf("no token: %d", r.Status)
	}

	// A card order coming back from a redirect is re-read at Stripe.
	o2 := f.order(t, "follower@demo.test", 1800)
	a = decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o2.ID}))
	f.stripe.Succeed(a.Data["paymentIntentId"].(string))
	r = f.ts.do(t, "GET", "/apps/demo/payment-success?processor=stripe&orderId="+o2.ID, nil, as)
	if !strings.Contains(r.Body, "Payment Successful!") || f.reload(t, o2.ID).Status != store.OrderPaid {
		t.Fatalf("stripe return: %d", r.Status)
	}
}

// The fulfilment screen's refund (POST .../orders/{id}/refund) goes through
// the order's provider too: a card order is refunded at Stripe.
func TestFulfilmentRefundOfCardOrder(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	buyer := commUser(t, f.ts, "follower@demo.test")
	o := f.order(t, "follower@demo.test", 6400)
	a := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o.ID}))
	pi := a.Data["paymentIntentId"].(string)
	if r := f.post(t, "/stripe-payments/confirm", buyer, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("pay: %d %s", r.Status, r.Body)
	}
	r := f.post(t, "/orders/"+o.ID+"/refund", commUser(t, f.ts, "creator@demo.test"), map[string]any{"reason": "Out of stock after all"})
	if r.Status != 200 {
		t.Fatalf("fulfilment refund: %d %s", r.Status, r.Body)
	}
	got := f.reload(t, o.ID)
	if got.Status != store.OrderRefunded || got.RefundReason != "Out of stock after all" || f.stripe.Intent(pi)["amount_refunded"].(float64) != 6400 {
		t.Fatalf("refunded: %+v, stripe %v", got, f.stripe.Intent(pi)["amount_refunded"])
	}
}
