package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"marquee/server/payments/paymentstest"
	"marquee/store"
)

// A donation by card: /process makes one PaymentIntent for the stored
// amount (however often and however concurrently it is called), and the
// donation counts (status, totals, tier) only once Stripe says the money
// arrived, by a signed webhook or a later process call that re-reads the
// intent. Forged webhooks are refused, repeated ones apply once, one with
// another amount pays nothing.
func TestDonationByCard(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	creator := commUser(t, f.ts, "creator@demo.test")
	uid := f.userID(t, email)
	standing := func() *store.DonorStanding {
		t.Helper()
		s, err := f.ts.store.DonorStandingOf(ctx, f.demo.ID, uid)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	startTotal := standing().Total
	create := func(cents int64) string {
		t.Helper()
		a := decodePay(t, f.ts.do(t, "POST", "/api/donations/create", body(map[string]any{"appId": "demo", "amount": cents, "currency": "USD", "message": "by card"}), as))
		id, _ := a.Data["id"].(string)
		if id == "" {
			t.Fatalf("create: %+v", a)
		}
		return id
	}
	process := func(id string) payAnswer {
		t.Helper()
		return decodePay(t, f.ts.do(t, "POST", "/api/donations/process", body(map[string]any{"donationId": id, "paymentMethod": "stripe"}), as))
	}
	listed := func() (count int, amount int64) {
		t.Helper()
		a := decodePay(t, f.ts.do(t, "GET", "/api/donations/apps/"+f.demo.ID, nil, creator))
		totals, _ := a.Data["totals"].(map[string]any)
		if totals == nil {
			t.Fatalf("donations list: %+v", a)
		}
		return int(totals["count"].(float64)), int64(totals["amount"].(float64))
	}
	count0, amount0 := listed()

	id := create(2500)
	// Five process calls at once, then one more: one PaymentIntent.
	var wg sync.WaitGroup
	refs := make([]string, 5)
	for i := range refs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a := process(id)
			if p, _ := a.Data["payment"].(map[string]any); p != nil {
				refs[i], _ = p["ref"].(string)
			}
		}(i)
	}
	wg.Wait()
	a := process(id)
	pay, _ := a.Data["payment"].(map[string]any)
	if !a.Success || a.Message != "Payment started" || a.Data["status"] != store.DonationPending || pay == nil || pay["clientSecret"] == "" {
		t.Fatalf("process by card: %+v", a)
	}
	pi := pay["ref"].(string)
	for i, r := range refs {
		if r != pi {
			t.Fatalf("call %d got intent %q, want %q", i, r, pi)
		}
	}
	if n := f.stripe.IntentCount(); n != 1 {
		t.Fatalf("%d PaymentIntents for one donation", n)
	}
	in := f.stripe.Intent(pi)
	if meta, _ := in["metadata"].(map[string]any); int64(in["amount"].(float64)) != 2500 || in["currency"] != "usd" || meta["donationId"] != id || meta["orderId"] != nil {
		t.Fatalf("intent %+v", in)
	}
	// Started is not paid: nothing counts yet.
	if s := standing(); s.Total != startTotal {
		t.Fatalf("a started card donation counted: %+v", s)
	}

	// The browser's Payment Element confirms; Stripe says so by webhook.
	f.stripe.Succeed(pi)
	var succeeded paymentstest.SignedEvent
	for _, ev := range f.stripe.Events() {
		if ev.Type == "payment_intent.succeeded" {
			succeeded = ev
		}
	}
	forger := paymentstest.NewStripe("whsec_attacker")
	commExpect(t, "forged", stripeHook(t, f, succeeded.Payload, forger.Sign(succeeded.Payload, time.Now())), 400, msgInvalidSignature)
	commExpect(t, "stale", stripeHook(t, f, succeeded.Payload, f.stripe.Sign(succeeded.Payload, time.Now().Add(-10*time.Minute))), 400, msgInvalidSignature)
	if d, _ := f.ts.store.DonationByID(ctx, id); d.Status != store.DonationPending {
		t.Fatalf("a refused webhook paid the donation: %+v", d)
	}
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			codes[i] = stripeHook(t, f, succeeded.Payload, succeeded.Header).Status
		}(i)
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("delivery %d: %d", i, c)
		}
	}
	d, _ := f.ts.store.DonationByID(ctx, id)
	if d.Status != store.DonationPaid || d.PaymentMethod != "stripe" || d.PaymentRef != pi || d.ProcessedAt == nil || eventCount(t, db, "stripe", succeeded.ID) != 1 {
		t.Fatalf("after the webhook: %+v", d)
	}
	if s := standing(); s.Total != startTotal+2500 || s.Tier == nil {
		t.Fatalf("standing after a card donation: %+v", s)
	}
	if c, amt := listed(); c != count0+1 || amt != amount0+2500 {
		t.Fatalf("creator's list: %d %d", c, amt)
	}
	// Processing it again answers it paid, and makes nothing new.
	if a := process(id); a.Message != "Thank you for your support!" || a.Data["status"] != store.DonationPaid || a.Data["payment"] != nil || f.stripe.IntentCount() != 1 {
		t.Fatalf("process after paid: %+v", a)
	}

	// Without a webhook, the next process call asks Stripe and finishes it;
	// the webhook arriving later applies nothing twice.
	id2 := create(700)
	pi2 := process(id2).Data["payment"].(map[string]any)["ref"].(string)
	f.stripe.Succeed(pi2)
	if a := process(id2); a.Data["status"] != store.DonationPaid {
		t.Fatalf("process after the card was confirmed: %+v", a)
	}
	evs := f.stripe.Events()
	late := evs[len(evs)-1]
	commExpect(t, "late webhook", stripeHook(t, f, late.Payload, late.Header), 200, store.OutcomeAlready)
	if c, amt := listed(); c != count0+2 || amt != amount0+3200 {
		t.Fatalf("creator's list after two: %d %d", c, amt)
	}

	// A signed event for another amount than the donation's pays nothing.
	id3 := create(900)
	pi3 := process(id3).Data["payment"].(map[string]any)["ref"].(string)
	odd := f.stripe.Event("payment_intent.succeeded", map[string]any{"id": pi3, "object": "payment_intent", "status": "succeeded",
		"amount": 900, "amount_received": 100, "currency": "usd", "metadata": map[string]any{"donationId": id3}})
	commExpect(t, "other amount", stripeHook(t, f, odd.Payload, odd.Header), 200, store.OutcomeMismatch)
	if d, _ := f.ts.store.DonationByID(ctx, id3); d.Status != store.DonationPending {
		t.Fatalf("a short payment paid the donation: %+v", d)
	}

	// A declined card leaves the donation to be paid with another card.
	id4 := create(600)
	pi4 := process(id4).Data["payment"].(map[string]any)["ref"].(string)
	f.stripe.Decline(pi4)
	if a := process(id4); a.Data["status"] != store.DonationPending || a.Data["payment"].(map[string]any)["ref"] != pi4 {
		t.Fatalf("after a decline: %+v", a)
	}
	// Someone else's donation is not there to pay.
	other := commUser(t, f.ts, "subscriber@demo.test")
	commExpect(t, "not yours", f.ts.do(t, "POST", "/api/donations/process", body(map[string]any{"donationId": id4, "paymentMethod": "stripe"}), other), 404, "Donation not found")
	if c, amt := listed(); c != count0+2 || amt != amount0+3200 {
		t.Fatalf("unpaid donations counted: %d %d", c, amt)
	}
	// A card that needed a redirect comes back to the donate page, which
	// asks Stripe before thanking.
	f.stripe.Succeed(pi4)
	r := f.ts.do(t, "GET", "/apps/demo/donate?donation="+id4, nil, as)
	commExpect(t, "back from the card", r, 200, "Thank you for your support!")
	if d, _ := f.ts.store.DonationByID(ctx, id4); d.Status != store.DonationPaid {
		t.Fatalf("return page did not settle the donation: %+v", d)
	}
}

// Without JavaScript the donate page pays from the wallet, and says that
// a card needs JavaScript.
func TestDonatePageSaysCardNeedsJavaScript(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	as := commUser(t, f.ts, "follower@demo.test")
	commExpect(t, "donate page", f.ts.do(t, "GET", "/apps/demo/donate", nil, as), 200, "Paying by card needs JavaScript")
}
