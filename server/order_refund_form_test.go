package server

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"marquee/store"
	"marquee/store/storetest"
)

// paidByWallet gives email price in their wallet, makes a PENDING order of
// one DIGITAL item at price and pays it from the wallet, answering the
// order and the transactionId musepay/process answered.
func (f *payFixture) paidByWallet(t *testing.T, email string, price int64) (*store.Order, string) {
	t.Helper()
	if _, _, err := f.ts.store.CreditWallet(context.Background(), f.shop.AppID, f.userID(t, email), price, "test:"+store.NewID(), "test"); err != nil {
		t.Fatal(err)
	}
	o := f.order(t, email, price)
	a := decodePay(t, f.post(t, "/musepay/process", commUser(t, f.ts, email), map[string]any{"orderId": o.ID}))
	tx, _ := a.Data["transactionId"].(string)
	if !a.Success || tx == "" {
		t.Fatalf("wallet pay: %+v", a)
	}
	return o, tx
}

func (f *payFixture) balance(t *testing.T, email string) int64 {
	t.Helper()
	b, err := f.ts.store.WalletBalance(context.Background(), f.shop.AppID, f.userID(t, email))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refundForm posts the order page's refund form as the creator and
// answers where it leads.
func (f *payFixture) refundForm(t *testing.T, orderID, amount, reason string) string {
	t.Helper()
	r := f.ts.do(t, "POST", "/apps/demo/orders/"+orderID+"/refund", strings.NewReader(url.Values{"amount": {amount}, "reason": {reason}}.Encode()),
		form(withSession(sessionFor(t, f.ts, "creator@demo.test"))))
	if r.Status != 303 {
		t.Fatalf("refund form: %d %.300s", r.Status, r.Body)
	}
	loc, _ := url.QueryUnescape(r.Header.Get("Location"))
	return loc
}

// A $10 wallet order refunded $3 from the order page, then in parts by
// both refund calls (SPEC's stripe-payments/refund names a wallet order by
// its id or its transactionId), then the rest: the buyer's wallet gets
// each part back, the page shows what was refunded so far, and only the
// whole refund takes the download back.
func TestWalletRefundsFromTheStudio(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	const buyer = "follower@demo.test"
	before := f.balance(t, buyer)
	o, txID := f.paidByWallet(t, buyer, 1000)
	ctx := context.Background()
	view, err := f.ts.store.OrderOf(ctx, f.shop.ID, "", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	itemID := view.Items[0].StoreItemID

	if loc := f.refundForm(t, o.ID, "3", "Arrived late"); !strings.Contains(loc, "notice=Refunded $3.00 of $10.00 so far") {
		t.Fatalf("after a $3 refund: %s", loc)
	}
	got := f.reload(t, o.ID)
	if got.Status != store.OrderPaid || got.RefundedAmount != 300 || got.RefundReason != "Arrived late" || f.balance(t, buyer) != before+300 {
		t.Fatalf("after $3: %s %d %q, balance %d (was %d)", got.Status, got.RefundedAmount, got.RefundReason, f.balance(t, buyer), before)
	}
	if ok, _ := f.ts.store.HasDownload(ctx, o.AppID, o.UserID, itemID); !ok {
		t.Fatal("a partial refund took the download")
	}
	creator := withSession(sessionFor(t, f.ts, "creator@demo.test"))
	page := f.ts.do(t, "GET", "/apps/demo/orders/"+o.ID, nil, creator)
	for _, want := range []string{"Refunded so far", "$3.00 of $10.00", `action="/apps/demo/orders/` + o.ID + `/refund"`, "Arrived late"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("creator's order page lacks %q", want)
		}
	}
	if mine := f.ts.do(t, "GET", "/apps/demo/orders/"+o.ID, nil, commUser(t, f.ts, buyer)); strings.Contains(mine.Body, "/refund\"") {
		t.Error("the buyer's order page offers the refund form")
	}

	admin := commUser(t, f.ts, "admin@demo.test")
	if r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": o.ID, "amount": 200, "reason": "Goodwill"}); r.Status != 200 {
		t.Fatalf("SPEC refund call by order id: %d %s", r.Status, r.Body)
	}
	if r := f.post(t, "/orders/"+o.ID+"/refund", admin, map[string]any{"amount": 100, "reason": "More goodwill"}); r.Status != 200 {
		t.Fatalf("order refund call: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, o.ID); got.RefundedAmount != 600 || got.Status != store.OrderPaid || f.balance(t, buyer) != before+600 {
		t.Fatalf("after $6: %d %s, balance %d", got.RefundedAmount, got.Status, f.balance(t, buyer))
	}
	if r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": txID, "amount": 401, "reason": "Too much"}); r.Status != 400 {
		t.Fatalf("refunding more than is left: %d %s", r.Status, r.Body)
	}
	r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": txID, "reason": "The rest"})
	if a := decodePay(t, r); r.Status != 200 || a.Data["amount"] != float64(400) || a.Data["status"] != store.OrderRefunded {
		t.Fatalf("the rest by transactionId: %d %s", r.Status, r.Body)
	}
	got = f.reload(t, o.ID)
	if got.Status != store.OrderRefunded || got.RefundedAmount != 1000 || f.balance(t, buyer) != before+1000 {
		t.Fatalf("after all: %s %d, balance %d (was %d)", got.Status, got.RefundedAmount, f.balance(t, buyer), before)
	}
	if ok, _ := f.ts.store.HasDownload(ctx, o.AppID, o.UserID, itemID); ok {
		t.Fatal("the full refund kept the download")
	}
	if loc := f.refundForm(t, o.ID, "1", "Again"); !strings.Contains(loc, "error=") {
		t.Fatalf("a refunded order refunded again: %s", loc)
	}
	if page := f.ts.do(t, "GET", "/apps/demo/orders/"+o.ID, nil, creator); strings.Contains(page.Body, "/refund\"") {
		t.Error("a fully refunded order still offers the refund form")
	}
}

// The order page's form refunds card and PayPal orders in part too, at
// their providers.
func TestCardAndPayPalRefundsFromTheStudio(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	card, pi := f.paidByCard(t, "follower@demo.test", 1000)
	if loc := f.refundForm(t, card.ID, "3.50", "Scratched"); !strings.Contains(loc, "notice=Refunded $3.50 of $10.00") {
		t.Fatalf("card: %s", loc)
	}
	if got := f.reload(t, card.ID); got.RefundedAmount != 350 || int64(f.stripe.Intent(pi)["amount_refunded"].(float64)) != 350 {
		t.Fatalf("card: recorded %d, at Stripe %v", got.RefundedAmount, f.stripe.Intent(pi)["amount_refunded"])
	}
	if loc := f.refundForm(t, card.ID, "", "The rest"); !strings.Contains(loc, "refunded in full") {
		t.Fatalf("card rest: %s", loc)
	}
	pp, _ := f.paidByPayPal(t, "subscriber@demo.test", 2000)
	if loc := f.refundForm(t, pp.ID, "5", "Late"); !strings.Contains(loc, "notice=Refunded $5.00 of $20.00") {
		t.Fatalf("paypal: %s", loc)
	}
	if got := f.reload(t, pp.ID); got.RefundedAmount != 500 || got.Status != store.OrderPaid {
		t.Fatalf("paypal: %d %s", got.RefundedAmount, got.Status)
	}
	if loc := f.refundForm(t, pp.ID, "abc", "Late"); !strings.Contains(loc, "error=Enter the amount") {
		t.Fatalf("a bad amount: %s", loc)
	}
	if loc := f.refundForm(t, pp.ID, "3", ""); !strings.Contains(loc, "error=A refund reason is required") {
		t.Fatalf("no reason: %s", loc)
	}
}

// Sixty concurrent partial refunds of one wallet order through both refund
// calls: the order's row lock makes them take turns, so the buyer gets back
// exactly what the order records and never more than was paid.
func TestConcurrentWalletPartialRefunds(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	const buyer = "follower@demo.test"
	before := f.balance(t, buyer)
	o, txID := f.paidByWallet(t, buyer, 2050)
	admin := commUser(t, f.ts, "admin@demo.test")
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r response
			if i%2 == 0 {
				r = f.post(t, "/orders/"+o.ID+"/refund", admin, map[string]any{"amount": 100, "reason": "Part"})
			} else {
				r = f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": txID, "amount": 100, "reason": "Part"})
			}
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	got := f.reload(t, o.ID)
	if statuses[200] != 20 || got.RefundedAmount != 2000 || got.Status != store.OrderPaid || f.balance(t, buyer) != before+2000 {
		t.Fatalf("statuses %v, recorded %d, status %s, balance %d (was %d)", statuses, got.RefundedAmount, got.Status, f.balance(t, buyer), before)
	}
	if r := f.post(t, "/orders/"+o.ID+"/refund", admin, map[string]any{"reason": "Rest"}); r.Status != 200 {
		t.Fatalf("rest: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderRefunded || got.RefundedAmount != 2050 || f.balance(t, buyer) != before+2050 {
		t.Fatalf("after the rest: %s %d, balance %d", got.Status, got.RefundedAmount, f.balance(t, buyer))
	}
}
