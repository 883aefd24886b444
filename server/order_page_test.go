package server

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"marquee/scripts/seed"
	"marquee/store"
)

// form posts a form as c and answers the redirect target.
func (c *caller) form(path string, values url.Values) string {
	c.t.Helper()
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if c.token != "" {
		h["Cookie"] = sessionCookie + "=" + c.token
	}
	res := c.ts.do(c.t, "POST", path, strings.NewReader(values.Encode()), h)
	if res.Status != 303 {
		c.t.Fatalf("POST %s: status %d, want 303: %.300s", path, res.Status, res.Body)
	}
	return res.Header.Get("Location")
}

func (c *caller) page(path string, want int, contains ...string) string {
	c.t.Helper()
	h := map[string]string{}
	if c.token != "" {
		h["Cookie"] = sessionCookie + "=" + c.token
	}
	res := c.ts.do(c.t, "GET", path, nil, h)
	if res.Status != want {
		c.t.Fatalf("GET %s: status %d, want %d: %.300s", path, res.Status, want, res.Body)
	}
	for _, s := range contains {
		if !strings.Contains(res.Body, s) {
			c.t.Errorf("GET %s: page lacks %q", path, s)
		}
	}
	return res.Body
}

// Checkout, payment and fulfilment with JavaScript off: every step is a
// page and a form.
func TestCheckoutWithoutJavaScript(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testCheckoutWithoutJavaScript(t, newTestServer(t, db)) })
}

func testCheckoutWithoutJavaScript(t *testing.T, ts *testServer) {
	ctx := context.Background()
	shop := loadShop(t, ts)
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	buyer, creator, other := ts.as(t, follower), ts.as(t, "creator@demo.test"), ts.as(t, subscriber)
	buyerID := ts.userID(t, follower)
	// The demo seed gives the follower a balance: spend it elsewhere first,
	// so the first payment is refused.
	if bal, _ := ts.store.WalletBalance(ctx, app.ID, buyerID); bal != seed.DemoWalletCredit {
		t.Fatalf("seeded balance %d, want %d", bal, seed.DemoWalletCredit)
	}
	if _, _, err := ts.store.Transfer(ctx, store.TransferInput{AppID: app.ID, Reference: "test:spend", Kind: store.TransferPayment,
		From: store.Member(buyerID), To: store.AppRevenue, Amount: seed.DemoWalletCredit}); err != nil {
		t.Fatal(err)
	}
	buyer.form("/apps/demo/cart/items", url.Values{"storeItemId": {shop.items["PIN-SET-01"]}, "quantity": {"2"}})
	// The wallet is the only method and holds nothing: Review Cart says so
	// and offers Add funds instead of a way on that would fail (issue 24).
	review := buyer.page("/apps/demo/checkout", 200, "Review Cart", "Shipping", "Payment", "Enamel Pin Set", "$24.00",
		"Your wallet holds $0.00, less than this order", `href="/apps/demo/transactions?return=checkout#add-funds"`, "Add funds")
	if strings.Contains(review, "Continue to Shipping") {
		t.Fatal("Review Cart offers to go on with a wallet that cannot pay")
	}
	loc := buyer.form("/apps/demo/checkout", url.Values{"notes": {"Please gift wrap"}})
	if !strings.HasPrefix(loc, "/apps/demo/checkout?orderId=") {
		t.Fatalf("after review: %s", loc)
	}
	orderID := strings.TrimPrefix(loc, "/apps/demo/checkout?orderId=")
	// The cart became the order: back on the checkout, the order is offered.
	buyer.page("/apps/demo/checkout", 200, "Your cart is empty", "/apps/demo/checkout?orderId="+orderID)
	buyer.page(loc, 200, "First name", "ZIP code", `href="/apps/demo/checkout?orderId=`+orderID+`&amp;step=review"`)
	// Refused: the step comes back with the error and what was typed.
	bad := ts.do(t, "POST", "/apps/demo/checkout/shipping", strings.NewReader(url.Values{"orderId": {orderID}, "firstName": {"Ada"}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": sessionCookie + "=" + buyer.token})
	if bad.Status != 400 || !strings.Contains(bad.Body, "✕") || !strings.Contains(bad.Body, "Last name is required") || !strings.Contains(bad.Body, `value="Ada"`) {
		t.Fatalf("refused shipping step: %d", bad.Status)
	}
	loc = buyer.form("/apps/demo/checkout/shipping", url.Values{"orderId": {orderID}, "firstName": {"Ada"}, "lastName": {"Lovelace"},
		"address": {"1 Main St"}, "city": {"Portland"}, "state": {"OR"}, "zipCode": {"97201"}, "country": {"US"}})
	if pay := buyer.page(loc, 200, "Add funds", "Tax", "Wallet"); strings.Contains(pay, "Pay $24.00") {
		t.Fatal("the payment step offers a Pay button the wallet cannot cover")
	}
	// Too little money: back to the payment step with the reason and a cross.
	loc = buyer.form("/apps/demo/checkout/pay", url.Values{"orderId": {orderID}, "paymentMethod": {"musepay"}})
	buyer.page(loc, 200, "✕", "Insufficient wallet balance")
	if _, _, err := ts.store.CreditWallet(ctx, app.ID, buyerID, 5000, "test:nojs", "test"); err != nil {
		t.Fatal(err)
	}
	loc = buyer.form("/apps/demo/checkout/pay", url.Values{"orderId": {orderID}, "paymentMethod": {"musepay"}})
	if !strings.Contains(loc, "/payment-success?processor=musepay&orderId="+orderID) {
		t.Fatalf("after paying: %s", loc)
	}
	buyer.page(loc, 200, "Payment Successful!", "View Order Details", "Continue Shopping")
	buyer.page("/apps/demo/payment-success", 200, "Missing payment information")
	body := buyer.page("/apps/demo/orders", 200, "Payment Confirmed", "$24.00", "Wallet")
	if strings.Contains(body, "Failed to load orders") {
		t.Fatal("orders page failed")
	}
	other.page("/apps/demo/orders/"+orderID, 404, "Order not found")
	buyer.page("/apps/demo/transactions", 200, "$26.00", "Payment", "Added to wallet", "Welcome credit")

	// Fulfilment: the creator marks it processing, then shipped.
	buyer.page("/apps/demo/manage/orders", 403)
	creator.page("/apps/demo/manage/orders?status=PAID", 200, "Mark Processing", "Refund", "@")
	loc = creator.form("/apps/demo/manage/orders/"+orderID, url.Values{"status": {"SHIPPED"}, "trackingNumber": {"1Z"}})
	creator.page(loc, 200, "✕")
	creator.form("/apps/demo/manage/orders/"+orderID, url.Values{"status": {"PROCESSING"}})
	loc = creator.form("/apps/demo/manage/orders/"+orderID, url.Values{"status": {"SHIPPED"}, "trackingNumber": {"1Z999AA10123456784"}, "filter": {"PAID"}})
	// The shipped order left the Paid filter: back to every order, where
	// it stays in view.
	if strings.Contains(loc, "status=PAID") {
		t.Fatalf("after Mark Shipped from the Paid list: %s", loc)
	}
	shippedOrder, err := ts.store.OrderByID(ctx, orderID)
	if err != nil {
		t.Fatal(err)
	}
	creator.page(loc, 200, "is now Shipped", `data-order="`+shippedOrder.OrderNumber+`"`)
	buyer.page("/apps/demo/orders/"+orderID, 200, "Shipped", "Tracking number: 1Z999AA10123456784", "Please gift wrap", "Portland")
}
