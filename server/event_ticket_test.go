package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"marquee/store"
)

// attendances counts the member's attendee rows for the event: the unique
// (event_id, user_id) allows at most one, and that is what is checked.
func attendances(t *testing.T, ts *testServer, eventID, userID string) int {
	t.Helper()
	n, err := ts.store.DB().NewSelect().Model((*store.Attendee)(nil)).Where("event_id = ? AND user_id = ?", eventID, userID).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// Tickets end to end on PostgreSQL: the creator links a ticket to an event
// (not to another app's), the event page sells it instead of a free join,
// the join call refuses, paying with the wallet (twenty concurrent process
// calls, then a second ticket order) makes the buyer an attendee exactly
// once, and refunds take the attendance back only when no paid ticket is
// left.
func TestEventTickets(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	shop := loadShop(t, ts)
	demoApp := appID(t, ts, "demo")
	sketch := eventID(t, ts, "Sketch & Synth Meetup")
	acmeEvent := eventID(t, ts, "Open Workshop Night")
	creator, buyer := ts.as(t, "creator@demo.test"), ts.as(t, follower)
	buyerID := userID(t, ts, follower)
	base := "/api/store/" + shop.demo
	item := func(typ, event string) string {
		return fmt.Sprintf(`{"name":"Meetup ticket","type":%q,"price":1500,"stock":null,"eventId":%q}`, typ, event)
	}

	// Linking: another app's event reads as missing; only tickets link.
	creator.must(400, "POST", base+"/items", item("EVENT_TICKET", acmeEvent))
	creator.must(400, "POST", base+"/items", item("PHYSICAL", sketch))
	created := dataOf(creator.must(201, "POST", base+"/items", item("EVENT_TICKET", sketch)))
	ticket := created["id"].(string)
	if created["eventId"] != sketch {
		t.Fatalf("ticket not linked: %v", created)
	}
	// Editing cannot move it to another app's event either; the link stays.
	creator.must(400, "PUT", "/api/store/items/"+ticket, item("EVENT_TICKET", acmeEvent))
	if it, _ := ts.store.ItemByID(ctx, ticket); it.EventID == nil || *it.EventID != sketch {
		t.Fatalf("link changed by a refused edit: %v", it.EventID)
	}

	ts.run(t, []scenario{
		{name: "event offers the ticket", path: "/api/events/" + sketch, as: follower, status: 200,
			json: map[string]any{"data.ticket.itemId": ticket, "data.ticket.price": 1500, "data.permissions.canJoin": false}},
		{name: "free join refused", method: "POST", path: "/api/events/" + sketch + "/join", as: follower, status: 403,
			json: map[string]any{"message": "This event requires a ticket"}},
		{name: "page sells the ticket", path: "/apps/demo/events/" + sketch, status: 200,
			contains: []string{"Get Ticket", "/apps/demo/store/items/" + ticket}, absent: []string{"Sign in to join"}},
		{name: "item page names the event", path: "/apps/demo/store/items/" + ticket, status: 200,
			contains: []string{"Ticket for", "/apps/demo/events/" + sketch}},
		{name: "member page too", path: "/apps/demo/events/" + sketch, as: follower, status: 200,
			contains: []string{"Get Ticket"}, absent: []string{"Join Event"}},
	})
	if n := attendances(t, ts, sketch, buyerID); n != 0 {
		t.Fatalf("refused join left %d rows", n)
	}

	// Buy it with the wallet; a double click times twenty pays once.
	if _, _, err := ts.store.CreditWallet(ctx, demoApp, buyerID, 5000, "test:tickets", "test"); err != nil {
		t.Fatal(err)
	}
	order := func() string {
		buyer.must(200, "POST", base+"/cart/items", addBody(ticket, "", 1))
		o := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"paymentMethod":"musepay"}`))
		return o["id"].(string)
	}
	before, _ := ts.store.WalletBalance(ctx, demoApp, buyerID)
	first := order()
	// Rendered (and cached) between checkout and payment: paying must
	// drop it, since hooks change what it shows.
	ts.run(t, []scenario{{name: "page before paying", path: "/apps/demo/events/" + sketch, status: 200, contains: []string{`attendee-count">1<`}}})
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			statuses[i], _ = buyer.call("POST", base+"/musepay/process", `{"orderId":"`+first+`"}`)
		}(i)
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Fatalf("process call %d: %d", i, s)
		}
	}
	if n := attendances(t, ts, sketch, buyerID); n != 1 {
		t.Fatalf("%d attendances after paying", n)
	}
	if bal, _ := ts.store.WalletBalance(ctx, demoApp, buyerID); bal != before-1500 {
		t.Fatalf("balance %d, want %d (charged once)", bal, before-1500)
	}
	ts.run(t, []scenario{
		{name: "buyer attends", path: "/api/events/" + sketch, as: follower, status: 200,
			json: map[string]any{"data.isAttending": true, "data.userRole": "ATTENDEE", "data.attendeeCount": 2}},
		{name: "join again is a no-op", method: "POST", path: "/api/events/" + sketch + "/join", as: follower, status: 200,
			json: map[string]any{"message": "Already attending", "data.attendeeCount": 2}},
		{name: "cached page shows it", path: "/apps/demo/events/" + sketch, status: 200, contains: []string{`attendee-count">2<`}},
	})

	// A second ticket: still one attendance; refunding one of two keeps it.
	second := order()
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+second+`"}`)
	if n := attendances(t, ts, sketch, buyerID); n != 1 {
		t.Fatalf("%d attendances after a second ticket", n)
	}
	creator.must(200, "POST", base+"/orders/"+first+"/refund", `{"reason":"Cannot come"}`)
	if n := attendances(t, ts, sketch, buyerID); n != 1 {
		t.Fatal("refunding one of two tickets removed the attendance")
	}
	ts.run(t, []scenario{{name: "page before refund", path: "/apps/demo/events/" + sketch, status: 200, contains: []string{`attendee-count">2<`}}})
	creator.must(200, "POST", base+"/orders/"+second+"/refund", `{"reason":"Cannot come"}`)
	if n := attendances(t, ts, sketch, buyerID); n != 0 {
		t.Fatal("refund left the attendance")
	}
	ts.run(t, []scenario{
		{name: "refunded buyer no longer attends", path: "/api/events/" + sketch, as: follower, status: 200,
			json: map[string]any{"data.isAttending": false, "data.attendeeCount": 1}},
		{name: "cached page after refund", path: "/apps/demo/events/" + sketch, status: 200, contains: []string{`attendee-count">1<`}},
		{name: "host still hosts", path: "/api/events/" + sketch, as: "creator@demo.test", status: 200,
			json: map[string]any{"data.userRole": "HOST"}},
	})

	// Deleting the ticket makes the event free to join again.
	creator.must(200, "DELETE", "/api/store/items/"+ticket, "")
	ts.run(t, []scenario{
		{name: "free again", method: "POST", path: "/api/events/" + sketch + "/join", as: follower, status: 200,
			json: map[string]any{"message": "Joined event", "data.ticket": nil}},
	})

	// Deleting an event unlinks its tickets (they stay for their orders).
	gone := dataOf(creator.must(201, "POST", "/api/events/apps/"+demoApp+"/events", eventBody(nil)))["id"].(string)
	linked := dataOf(creator.must(201, "POST", base+"/items", item("EVENT_TICKET", gone)))["id"].(string)
	creator.must(200, "DELETE", "/api/events/"+gone, "")
	if it, err := ts.store.ItemByID(ctx, linked); err != nil || it.EventID != nil {
		t.Fatalf("ticket of a deleted event: %v %v", it, err)
	}
}
