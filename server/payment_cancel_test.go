package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/jobs"
	"marquee/store"
)

// cancelJobs counts the cancel_payment jobs written for provider payment ref.
func cancelJobs(t *testing.T, f *payFixture, ref string) int {
	t.Helper()
	n, err := f.ts.store.DB().NewSelect().Model((*store.JobOutbox)(nil)).
		Where("kind = ? AND args LIKE ?", store.JobCancelPayment, "%\""+ref+"\"%").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// runCancelJobs runs the cancel_payment jobs written for ref.
func runCancelJobs(t *testing.T, f *payFixture, ref string) {
	t.Helper()
	ctx := context.Background()
	var rows []store.JobOutbox
	if err := f.ts.store.DB().NewSelect().Model(&rows).Where("kind = ? AND args LIKE ?", store.JobCancelPayment, "%\""+ref+"\"%").
		Scan(ctx); err != nil {
		t.Fatal(err)
	}
	w := &jobs.CancelPaymentWorker{Refunds: f.ts.StrayRefunds()}
	for _, r := range rows {
		var args jobs.CancelPaymentArgs
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
			t.Fatal(err)
		}
		if err := w.Work(ctx, &river.Job[jobs.CancelPaymentArgs]{Args: args}); err != nil {
			t.Fatalf("cancel_payment: %v", err)
		}
	}
}

// postFormAs posts a plain form as the session of as (a commUser header set).
func postFormAs(t *testing.T, f *payFixture, path string, as map[string]string, values url.Values) response {
	t.Helper()
	return f.ts.do(t, "POST", path, strings.NewReader(values.Encode()),
		map[string]string{"Cookie": as["Cookie"], "Content-Type": "application/x-www-form-urlencoded"})
}

// cancelPaths are every way an unpaid order is cancelled: the buyer (call
// and form), the creator (call and the fulfilment form), and expiry.
var cancelPaths = []struct {
	name   string
	cancel func(t *testing.T, r *contractRun)
}{
	{"buyer's call", func(t *testing.T, r *contractRun) {
		r.expectAnswer(t, "cancel", r.f.post(t, "/orders/"+r.order.ID+"/cancel", r.buyer.as, nil), 200)
	}},
	{"buyer's form", func(t *testing.T, r *contractRun) {
		r.expectAnswer(t, "cancel form", postFormAs(t, r.f, "/apps/demo/orders/"+r.order.ID+"/cancel", r.buyer.as, url.Values{}), 303)
	}},
	{"creator's call", func(t *testing.T, r *contractRun) {
		res := r.f.ts.do(t, "PUT", "/api/store/"+r.f.shop.ID+"/orders/"+r.order.ID+"/status", body(map[string]any{"status": "CANCELLED"}), r.creator(t))
		r.expectAnswer(t, "creator cancel", res, 200)
	}},
	{"creator's form", func(t *testing.T, r *contractRun) {
		res := postFormAs(t, r.f, "/apps/demo/manage/orders/"+r.order.ID, r.creator(t), url.Values{"status": {"CANCELLED"}})
		r.expectAnswer(t, "fulfilment form", res, 303)
	}},
	{"expiry", func(t *testing.T, r *contractRun) {
		ctx := context.Background()
		if _, err := r.f.ts.store.DB().NewUpdate().Model((*store.Order)(nil)).Set("created_at = ?", time.Now().UTC().Add(-3*time.Hour)).
			Where("id = ?", r.order.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.f.ts.store.ExpirePendingOrders(ctx, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
	}},
}

// Every cancel path with every method: the open card payment is cancelled
// at the provider by a job written with the cancel, and money that arrives
// anyway (the card form left open, a PayPal capture in flight) is refunded
// in full by the durable refund job, with the buyer told; the wallet cannot
// pay a cancelled order at all. The case is the payment contract's own
// "money for a cancelled order" row, run once per path.
func TestEveryCancelPathGivesMoneyBack(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	ctx := context.Background()
	event := eventID(t, f.ts, "Sketch & Synth Meetup")
	ticket := &store.StoreItem{ID: store.NewID(), AppID: f.shop.AppID, StoreID: f.shop.ID, Name: "Cancel ticket", Type: store.ItemEventTicket,
		Price: 1000, Currency: "USD", Settings: "{}", EventID: &event, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := f.ts.store.DB().NewInsert().Model(ticket).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var plan string
	if err := f.ts.store.DB().NewSelect().Table("store_items").Column("id").Where("app_id = ? AND type = ? AND deleted_at IS NULL AND sku = 'SUB-SC-01'", f.demo.ID, store.ItemSubscription).
		Limit(1).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	var refundCase contractCase
	for _, c := range contractCases {
		if strings.HasPrefix(c.name, "money for a cancelled order") {
			refundCase = c
		}
	}
	n := 0
	for _, path := range cancelPaths {
		for _, m := range contractMethods {
			n++
			r := &contractRun{f: f, m: m, event: event, digest: path.name + "/" + m.name, cancelBy: path.cancel}
			r.buyer = newContractBuyer(t, f, fmt.Sprintf("cancel-%s-%d", m.name, n))
			r.order, r.item = contractOrder(t, f, r.buyer, ticket.ID, plan)
			refundCase.run(t, r)
			if m.name == "stripe" {
				pi := f.reload(t, r.order.ID).PaymentRef
				if c := cancelJobs(t, f, pi); c != 1 {
					t.Fatalf("%s: %d cancel_payment jobs for the open intent", r.digest, c)
				}
			}
		}
	}

	// A card form started, then PayPal: the cancel (and the switch itself)
	// cancels the card's intent, whose late payment is refunded all the
	// same; coming back to the card makes a fresh intent that pays.
	b := newContractBuyer(t, f, "cancel-switch")
	r := &contractRun{f: f, m: contractMethods[1], buyer: b, event: event, digest: "switch"}
	r.order, r.item = contractOrder(t, f, b, ticket.ID, plan)
	pi := r.m.start(t, r)
	contractMethods[2].start(t, r)
	if c := cancelJobs(t, f, pi); c != 1 {
		t.Fatalf("switching to PayPal wrote %d cancel_payment jobs for the card's intent", c)
	}
	runCancelJobs(t, f, pi)
	if st := f.stripe.Intent(pi)["status"]; st != "canceled" {
		t.Fatalf("the abandoned card intent is %v", st)
	}
	pi2 := r.m.start(t, r)
	if pi2 == pi {
		t.Fatal("back to the card: the cancelled intent was answered again")
	}
	r.expectAnswer(t, "card after the switch back", r.m.complete(t, r, pi2), 200)
	r.expect(t, store.OrderPaid, 0, true, held{1, r.order.Total, 0})

	// Paid by the wallet while a card form was open: the intent is
	// cancelled.
	b = newContractBuyer(t, f, "cancel-wallet")
	r = &contractRun{f: f, m: contractMethods[1], buyer: b, event: event, digest: "wallet over card"}
	r.order, r.item = contractOrder(t, f, b, ticket.ID, plan)
	pi = r.m.start(t, r)
	r.expectAnswer(t, "wallet", contractMethods[0].complete(t, r, contractMethods[0].start(t, r)), 200)
	if c := cancelJobs(t, f, pi); c != 1 {
		t.Fatalf("paying by wallet wrote %d cancel_payment jobs for the open card intent", c)
	}
	runCancelJobs(t, f, pi)
	if st := f.stripe.Intent(pi)["status"]; st != "canceled" {
		t.Fatalf("the card intent of a wallet-paid order is %v", st)
	}
}

// A donation started by card and then paid from the wallet: the card's
// intent is cancelled, and when the open form pays anyway the money is
// refunded by the durable job and the donor told (it used to be recorded
// NOT_PAYABLE and kept).
func TestDonationPaidTwiceIsRefunded(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	ctx := context.Background()
	b := newContractBuyer(t, f, "donor-twice")
	if _, _, err := f.ts.store.CreditWallet(ctx, f.demo.ID, b.id, 5000, "test:donor-twice", "top-up"); err != nil {
		t.Fatal(err)
	}
	a := decodePay(t, f.ts.do(t, "POST", "/api/donations/create", body(map[string]any{"appId": "demo", "amount": 2500, "currency": "USD"}), b.as))
	id, _ := a.Data["id"].(string)
	process := func(method string) payAnswer {
		return decodePay(t, f.ts.do(t, "POST", "/api/donations/process", body(map[string]any{"donationId": id, "paymentMethod": method}), b.as))
	}
	pay, _ := process("stripe").Data["payment"].(map[string]any)
	if pay == nil {
		t.Fatal("no card payment started")
	}
	pi := pay["ref"].(string)
	if a := process("musepay"); !a.Success || a.Data["status"] != store.DonationPaid {
		t.Fatalf("wallet: %+v", a)
	}
	if c := cancelJobs(t, f, pi); c != 1 {
		t.Fatalf("%d cancel_payment jobs for the donation's open intent", c)
	}
	if r := succeededHook(t, f, pi); r.Status != 200 {
		t.Fatalf("late webhook: %d %s", r.Status, r.Body)
	}
	if n := runStrayRefunds(t, f); n != 1 {
		t.Fatalf("%d refund jobs for the second payment", n)
	}
	if got := f.stripe.Intent(pi)["amount_refunded"]; got != float64(2500) {
		t.Fatalf("refunded at Stripe: %v", got)
	}
	told, err := f.ts.store.DB().NewSelect().Model((*store.Notification)(nil)).
		Where("user_id = ? AND content LIKE ?", b.id, "%donation%being refunded%").Count(ctx)
	if err != nil || told != 1 {
		t.Fatalf("donor told %d times: %v", told, err)
	}
	if s, _ := f.ts.store.DonorStandingOf(ctx, f.demo.ID, b.id); s.Total != 2500 {
		t.Fatalf("donated %d, want 2500 once", s.Total)
	}
}

// A membership plan taken off sale while its buyer pays: no method starts
// or takes the payment, and a card payment already under way is refunded
// and its order cancelled.
func TestPlanOffSaleTakesNoMoney(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	ctx := context.Background()
	creator := commUser(t, f.ts, "creator@demo.test")
	plan := &store.StoreItem{ID: store.NewID(), AppID: f.shop.AppID, StoreID: f.shop.ID, Name: "Fleeting plan", Type: store.ItemSubscription,
		Price: 900, Currency: "USD", Settings: "{}", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := f.ts.store.DB().NewInsert().Model(plan).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ts.store.DB().NewInsert().Model(&store.SubscriptionPlan{ID: store.NewID(), AppID: f.shop.AppID, StoreItemID: plan.ID,
		BillingCycle: store.CycleMonthly, State: store.TierOnSale, MonthlyPrice: &plan.Price}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	b := newContractBuyer(t, f, "plan-off-sale")
	if _, _, err := f.ts.store.CreditWallet(ctx, f.demo.ID, b.id, 5000, "test:plan-off-sale", "top-up"); err != nil {
		t.Fatal(err)
	}
	order := func() *store.Order {
		c, err := f.ts.store.AddToCart(ctx, f.shop, b.id, plan.ID, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := f.ts.store.CreateOrder(ctx, f.shop, b.id, store.CheckoutInput{CartID: c.ID})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	byCard, byOther := order(), order()
	pi := decodePay(t, f.post(t, "/stripe-payments/create-intent", b.as, map[string]any{"orderId": byCard.ID})).Data["paymentIntentId"].(string)
	if r := postFormAs(t, f, "/apps/demo/studio/plans/"+plan.ID+"/archive", creator, url.Values{}); r.Status != 303 {
		t.Fatalf("archive: %d %s", r.Status, r.Body)
	}
	for what, r := range map[string]response{
		"wallet": f.post(t, "/musepay/process", b.as, map[string]any{"orderId": byOther.ID}),
		"card":   f.post(t, "/stripe-payments/create-intent", b.as, map[string]any{"orderId": byOther.ID}),
		"paypal": f.post(t, "/paypal/create-order", b.as, map[string]any{"orderId": byOther.ID}),
	} {
		commExpect(t, what+" for an archived plan", r, 409, "not on sale")
	}
	if r := succeededHook(t, f, pi); r.Status != 200 {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	if got := f.reload(t, byCard.ID); got.Status != store.OrderCancelled {
		t.Fatalf("order of the archived plan paid by card is %s", got.Status)
	}
	if sub, _ := f.ts.store.SubscriptionOf(ctx, f.demo.ID, b.id); sub != nil && sub.Status == store.SubActive {
		t.Fatal("an archived plan was granted")
	}
	if n := runStrayRefunds(t, f); n != 1 || f.stripe.Intent(pi)["amount_refunded"] != float64(900) {
		t.Fatalf("%d refund jobs, refunded %v", n, f.stripe.Intent(pi)["amount_refunded"])
	}
	if !notified(t, f, b.id, byCard.OrderNumber) {
		t.Fatal("the buyer was not told")
	}
}
