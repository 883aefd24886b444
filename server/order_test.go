package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
)

// caller sends JSON requests as one demo user and decodes the answers.
type caller struct {
	t     *testing.T
	ts    *testServer
	token string
}

func (ts *testServer) as(t *testing.T, email string) *caller {
	c := &caller{t: t, ts: ts}
	if email != "" {
		c.token = sessionFor(t, ts, email)
	}
	return c
}

func (c *caller) call(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	h := map[string]string{}
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	if c.token != "" {
		h["Cookie"] = sessionCookie + "=" + c.token
	}
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	var res response
	if rd != nil {
		res = c.ts.do(c.t, method, path, rd, h)
	} else {
		res = c.ts.do(c.t, method, path, nil, h)
	}
	out := map[string]any{}
	_ = json.Unmarshal([]byte(res.Body), &out)
	return res.Status, out
}

// must calls and fails the test unless the status is want.
func (c *caller) must(want int, method, path, body string) map[string]any {
	c.t.Helper()
	status, out := c.call(method, path, body)
	if status != want {
		c.t.Fatalf("%s %s: status %d, want %d: %v", method, path, status, want, out)
	}
	return out
}

func dataOf(out map[string]any) map[string]any {
	d, _ := out["data"].(map[string]any)
	return d
}

const shipTo = `{"firstName":"Ada","lastName":"Lovelace","address":"1 Main St","city":"Portland","state":"OR","zipCode":"97201"}`

func (ts *testServer) userID(t *testing.T, email string) string {
	u, err := ts.store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// The whole life of an order over HTTP: checkout with tampered totals,
// double submit, someone else's order, paying from the wallet (too little,
// then enough), fulfilment moves legal and not, refund to the wallet.
func TestOrderLifecycle(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testOrderLifecycle(t, newTestServer(t, db)) })
}

func testOrderLifecycle(t *testing.T, ts *testServer) {
	ctx := context.Background()
	shop := loadShop(t, ts)
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	buyer, other, creator, visitor := ts.as(t, follower), ts.as(t, subscriber), ts.as(t, "creator@demo.test"), ts.as(t, "")
	base := "/api/store/" + shop.demo
	pins := shop.items["PIN-SET-01"]
	stockBefore := itemStock(t, ts, pins)
	startBalance, _ := ts.store.WalletBalance(ctx, app.ID, ts.userID(t, follower))

	buyer.must(200, "POST", base+"/cart/items", addBody(pins, "", 2))
	cart := dataOf(buyer.must(200, "GET", base+"/cart", ""))
	cartID := cart["id"].(string)

	// Amounts in the body are never read.
	body := fmt.Sprintf(`{"cartId":%q,"shippingAddress":%s,"notes":"gift wrap","paymentMethod":"musepay","total":1,"subtotal":1,"amount":1,"price":1}`, cartID, shipTo)
	order := dataOf(buyer.must(201, "POST", base+"/orders/checkout", body))
	id := order["id"].(string)
	if order["total"].(float64) != 2400 || order["subtotal"].(float64) != 2400 || order["status"] != "PENDING" || order["orderNumber"] == "" {
		t.Fatalf("order %v", order)
	}
	if itemStock(t, ts, pins) != stockBefore-2 {
		t.Fatal("stock not taken")
	}
	// Double submit: the same order, 200.
	again := dataOf(buyer.must(200, "POST", base+"/orders/checkout", body))
	if again["id"] != id {
		t.Fatalf("second checkout made %v", again["id"])
	}
	// Someone else's order is not found; visitors are asked to sign in.
	other.must(404, "GET", base+"/orders/"+id, "")
	other.must(404, "POST", base+"/musepay/process", `{"orderId":"`+id+`"}`)
	other.must(404, "POST", base+"/orders/"+id+"/cancel", "")
	visitor.must(401, "GET", base+"/orders/"+id, "")
	list := buyer.must(200, "GET", base+"/orders", "")
	if items, _ := list["data"].([]any); len(items) != 1 {
		t.Fatalf("orders list %v", list)
	}
	if items, _ := other.must(200, "GET", base+"/orders", "")["data"].([]any); len(items) != 0 {
		t.Fatalf("another member sees %d orders", len(items))
	}

	// Too little in the wallet: 402, nothing charged, still PENDING.
	buyerID := ts.userID(t, follower)
	drain := startBalance
	if drain > 0 {
		if _, _, err := ts.store.Transfer(ctx, store.TransferInput{AppID: app.ID, Reference: "test:drain", Kind: store.TransferPayment,
			From: store.Member(buyerID), To: store.AppRevenue, Amount: drain}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := ts.store.CreditWallet(ctx, app.ID, buyerID, 1000, "test:1", "test"); err != nil {
		t.Fatal(err)
	}
	buyer.must(402, "POST", base+"/musepay/process", `{"orderId":"`+id+`","amount":1}`)
	if dataOf(buyer.must(200, "GET", base+"/orders/"+id, ""))["status"] != "PENDING" {
		t.Fatal("declined payment changed the order")
	}
	if _, _, err := ts.store.CreditWallet(ctx, app.ID, buyerID, 2000, "test:2", "test"); err != nil {
		t.Fatal(err)
	}
	paid := dataOf(buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+id+`","amount":1,"userId":"someone"}`))
	if paid["status"] != "PAID" || paid["walletBalance"].(float64) != 600 {
		t.Fatalf("paid %v", paid)
	}
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+id+`"}`) // a retry charges nothing
	if bal, _ := ts.store.WalletBalance(ctx, app.ID, buyerID); bal != 600 {
		t.Fatalf("balance %d after retry", bal)
	}

	// Fulfilment: only the creator and admins; the machine decides.
	status := func(who *caller, want int, to, extra string) map[string]any {
		return who.must(want, "PUT", base+"/orders/"+id+"/status", `{"status":"`+to+`"`+extra+`}`)
	}
	status(buyer, 403, "PROCESSING", "")
	status(creator, 409, "SHIPPED", `,"trackingNumber":"1Z"`)
	status(creator, 409, "DELIVERED", "")
	status(creator, 403, "PAID", "")
	creator.must(409, "POST", base+"/orders/"+id+"/cancel", "")
	buyer.must(409, "POST", base+"/orders/"+id+"/cancel", "")
	status(creator, 200, "PROCESSING", "")
	status(creator, 409, "PROCESSING", "")
	status(creator, 400, "SHIPPED", "")
	shipped := dataOf(status(creator, 200, "SHIPPED", `,"trackingNumber":"1Z999AA10123456784"`))
	if shipped["trackingNumber"] != "1Z999AA10123456784" || shipped["shippedAt"] == nil {
		t.Fatalf("shipped %v", shipped)
	}
	seen := dataOf(buyer.must(200, "GET", base+"/orders/"+id, ""))
	if seen["status"] != "SHIPPED" || seen["trackingNumber"] != "1Z999AA10123456784" {
		t.Fatalf("buyer sees %v", seen)
	}
	creator.must(400, "POST", base+"/orders/"+id+"/refund", `{"reason":""}`)
	buyer.must(403, "POST", base+"/orders/"+id+"/refund", `{"reason":"please"}`)
	refunded := dataOf(creator.must(200, "POST", base+"/orders/"+id+"/refund", `{"reason":"Arrived damaged"}`))
	if refunded["status"] != "REFUNDED" || refunded["refundReason"] != "Arrived damaged" || refunded["refundedAt"] == nil {
		t.Fatalf("refunded %v", refunded)
	}
	creator.must(409, "POST", base+"/orders/"+id+"/refund", `{"reason":"again"}`)
	if bal, _ := ts.store.WalletBalance(ctx, app.ID, buyerID); bal != 3000 {
		t.Fatalf("balance %d after refund, want 3000", bal)
	}
	all := creator.must(200, "GET", base+"/manage/orders?status=REFUNDED", "")
	if items, _ := all["data"].([]any); len(items) != 1 {
		t.Fatalf("manage list %v", all)
	}
	buyer.must(403, "GET", base+"/manage/orders", "")
	creator.must(400, "GET", base+"/manage/orders?status=LOST", "")

	// A buyer cancels their own unpaid order; the stock comes back.
	buyer.must(200, "POST", base+"/cart/items", addBody(pins, "", 3))
	second := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"shippingAddress":`+shipTo+`}`))
	if itemStock(t, ts, pins) != stockBefore-5 {
		t.Fatal("stock not taken for the second order")
	}
	cancelled := dataOf(buyer.must(200, "POST", base+"/orders/"+second["id"].(string)+"/cancel", ""))
	if cancelled["status"] != "CANCELLED" || cancelled["cancelledAt"] == nil || itemStock(t, ts, pins) != stockBefore-2 {
		t.Fatalf("cancel %v, stock %d", cancelled, itemStock(t, ts, pins))
	}
	buyer.must(409, "POST", base+"/musepay/process", `{"orderId":"`+second["id"].(string)+`"}`)

	// The wallet shows every movement.
	w := dataOf(buyer.must(200, "GET", base+"/wallet", ""))
	if w["balance"].(float64) != 3000 || len(w["movements"].([]any)) < 4 {
		t.Fatalf("wallet %v", w)
	}
	cfg := dataOf(buyer.must(200, "GET", base+"/stripe-payments/config", ""))
	if cfg["crypto"].(map[string]any)["enabled"] != true || cfg["paypal"].(map[string]any)["enabled"] != false {
		t.Fatalf("config %v", cfg)
	}
	visitor.must(401, "GET", base+"/stripe-payments/config", "")
}

// The shipping step after the order exists; paying needs it for physical
// items.
func TestCheckoutShippingStep(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testCheckoutShippingStep(t, newTestServer(t, db)) })
}

func testCheckoutShippingStep(t *testing.T, ts *testServer) {
	ctx := context.Background()
	shop := loadShop(t, ts)
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	buyer := ts.as(t, follower)
	base := "/api/store/" + shop.demo
	if _, _, err := ts.store.CreditWallet(ctx, app.ID, ts.userID(t, follower), 100000, "test:ship", ""); err != nil {
		t.Fatal(err)
	}
	buyer.must(400, "POST", base+"/orders/checkout", `{}`) // empty cart
	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["PIN-SET-01"], "", 1))
	buyer.must(400, "POST", base+"/orders/checkout", `{"paymentMethod":"bitcoin"}`)
	o := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"paymentMethod":"musepay"}`))
	id := o["id"].(string)
	if o["needsShipping"] != true {
		t.Fatalf("needsShipping %v", o["needsShipping"])
	}
	buyer.must(400, "POST", base+"/musepay/process", `{"orderId":"`+id+`"}`)
	buyer.must(400, "PUT", base+"/orders/"+id+"/shipping", `{"firstName":"Ada"}`)
	buyer.must(400, "PUT", base+"/orders/"+id+"/shipping", strings.Replace(shipTo, `"zipCode"`, `"country":"XX","zipCode"`, 1))
	ts.as(t, subscriber).must(404, "PUT", base+"/orders/"+id+"/shipping", shipTo)
	saved := dataOf(buyer.must(200, "PUT", base+"/orders/"+id+"/shipping", `{"shippingAddress":`+shipTo+`}`))
	if !strings.Contains(saved["shippingAddress"].(string), `"country":"US"`) {
		t.Fatalf("address %v", saved["shippingAddress"])
	}
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+id+`"}`)
	buyer.must(409, "PUT", base+"/orders/"+id+"/shipping", shipTo)
}

func itemStock(t *testing.T, ts *testServer, id string) int64 {
	t.Helper()
	it, err := ts.store.ItemByID(context.Background(), id)
	if err != nil || it.Stock == nil {
		t.Fatalf("item %s: %v", id, err)
	}
	return *it.Stock
}

// 20 concurrent checkout calls for one cart (a double click times ten):
// one order, one 201, and every answer names it.
func TestCheckoutDoubleSubmitOverHTTP(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	shop := loadShop(t, ts)
	buyer := ts.as(t, follower)
	base := "/api/store/" + shop.demo
	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["PIN-SET-01"], "", 1))
	cartID := dataOf(buyer.must(200, "GET", base+"/cart", ""))["id"].(string)
	body := fmt.Sprintf(`{"cartId":%q,"shippingAddress":%s}`, cartID, shipTo)
	type answer struct {
		status int
		id     string
	}
	answers := make(chan answer, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, out := buyer.call("POST", base+"/orders/checkout", body)
			id, _ := dataOf(out)["id"].(string)
			answers <- answer{status, id}
		}()
	}
	wg.Wait()
	close(answers)
	created, ids := 0, map[string]bool{}
	for a := range answers {
		if a.status == 201 {
			created++
		} else if a.status != 200 {
			t.Errorf("status %d", a.status)
		}
		ids[a.id] = true
	}
	if created != 1 || len(ids) != 1 {
		t.Fatalf("%d created, ids %v", created, ids)
	}
	n, err := db.NewSelect().Model((*store.Order)(nil)).Where("cart_id = ?", cartID).Count(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("%d orders (%v)", n, err)
	}
}
