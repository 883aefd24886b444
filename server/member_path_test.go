package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// A paid ticket is never lost (issue 27, item 1): the demo ticket admits to
// its event; its buyer who leaves keeps the paid order and the ticket, the
// page offers Rejoin (not Get Ticket), joining again is free and charges
// nothing, and leaving without JavaScript asks first.
func TestTicketHolderLeavesAndRejoins(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	shop := loadShop(t, ts)
	demoApp := appID(t, ts, "demo")
	summer := eventID(t, ts, "Summer Tour Kick-off")
	ticket := shop.items["TIX-ST-01"]
	const buyerEmail = "moderator@demo.test" // not attending the tour in the seed
	buyer := ts.as(t, buyerEmail)
	buyerID := userID(t, ts, buyerEmail)
	base := "/api/store/" + shop.demo

	// The seed links the ticket to its event, so joining for free is refused.
	if it, err := ts.store.ItemByID(ctx, ticket); err != nil || it.EventID == nil || *it.EventID != summer {
		t.Fatalf("demo ticket not linked to its event: %v %v", it, err)
	}
	ts.run(t, []scenario{
		{name: "not a holder yet", path: "/api/events/" + summer, as: buyerEmail, status: 200,
			json: map[string]any{"data.ticket.itemId": ticket, "data.ticket.held": false, "data.permissions.canJoin": false}},
		{name: "free join refused", method: "POST", path: "/api/events/" + summer + "/join", as: buyerEmail, status: 403,
			json: map[string]any{"message": "This event requires a ticket"}},
	})

	// Buy the $35 ticket with the wallet.
	if _, _, err := ts.store.CreditWallet(ctx, demoApp, buyerID, 10000, "test:ticket-holder", "test"); err != nil {
		t.Fatal(err)
	}
	buyer.must(200, "POST", base+"/cart/items", addBody(ticket, "", 1))
	order := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"paymentMethod":"musepay"}`))["id"].(string)
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+order+`"}`)
	paidBalance, _ := ts.store.WalletBalance(ctx, demoApp, buyerID)
	if n := attendances(t, ts, summer, buyerID); n != 1 {
		t.Fatalf("%d attendances after paying", n)
	}

	// Leaving with JavaScript off asks first and changes nothing yet.
	form := commUser(t, ts, buyerEmail)
	form["Content-Type"] = "application/x-www-form-urlencoded"
	r := ts.do(t, "POST", "/apps/demo/events/"+summer+"/attend", strings.NewReader("action=leave"), form)
	if r.Status != 303 || r.Header.Get("Location") != "/apps/demo/events/"+summer+"?confirm=leave" {
		t.Fatalf("unconfirmed leave: %d %s", r.Status, r.Header.Get("Location"))
	}
	if n := attendances(t, ts, summer, buyerID); n != 1 {
		t.Fatal("an unconfirmed leave removed the attendance")
	}
	ts.run(t, []scenario{
		{name: "the page asks", path: "/apps/demo/events/" + summer + "?confirm=leave", as: buyerEmail, status: 200,
			contains: []string{"Leave Summer Tour Kick-off?", "Your ticket stays yours", `name="confirm" value="yes"`, "Yes, leave", "Stay"}},
		{name: "no question without asking", path: "/apps/demo/events/" + summer, as: buyerEmail, status: 200,
			contains: []string{"Leave Event"}, absent: []string{"Yes, leave"}},
		// A member who does not attend is not asked to leave.
		{name: "non-attendee not asked", path: "/apps/demo/events/" + summer + "?confirm=leave", as: "aria@demo.test", status: 200,
			absent: []string{"Yes, leave"}},
	})

	// Confirmed: the attendance goes, the ticket and the paid order stay.
	r = ts.do(t, "POST", "/apps/demo/events/"+summer+"/attend", strings.NewReader("action=leave&confirm=yes"), form)
	if r.Status != 303 || r.Header.Get("Location") != "/apps/demo/events/"+summer {
		t.Fatalf("confirmed leave: %d %s", r.Status, r.Header.Get("Location"))
	}
	if n := attendances(t, ts, summer, buyerID); n != 0 {
		t.Fatal("confirmed leave kept the attendance")
	}
	ts.run(t, []scenario{
		{name: "order stays paid", path: base + "/orders/" + order, as: buyerEmail, status: 200,
			json: map[string]any{"data.status": store.OrderPaid}},
		{name: "holder may rejoin", path: "/api/events/" + summer, as: buyerEmail, status: 200,
			json: map[string]any{"data.isAttending": false, "data.ticket.held": true, "data.permissions.canJoin": true}},
		{name: "page offers Rejoin, not Get Ticket", path: "/apps/demo/events/" + summer, as: buyerEmail, status: 200,
			contains: []string{"Rejoin Event", "rejoining is free"}, absent: []string{"Get Ticket"}},
		{name: "rejoin is free", method: "POST", path: "/api/events/" + summer + "/join", as: buyerEmail, status: 200,
			json: map[string]any{"message": "Joined event", "data.isAttending": true, "data.userRole": "ATTENDEE"}},
		// Through the API too: leave, then join again.
		{name: "leave by API", method: "DELETE", path: "/api/events/" + summer + "/leave", as: buyerEmail, status: 200,
			json: map[string]any{"message": "Left event", "data.isAttending": false}},
		{name: "join by API again", method: "POST", path: "/api/events/" + summer + "/join", as: buyerEmail, status: 200,
			json: map[string]any{"message": "Joined event"}},
		// Someone else's ticket admits no one else.
		{name: "other member still refused", method: "POST", path: "/api/events/" + summer + "/join", as: "aria@demo.test", status: 403,
			json: map[string]any{"message": "This event requires a ticket"}},
	})
	if bal, _ := ts.store.WalletBalance(ctx, demoApp, buyerID); bal != paidBalance {
		t.Fatalf("rejoining charged: balance %d, want %d", bal, paidBalance)
	}

	// A refund gives the ticket back: the attendance ends and joining is
	// refused again.
	ts.as(t, "creator@demo.test").must(200, "POST", base+"/orders/"+order+"/refund", `{"reason":"Cannot come"}`)
	ts.run(t, []scenario{
		{name: "refunded: no longer held", path: "/api/events/" + summer, as: buyerEmail, status: 200,
			json: map[string]any{"data.isAttending": false, "data.ticket.held": false, "data.permissions.canJoin": false}},
		{name: "refunded: join refused", method: "POST", path: "/api/events/" + summer + "/join", as: buyerEmail, status: 403},
	})
}

// Variants are chosen, not guessed (issue 27, item 2): an item with
// variants does not go in the cart without one (API 400 with a clear
// message and the field; the JavaScript-off form comes back to the item,
// which asks), and the chosen size shows in the cart, at checkout and on the
// order. A line left without a size from before cannot become an order.
func TestVariantIsChosenNotGuessed(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	ids := loadShop(t, ts)
	hoodie, hoodieM := ids.items["HOOD-LH-01"], ids.variants["HOOD-LH-01/M"]
	tee, teeL := ids.items["TEE-NS-01"], ids.variants["TEE-NS-01/L"]
	base := "/api/store/" + ids.demo
	const msg = "Please choose a size for Lighthouse Hoodie"
	form := commUser(t, ts, follower)
	form["Content-Type"] = "application/x-www-form-urlencoded"

	ts.run(t, []scenario{
		{name: "no variant refused", method: "POST", path: base + "/cart/items", as: follower, body: addBody(hoodie, "", 1), status: 400,
			json: map[string]any{"success": false, "message": msg, "fields.variantId": msg}},
		{name: "empty variant refused too", method: "POST", path: base + "/cart/items", as: follower,
			body: `{"storeItemId":"` + hoodie + `","variantId":"","quantity":1}`, status: 400, json: map[string]any{"message": msg}},
		{name: "another item names its own variant", method: "POST", path: base + "/cart/items", as: follower,
			body: addBody(ids.items["SRV-MIX-01"], "", 1), status: 400,
			json: map[string]any{"message": "Please choose a length for Mix Feedback Session"}},
		{name: "nothing was added", path: base + "/cart", as: follower, status: 404},
		{name: "an item without variants needs none", method: "POST", path: base + "/cart/items", as: follower,
			body: addBody(ids.items["PIN-SET-01"], "", 1), status: 200, json: map[string]any{"data.items": arrayLen(1)}},
		{name: "with a size", method: "POST", path: base + "/cart/items", as: follower, body: addBody(hoodie, hoodieM, 1), status: 200,
			json: map[string]any{"data.items": arrayLen(2)}},
		{name: "the item page renders required choices", path: "/apps/demo/store/items/" + hoodie, as: follower, status: 200,
			contains: []string{`name="variantId"`, "required"}, absent: []string{msg}},
	})

	// JavaScript off: the form without a size comes back to the item, which asks.
	r := ts.do(t, "POST", "/apps/demo/cart/items", strings.NewReader("storeItemId="+tee+"&quantity=1"), form)
	if r.Status != 303 || r.Header.Get("Location") != "/apps/demo/store/items/"+tee+"?choose=variant" {
		t.Fatalf("form without a size: %d %s", r.Status, r.Header.Get("Location"))
	}
	ts.run(t, []scenario{{name: "the page asks", path: "/apps/demo/store/items/" + tee + "?choose=variant", as: follower, status: 200,
		contains: []string{"Please choose a size for Night Shift Tour Tee", `aria-invalid="true"`, "needs-choice"}}})
	r = ts.do(t, "POST", "/apps/demo/cart/items", strings.NewReader("storeItemId="+tee+"&variantId="+teeL+"&quantity=1"), form)
	if r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), "?added=1") {
		t.Fatalf("form with a size: %d %s", r.Status, r.Header.Get("Location"))
	}

	// The chosen sizes show in the cart (JSON and the page without JavaScript).
	cart := dataOf(ts.as(t, follower).must(200, "GET", base+"/cart", ""))
	sizes := map[string]string{}
	for _, l := range cart["items"].([]any) {
		line := l.(map[string]any)
		for _, v := range line["selectedVariants"].([]any) {
			sizes[line["itemId"].(string)] = v.(map[string]any)["name"].(string) + ": " + v.(map[string]any)["value"].(string)
		}
	}
	if sizes[hoodie] != "Size: M" || sizes[tee] != "Size: L" {
		t.Fatalf("cart sizes: %v", sizes)
	}
	ts.run(t, []scenario{
		{name: "cart page", path: "/apps/demo/cart", as: follower, status: 200, contains: []string{"Size: M", "Size: L"}},
		{name: "checkout page", path: "/apps/demo/checkout", as: follower, status: 200, contains: []string{"Size: M", "Size: L"}},
	})

	// A line without a size from before the rule is flagged and refused at
	// checkout, in the same words.
	var cartID string
	if err := ts.store.DB().NewSelect().Model((*store.Cart)(nil)).Column("id").Where("store_id = ? AND user_id = ?", ids.demo, userID(t, ts, follower)).
		Scan(ctx, &cartID); err != nil {
		t.Fatal(err)
	}
	old := &store.CartItem{ID: store.NewID(), AppID: appID(t, ts, "demo"), CartID: cartID, StoreItemID: ids.items["SRV-MIX-01"], Quantity: 1, CreatedAt: time.Now().UTC()}
	if _, err := ts.store.DB().NewInsert().Model(old).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ts.run(t, []scenario{
		{name: "old line flagged", path: base + "/cart", as: follower, status: 200,
			json: map[string]any{"data.items.3.issue": "VARIANT_REQUIRED", "data.items.3.available": false}},
		{name: "cart page says so", path: "/apps/demo/cart", as: follower, status: 200, contains: []string{"No size chosen"}},
		{name: "checkout refuses it", method: "POST", path: base + "/orders/checkout", as: follower,
			body: `{"paymentMethod":"musepay","shippingAddress":` + shipTo + `}`, status: 400,
			json: map[string]any{"message": "Please choose a length for Mix Feedback Session"}},
	})
	ts.as(t, follower).must(200, "DELETE", base+"/cart/items/"+old.ID, "")

	// The order keeps the sizes: JSON, the order page and the orders list.
	order := dataOf(ts.as(t, follower).must(201, "POST", base+"/orders/checkout", `{"paymentMethod":"musepay","shippingAddress":`+shipTo+`}`))
	id := order["id"].(string)
	got := map[string]any{}
	for _, it := range order["items"].([]any) {
		line := it.(map[string]any)
		got[line["storeItemId"].(string)] = line["customOptions"]
	}
	if o, _ := got[hoodie].(map[string]any); o["Size"] != "M" {
		t.Fatalf("order hoodie options: %v", got)
	}
	if o, _ := got[tee].(map[string]any); o["Size"] != "L" {
		t.Fatalf("order tee options: %v", got)
	}
	ts.run(t, []scenario{
		{name: "order page", path: "/apps/demo/orders/" + id, as: follower, status: 200, contains: []string{"Size: M", "Size: L"}},
	})
}
