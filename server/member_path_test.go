package server

import (
	"context"
	"strings"
	"testing"

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
