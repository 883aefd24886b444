package server

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"marquee/scripts/seed"
	"marquee/server/payments/paypal"
	"marquee/store"
)

// payByPayPal starts a PayPal payment of a new order of price for the
// follower, approves it at the fake and captures it (twice, and the
// webhook once more), answering PayPal's order id.
func payByPayPal(t *testing.T, f *payFixture, price int64) (string, *store.Order) {
	t.Helper()
	o := f.order(t, "follower@demo.test", price)
	as := commUser(t, f.ts, "follower@demo.test")
	a := decodePay(t, f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o.ID}))
	ref, _ := a.Data["paypalOrderId"].(string)
	if ref == "" {
		t.Fatalf("create-order: %+v", a)
	}
	if !f.paypal.Approve(ref) {
		t.Fatal("approve")
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.post(t, "/paypal/capture-order", as, map[string]any{"paypalOrderId": ref})
		}()
	}
	wg.Wait()
	for _, ev := range f.paypal.Events() {
		if ev.Type == "PAYMENT.CAPTURE.COMPLETED" {
			if r := paypalHook(t, f, ev); r.Status != 200 {
				t.Fatalf("webhook: %d %s", r.Status, r.Body)
			}
		}
	}
	if o := f.reload(t, o.ID); o.Status != store.OrderPaid {
		t.Fatalf("order %s after capture", o.Status)
	}
	return ref, o
}

// PayPal to the creator (issue 24 item 2): the creator sets the app's PayPal
// merchant id (or e-mail) in the studio, with the form refusing what PayPal
// would; PayPal orders then name it as purchase_units[].payee. Without
// PAYPAL_PLATFORM_FEES the order carries no payment_instruction and the fee
// is recorded as owed, once per payment however often the capture is
// reported; the studio shows it.
func TestPayPalPayeeFeeOwed(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, func(cfg *Config) { cfg.PlatformFeeBP = 1000 })
	ctx := context.Background()
	creator := commUser(t, f.ts, "creator@demo.test")
	form := topupForm(creator)

	// Before a payee is set, PayPal orders go to the operator as before.
	ref, _ := payByPayPal(t, f, 1000)
	if payee, pi := f.paypal.OrderParties(ref); payee != nil || pi != nil {
		t.Fatalf("an order without a payee named one: %+v %+v", payee, pi)
	}

	for _, bad := range []string{"merchantId=abc", "merchantId=ABCDEFGHIJKLM", "email=not-an-email"} {
		r := f.ts.do(t, "POST", "/apps/demo/studio/paypal", strings.NewReader(bad+"&password="+seed.DemoPassword), form)
		if r.Status != 400 || !strings.Contains(r.Body, "PayPal") {
			t.Fatalf("studio form %q: %d", bad, r.Status)
		}
	}
	if p, _ := f.ts.store.PayPalPayeeOf(ctx, f.demo.ID); p != nil {
		t.Fatalf("a refused form saved %+v", p)
	}
	// A follower cannot set it.
	if r := f.ts.do(t, "POST", "/apps/demo/studio/paypal", strings.NewReader("merchantId=ABCDEFGHJKLMN"), topupForm(commUser(t, f.ts, "follower@demo.test"))); r.Status != 403 {
		t.Fatalf("follower sets the payee: %d", r.Status)
	}
	r := f.ts.do(t, "POST", "/apps/demo/studio/paypal", strings.NewReader(url.Values{"merchantId": {"abcdefghjklmn"}, "email": {"luna@example.com"}, "password": {seed.DemoPassword}}.Encode()), form)
	if r.Status != 303 || !strings.Contains(r.Header.Get("Location"), "/apps/demo/studio/paypal?notice=saved") {
		t.Fatalf("studio form: %d %s", r.Status, r.Header.Get("Location"))
	}
	page := f.ts.do(t, "GET", "/apps/demo/studio/paypal", nil, creator)
	if page.Status != 200 || !strings.Contains(page.Body, `value="ABCDEFGHJKLMN"`) || !strings.Contains(page.Body, "Owed: $0.00") {
		t.Fatalf("studio page: %d", page.Status)
	}

	ref, o := payByPayPal(t, f, 2599)
	payee, pi := f.paypal.OrderParties(ref)
	if payee == nil || payee.MerchantID != "ABCDEFGHJKLMN" || payee.EmailAddress != "" || pi != nil {
		t.Fatalf("payee %+v, payment_instruction %+v", payee, pi)
	}
	owed, total, err := f.ts.store.FeesOwed(ctx, f.demo.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	// 10% of $25.99 is $2.599: $2.60, recorded once for the one payment.
	if len(owed) != 1 || total != 260 || owed[0].OrderID != o.ID || owed[0].Gross != 2599 || owed[0].PaymentRef != ref || owed[0].Payee != "ABCDEFGHJKLMN" {
		t.Fatalf("owed %+v (total %d)", owed, total)
	}
	page = f.ts.do(t, "GET", "/apps/demo/studio/paypal", nil, creator)
	if !strings.Contains(page.Body, "Owed: $2.60") || !strings.Contains(page.Body, "$2.60 of $25.99") {
		t.Fatal("studio does not show what is owed")
	}

	// An e-mail alone is sent as email_address.
	if _, err := f.ts.store.SetPayPalPayee(ctx, f.demo.ID, "", "", "luna@example.com"); err != nil {
		t.Fatal(err)
	}
	ref, _ = payByPayPal(t, f, 500)
	if payee, _ := f.paypal.OrderParties(ref); payee == nil || payee.EmailAddress != "luna@example.com" || payee.MerchantID != "" {
		t.Fatalf("payee by e-mail: %+v", payee)
	}
}

// With PAYPAL_PLATFORM_FEES the operator's account takes the fee at payment:
// the order carries payment_instruction.platform_fees with the fee in the
// order's currency, PayPal's fake checks the shape as PayPal documents it,
// and nothing is owed. An account PayPal does not allow fees refuses such
// an order, which is why the switch exists.
func TestPayPalPlatformFees(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, func(cfg *Config) { cfg.PlatformFeeBP = 1250; cfg.PayPal.PlatformFees = true })
	ctx := context.Background()
	if _, err := f.ts.store.SetPayPalPayee(ctx, f.demo.ID, "", "ABCDEFGHJKLMN", ""); err != nil {
		t.Fatal(err)
	}
	// Not allowed at PayPal: the order is refused and nothing starts.
	o := f.order(t, "follower@demo.test", 4000)
	as := commUser(t, f.ts, "follower@demo.test")
	if r := f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o.ID}); r.Status != 502 {
		t.Fatalf("fees refused by PayPal: %d %s", r.Status, r.Body)
	}
	f.paypal.PlatformFeesAllowed = true
	ref, _ := payByPayPal(t, f, 4000)
	payee, pi := f.paypal.OrderParties(ref)
	if payee == nil || payee.MerchantID != "ABCDEFGHJKLMN" || pi == nil || pi.DisbursementMode != "INSTANT" || len(pi.PlatformFees) != 1 {
		t.Fatalf("payee %+v, payment_instruction %+v", payee, pi)
	}
	if fee := pi.PlatformFees[0].Amount; fee == nil || fee.Value != "5.00" || fee.CurrencyCode != "USD" {
		t.Fatalf("platform fee %+v", fee)
	}
	if owed, total, _ := f.ts.store.FeesOwed(ctx, f.demo.ID, 10); len(owed) != 0 || total != 0 {
		t.Fatalf("a fee PayPal took is also owed: %+v", owed)
	}
}

// PayPal partner attribution (issue 24): an order naming the creator's
// payee carries the platform's BN code (PAYPAL_BN_CODE) as
// PayPal-Partner-Attribution-Id, which the fake, as PayPal, requires of a
// payee or platform_fees; an order to the operator's own account carries
// none. Without a BN code the payee is not named (the order is paid to the
// operator, as PayPal would refuse it) and the fake refuses a payee sent
// without the header.
func TestPayPalPartnerAttribution(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, func(cfg *Config) { cfg.PlatformFeeBP = 1000 })
	ctx := context.Background()
	ref, _ := payByPayPal(t, f, 700)
	if bn := f.paypal.OrderAttribution(ref); bn != "" {
		t.Fatalf("an order to the operator carries attribution %q", bn)
	}
	if _, err := f.ts.store.SetPayPalPayee(ctx, f.demo.ID, "", "ABCDEFGHJKLMN", ""); err != nil {
		t.Fatal(err)
	}
	ref, _ = payByPayPal(t, f, 800)
	if payee, _ := f.paypal.OrderParties(ref); payee == nil || f.paypal.OrderAttribution(ref) != testPayPalBNCode {
		t.Fatalf("payee %+v named with attribution %q", payee, f.paypal.OrderAttribution(ref))
	}

	// The fake refuses platform fees without the header, as PayPal does.
	c := paypal.NewClient(paypal.Options{ClientID: "pp-client", ClientSecret: "pp-secret", APIBase: f.paypal.URL})
	_, err := c.CreateOrder(ctx, paypal.CreateOrder{OrderID: "o1", Number: "1", Amount: 100, Currency: "USD", ReturnURL: "https://x.test/r",
		CancelURL: "https://x.test/c", Payee: &paypal.Payee{MerchantID: "ABCDEFGHJKLMN"}, PlatformFee: 10})
	var apiErr *paypal.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 403 {
		t.Fatalf("platform fee without attribution: %v", err)
	}

	// A deployment without PAYPAL_BN_CODE still pays the creator ("Pay
	// another account" needs no partner status), with no attribution,
	// and records the platform fee as owed.
	g := newPayFixture(t, demoDB(t), func(cfg *Config) { cfg.PlatformFeeBP = 1000; cfg.PayPal.BNCode = "" })
	if _, err := g.ts.store.SetPayPalPayee(ctx, g.demo.ID, "", "ABCDEFGHJKLMN", ""); err != nil {
		t.Fatal(err)
	}
	ref, _ = payByPayPal(t, g, 900)
	if payee, _ := g.paypal.OrderParties(ref); payee == nil || payee.MerchantID != "ABCDEFGHJKLMN" || g.paypal.OrderAttribution(ref) != "" {
		t.Fatalf("without a BN code the order named %+v, attribution %q", payee, g.paypal.OrderAttribution(ref))
	}
	if owed, _, _ := g.ts.store.FeesOwed(ctx, g.demo.ID, 10); len(owed) != 1 {
		t.Fatalf("fees owed for the creator's order: %+v, want one", owed)
	}
}
