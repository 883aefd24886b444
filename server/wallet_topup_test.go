package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/server/payments/paymentstest"
	"marquee/store"
)

// topupCredits counts the wallet transfers a top-up made and sums them.
func topupCredits(t *testing.T, f *payFixture, topupID string) (int, int64) {
	t.Helper()
	var rows []store.WalletTransfer
	if err := f.ts.store.DB().NewSelect().Model(&rows).Where("reference = ?", store.TopupTransferRef(topupID)).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, r := range rows {
		sum += r.Amount
	}
	return len(rows), sum
}

func topupForm(session map[string]string) map[string]string {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range session {
		if k != "Content-Type" {
			h[k] = v
		}
	}
	return h
}

// Adding funds by card: the amount must be one the operator allows (others
// are 400, as is a method that cannot take money in); the PaymentIntent is
// for the stored amount and names the top-up; nothing is credited until
// Stripe says the money arrived; then 50 concurrent reports of it (signed
// webhook deliveries and confirm calls, mixed) credit the wallet once.
func TestWalletTopupByCard(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, func(cfg *Config) { cfg.WalletTopupAmounts = []int64{1000, 2500, 5000} })
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	st := "/api/store/" + f.shop.ID + "/wallet/topups"
	balance := func() int64 {
		t.Helper()
		b, err := f.ts.store.WalletBalance(ctx, f.demo.ID, uid)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := balance()

	for _, bad := range []map[string]any{
		{"amount": 1234, "method": "stripe"},
		{"amount": 100000, "method": "stripe"},
		{"amount": -1000, "method": "stripe"},
		{"amount": 1000, "method": "musepay"},
		{"amount": 1000, "method": "bitcoin"},
	} {
		r := f.ts.do(t, "POST", st, body(bad), as)
		if r.Status != 400 {
			t.Fatalf("top-up %v: %d %s", bad, r.Status, r.Body)
		}
	}
	if a := decodePay(t, f.ts.do(t, "POST", st, body(map[string]any{"amount": 1234, "method": "stripe"}), as)); a.Message != msgTopupAmount {
		t.Fatalf("amount not allowed: %+v", a)
	}
	if f.stripe.IntentCount() != 0 {
		t.Fatalf("a refused top-up reached Stripe")
	}

	r := f.ts.do(t, "POST", st, body(map[string]any{"amount": 2500, "method": "stripe"}), as)
	a := decodePay(t, r)
	if r.Status != 201 || a.Data["clientSecret"] == "" || a.Data["status"] != store.TopupPending || a.Data["approvalUrl"] != "" {
		t.Fatalf("start: %d %+v", r.Status, a)
	}
	id, pi := a.Data["topupId"].(string), a.Data["paymentRef"].(string)
	in := f.stripe.Intent(pi)
	if meta, _ := in["metadata"].(map[string]any); int64(in["amount"].(float64)) != 2500 || in["currency"] != "usd" || meta["topupId"] != id || meta["orderId"] != nil {
		t.Fatalf("intent %+v", in)
	}
	// Not paid yet: the confirm call says so and nothing is credited.
	if a := decodePay(t, f.ts.do(t, "POST", st+"/"+id+"/confirm", body(map[string]any{}), as)); a.Data["status"] != store.TopupPending || balance() != before {
		t.Fatalf("confirm before paying: %+v", a)
	}
	// Someone else cannot confirm it.
	other := commUser(t, f.ts, "creator@demo.test")
	if r := f.ts.do(t, "POST", st+"/"+id+"/confirm", body(map[string]any{}), other); r.Status != 404 {
		t.Fatalf("another member's confirm: %d", r.Status)
	}

	f.stripe.Succeed(pi)
	var succeeded paymentstest.SignedEvent
	for _, ev := range f.stripe.Events() {
		if ev.Type == "payment_intent.succeeded" {
			succeeded = ev
		}
	}
	if succeeded.ID == "" {
		t.Fatal("no payment_intent.succeeded")
	}
	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%2 == 0 {
				codes[i] = stripeHook(t, f, succeeded.Payload, succeeded.Header).Status
			} else {
				codes[i] = f.ts.do(t, "POST", st+"/"+id+"/confirm", body(map[string]any{}), as).Status
			}
		}(i)
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("report %d: %d", i, c)
		}
	}
	if n, sum := topupCredits(t, f, id); n != 1 || sum != 2500 {
		t.Fatalf("%d credits of %d for one top-up", n, sum)
	}
	if b := balance(); b != before+2500 {
		t.Fatalf("balance %d, want %d", b, before+2500)
	}
	tp, err := f.ts.store.TopupByID(ctx, id)
	if err != nil || tp.Status != store.TopupPaid || tp.PaymentRef != pi || tp.PaidAt == nil || eventCount(t, db, "stripe", succeeded.ID) != 1 {
		t.Fatalf("top-up after payment: %+v %v", tp, err)
	}
	// A forged webhook about another top-up's intent changes nothing.
	forger := paymentstest.NewStripe("whsec_attacker")
	commExpect(t, "forged", stripeHook(t, f, succeeded.Payload, forger.Sign(succeeded.Payload, time.Now())), 400, msgInvalidSignature)
	// The wallet page shows the credit.
	page := f.ts.do(t, "GET", "/apps/demo/transactions?added=2500", nil, as)
	if page.Status != 200 || !strings.Contains(page.Body, "Added funds (stripe)") || !strings.Contains(page.Body, "added to your wallet") {
		t.Fatalf("wallet page: %d", page.Status)
	}
}

// Adding funds by PayPal, with JavaScript off: the form sends the member to
// approve, PayPal sends them back to the return page, which captures; 50
// concurrent returns, confirm calls and webhook deliveries credit once, and
// PayPal captured once.
func TestWalletTopupByPayPal(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, nil)
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	before, _ := f.ts.store.WalletBalance(ctx, f.demo.ID, uid)

	// An amount the operator does not allow goes back with the reason.
	r := f.ts.do(t, "POST", "/apps/demo/wallet/topup", strings.NewReader("amount=999&method=paypal&return=checkout"), topupForm(as))
	if loc := r.Header.Get("Location"); r.Status != 303 || !strings.Contains(loc, "/apps/demo/transactions?return=checkout") || !strings.Contains(loc, url.QueryEscape(msgTopupAmount)) {
		t.Fatalf("refused form: %d %s", r.Status, loc)
	}
	if f.paypal.OrderCount() != 0 {
		t.Fatal("a refused top-up reached PayPal")
	}
	r = f.ts.do(t, "POST", "/apps/demo/wallet/topup", strings.NewReader("amount=5000&method=paypal"), topupForm(as))
	approval := r.Header.Get("Location")
	if r.Status != 303 || !strings.Contains(approval, f.paypal.URL+"/checkoutnow?token=") {
		t.Fatalf("form: %d %s", r.Status, approval)
	}
	u, _ := url.Parse(approval)
	ref := u.Query().Get("token")
	var tp store.WalletTopup
	if err := db.NewSelect().Model(&tp).Where("payment_ref = ?", ref).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if tp.Amount != 5000 || tp.Status != store.TopupPending || tp.UserID != uid {
		t.Fatalf("top-up %+v", tp)
	}
	// Coming back before approving credits nothing.
	back := "/apps/demo/wallet/topup/return?topupId=" + tp.ID + "&token=" + ref + "&PayerID=X"
	if r := f.ts.do(t, "GET", back, nil, as); r.Status != 303 || !strings.Contains(r.Header.Get("Location"), "error=") {
		t.Fatalf("return before approval: %d %s", r.Status, r.Header.Get("Location"))
	}
	if !f.paypal.Approve(ref) {
		t.Fatal("approve")
	}
	st := "/api/store/" + f.shop.ID + "/wallet/topups/" + tp.ID + "/confirm"
	var wg sync.WaitGroup
	codes := make([]int, 50)
	locs := make([]string, 50)
	for i := range codes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			switch i % 2 {
			case 0:
				r := f.ts.do(t, "GET", back, nil, as)
				codes[i], locs[i] = r.Status, r.Header.Get("Location")
				if r.Status == 303 && !strings.Contains(r.Header.Get("Location"), "added=5000") {
					codes[i] = 0
				}
			default:
				codes[i] = f.ts.do(t, "POST", st, body(map[string]any{}), as).Status
			}
		}(i)
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 && c != 303 {
			t.Fatalf("report %d: %d %s", i, c, locs[i])
		}
	}
	// PayPal's own word arrives too, many times over.
	var completed paymentstest.PayPalEvent
	for _, ev := range f.paypal.Events() {
		if ev.Type == "PAYMENT.CAPTURE.COMPLETED" {
			completed = ev
		}
	}
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := paypalHook(t, f, completed); r.Status != 200 {
				t.Errorf("webhook: %d %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	if n, sum := topupCredits(t, f, tp.ID); n != 1 || sum != 5000 {
		t.Fatalf("%d credits of %d for one top-up", n, sum)
	}
	if b, _ := f.ts.store.WalletBalance(ctx, f.demo.ID, uid); b != before+5000 {
		t.Fatalf("balance %d, want %d", b, before+5000)
	}
	if caps, captured, _ := f.paypal.Captured(ref); caps != 1 || captured != 5000 {
		t.Fatalf("PayPal captured %d times, %d", caps, captured)
	}
	if n := eventCount(t, db, "paypal", completed.ID); n != 1 {
		t.Fatalf("webhook recorded %d times", n)
	}
}

// Adding funds by card without JavaScript (issue 24): the plain "Add funds"
// form makes a Stripe Checkout Session (mode payment) for the stored
// amount, naming the top-up, and redirects to Stripe's hosted page; nothing
// is credited until Stripe says the session is paid; then 50 concurrent
// reports (checkout.session.completed deliveries and the return page the
// hosted page sends the member to) credit the wallet once. The session's
// own PaymentIntent events credit nothing more and refund nothing.
func TestWalletTopupByCardWithoutJavaScript(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, func(cfg *Config) { cfg.WalletTopupAmounts = []int64{1000, 2500} })
	ctx := context.Background()
	const email = "follower@demo.test"
	as := commUser(t, f.ts, email)
	uid := f.userID(t, email)
	before, _ := f.ts.store.WalletBalance(ctx, f.demo.ID, uid)
	form := topupForm(as)

	r := f.ts.do(t, "POST", "/apps/demo/wallet/topup", strings.NewReader("amount=2500&method=stripe"), form)
	loc := r.Header.Get("Location")
	if r.Status != 303 || !strings.HasPrefix(loc, f.stripe.URL+"/checkout/pay/cs_") {
		t.Fatalf("form: %d %q %s", r.Status, loc, r.Body)
	}
	csID := strings.TrimPrefix(loc, f.stripe.URL+"/checkout/pay/")
	cs := f.stripe.CheckoutSession(csID)
	meta, _ := cs["metadata"].(map[string]any)
	id, _ := meta["topupId"].(string)
	if cs["mode"] != "payment" || int64(cs["amount_total"].(float64)) != 2500 || cs["currency"] != "usd" || id == "" ||
		!strings.Contains(cs["success_url"].(string), "/apps/demo/wallet/topup/return?topupId="+id) {
		t.Fatalf("session %+v", cs)
	}
	if tp, _ := f.ts.store.TopupByID(ctx, id); tp.PaymentRef != csID || tp.Amount != 2500 || tp.Status != store.TopupPending {
		t.Fatalf("top-up %+v", tp)
	}
	// Back before paying: nothing is credited.
	ret := "/apps/demo/wallet/topup/return?topupId=" + id
	if r := f.ts.do(t, "GET", ret, nil, as); r.Status != 303 || !strings.Contains(r.Header.Get("Location"), "notice=") {
		t.Fatalf("return before paying: %d %q", r.Status, r.Header.Get("Location"))
	}
	// A made-up amount in the form is refused.
	if r := f.ts.do(t, "POST", "/apps/demo/wallet/topup", strings.NewReader("amount=2499&method=stripe"), form); r.Status == 303 && strings.Contains(r.Header.Get("Location"), "/checkout/pay/") {
		t.Fatal("an amount not offered reached Checkout")
	}

	// The hosted page takes the card and sends the member back.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.PostForm(loc, url.Values{"card": {"4242424242424242"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 303 || !strings.HasSuffix(res.Header.Get("Location"), ret) {
		t.Fatalf("hosted page: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	completed := lastEvent(t, f.stripe, "checkout.session.completed")
	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%2 == 0 {
				codes[i] = stripeHook(t, f, completed.Payload, completed.Header).Status
			} else {
				codes[i] = f.ts.do(t, "GET", ret, nil, as).Status
			}
		}(i)
	}
	wg.Wait()
	for i, c := range codes {
		if (i%2 == 0 && c != 200) || (i%2 == 1 && c != 303) {
			t.Fatalf("report %d: %d", i, c)
		}
	}
	// The session's PaymentIntent is reported too: nothing more happens.
	pi := lastEvent(t, f.stripe, "payment_intent.succeeded")
	if r := stripeHook(t, f, pi.Payload, pi.Header); r.Status != 200 {
		t.Fatalf("intent webhook: %d", r.Status)
	}
	if n, sum := topupCredits(t, f, id); n != 1 || sum != 2500 {
		t.Fatalf("%d credits of %d", n, sum)
	}
	if b, _ := f.ts.store.WalletBalance(ctx, f.demo.ID, uid); b != before+2500 {
		t.Fatalf("balance %d, want %d", b, before+2500)
	}
	if tp, _ := f.ts.store.TopupByID(ctx, id); tp.Status != store.TopupPaid {
		t.Fatalf("top-up %s", tp.Status)
	}
	if n, _ := db.NewSelect().Model((*store.JobOutbox)(nil)).Where("kind = ?", store.JobRefundStrayPayment).Count(ctx); n != 0 {
		t.Fatalf("%d refunds of a good payment", n)
	}
	if r := f.ts.do(t, "GET", ret, nil, as); r.Status != 303 || !strings.Contains(r.Header.Get("Location"), "added=2500") {
		t.Fatalf("return after paying: %d %q", r.Status, r.Header.Get("Location"))
	}
}
