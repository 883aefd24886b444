package stripe

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"marquee/server/payments/paymentstest"
)

// The calls Marquee makes are accepted by stripe-mock, which validates
// every parameter against Stripe's OpenAPI spec.
func TestRequestShapesAgainstStripeMock(t *testing.T) {
	base := paymentstest.StartStripeMock(t)
	c := NewClient(Options{SecretKey: "sk_test_123", APIBase: base})
	ctx := context.Background()
	in, err := c.CreateIntent(ctx, CreateIntent{OrderID: "ord_1", Amount: 2599, Currency: "USD", Email: "buyer@example.com",
		Metadata: map[string]string{"orderNumber": "ORD-1"}, IdempotencyKey: IntentKey("ord_1", 2599, "USD")})
	if err != nil {
		t.Fatalf("create intent: %v", err)
	}
	if !strings.HasPrefix(in.ID, "pi_") || in.ClientSecret == "" {
		t.Fatalf("intent %+v", in)
	}
	if _, err := c.Retrieve(ctx, in.ID); err != nil {
		t.Fatalf("retrieve: %v", err)
	}
	if _, err := c.Confirm(ctx, in.ID, "pm_card_visa", ""); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	r, err := c.CreateRefund(ctx, in.ID, 1000, RefundKey("r_1"), false)
	if err != nil || !strings.HasPrefix(r.ID, "re_") {
		t.Fatalf("refund: %+v %v", r, err)
	}
	if _, err := c.CreateRefund(ctx, in.ID, 0, RefundKey("r_2"), false); err != nil {
		t.Fatalf("full refund: %v", err)
	}
	// A membership: customer, intent saving the card, subscription from
	// the end of the paid period, cancel at period end.
	cu, err := c.CreateCustomer(ctx, "buyer@example.com", map[string]string{"appId": "app_1"}, "marquee-order-ord_2-customer")
	if err != nil || !strings.HasPrefix(cu, "cus_") {
		t.Fatalf("customer: %q %v", cu, err)
	}
	if _, err := c.CreateIntent(ctx, CreateIntent{OrderID: "ord_2", Amount: 800, Currency: "USD", Customer: cu}); err != nil {
		t.Fatalf("intent with customer: %v", err)
	}
	sub, err := c.CreateSubscription(ctx, Renewal{Customer: cu, PaymentMethod: "pm_card_visa", Name: "Studio Circle", Amount: 800,
		Currency: "USD", Interval: "month", TrialEnd: time.Now().AddDate(0, 1, 0),
		Metadata: map[string]string{"appId": "app_1", "userId": "u_1", "planId": "p_1"}, IdempotencyKey: RenewalKey("sub_row_1", "ord_2", 0)})
	if err != nil || !strings.HasPrefix(sub, "sub_") {
		t.Fatalf("subscription: %q %v", sub, err)
	}
	if err := c.SetCancelAtPeriodEnd(ctx, sub, true); err != nil {
		t.Fatalf("cancel at period end: %v", err)
	}
	// Moving to another tier (an upgrade invoiced at once, a downgrade
	// from the next invoice), and the customer portal.
	for _, up := range []bool{true, false} {
		if err := c.ChangePrice(ctx, sub, Renewal{Name: "Backstage", Amount: 1500, Currency: "USD", Interval: "month",
			Metadata: map[string]string{"planId": "p_2"}, IdempotencyKey: "tier-shape-" + strconv.FormatBool(up)}, up); err != nil {
			t.Fatalf("change price (prorate %v): %v", up, err)
		}
	}
	if u, err := c.PortalURL(ctx, sub, "https://fans.example.test/membership"); err != nil || !strings.HasPrefix(u, "https://") {
		t.Fatalf("portal: %q %v", u, err)
	}
	// With an offer code: a coupon (percent for some months, an amount for
	// ever) passed to the subscription as its discount.
	for i, off := range []*Coupon{{PercentOff: 50, Duration: "repeating", Months: 2, Code: "HALF", OfferID: "off_1"}, {AmountOff: 300, Duration: "forever", Code: "THREE", OfferID: "off_2"}} {
		if _, err := c.CreateSubscription(ctx, Renewal{Customer: cu, PaymentMethod: "pm_card_visa", Name: "Studio Circle", Amount: 800,
			Currency: "USD", Interval: "month", TrialEnd: time.Now().AddDate(0, 1, 0), Coupon: off,
			IdempotencyKey: RenewalKey("sub_row_coupon", "ord_2", i)}); err != nil {
			t.Fatalf("subscription with coupon %s: %v", off.Code, err)
		}
	}
	// An upgrade with an offer code: the offer's coupon (its own id) as
	// the subscription's discount, with the new price.
	if err := c.ChangePrice(ctx, sub, Renewal{Name: "Backstage", Amount: 1200, Currency: "USD", Interval: "month",
		Metadata: map[string]string{"planId": "p_3"}, IdempotencyKey: "tier-shape-offer",
		Coupon: &Coupon{PercentOff: 50, Duration: "once", Code: "HALFUP", OfferID: "off_3"}}, true); err != nil {
		t.Fatalf("change price with a coupon: %v", err)
	}
	// A card trial: Stripe Checkout in subscription mode (a price named by
	// its tier, trial_period_days, on the connected account with the
	// platform's fee percent, cancelled at the trial's end without a card,
	// with an offer's coupon), read back, and its subscription read and
	// cancelled.
	cs, err := c.CreateTrialCheckout(ctx, TrialCheckout{Email: "fan@example.com", Name: "Backstage Pass", Amount: 1500, Currency: "USD",
		Interval: "month", TrialDays: 7, Metadata: map[string]string{"kind": "card_trial", "cardTrialId": "ct_1", "planId": "p_2"},
		SuccessURL: "https://fans.example.test/apps/demo/membership/card-trial?session_id={CHECKOUT_SESSION_ID}",
		CancelURL:  "https://fans.example.test/apps/demo/checkout/plan/item_1", Destination: "acct_123", FeePercent: 5,
		Coupon: &Coupon{PercentOff: 50, Duration: "repeating", Months: 1, Code: "HALF", OfferID: "off_4"}, IdempotencyKey: CardTrialKey("ct_1")})
	if err != nil || !strings.HasPrefix(cs.ID, "cs_") {
		t.Fatalf("trial checkout: %+v %v", cs, err)
	}
	if _, err := c.RetrieveCheckout(ctx, cs.ID); err != nil {
		t.Fatalf("retrieve trial checkout: %v", err)
	}
	if ts, err := c.RetrieveSubscription(ctx, sub); err != nil || ts.ID == "" {
		t.Fatalf("retrieve subscription: %+v %v", ts, err)
	}
	if err := c.CancelSubscription(ctx, sub); err != nil {
		t.Fatalf("cancel subscription: %v", err)
	}
	// A donation: an intent with no order, keyed by the donation.
	don, err := c.CreateIntent(ctx, CreateIntent{Amount: 1500, Currency: "USD", Email: "donor@example.com",
		Metadata: map[string]string{"donationId": "don_1", "kind": "donation"}, IdempotencyKey: DonationIntentKey("don_1", 1500, "USD")})
	if err != nil || !strings.HasPrefix(don.ID, "pi_") {
		t.Fatalf("donation intent: %+v %v", don, err)
	}
	// A parameter Stripe does not know is refused by stripe-mock, so this
	// test would catch a malformed request.
	if _, err := c.Retrieve(ctx, ""); err == nil {
		t.Fatal("retrieve without id succeeded")
	}
}

func TestVerifyEvent(t *testing.T) {
	fs := paymentstest.NewStripe("whsec_abc")
	c := NewClient(Options{SecretKey: "sk_test_123", WebhookSecret: "whsec_abc"})
	ev := fs.Event("payment_intent.succeeded", map[string]any{"id": "pi_1", "object": "payment_intent"})
	got, err := c.VerifyEvent(ev.Payload, ev.Header)
	if err != nil || got.ID != ev.ID || got.Type != "payment_intent.succeeded" {
		t.Fatalf("good event: %+v %v", got, err)
	}
	stale := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev.Payload, Secret: "whsec_abc", Timestamp: time.Now().Add(-301 * time.Second)})
	if _, err := c.VerifyEvent(ev.Payload, stale.Header); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("stale: %v", err)
	}
	recent := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev.Payload, Secret: "whsec_abc", Timestamp: time.Now().Add(-290 * time.Second)})
	if _, err := c.VerifyEvent(ev.Payload, recent.Header); err != nil {
		t.Fatalf("290 s old: %v", err)
	}
	other := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev.Payload, Secret: "whsec_other"})
	if _, err := c.VerifyEvent(ev.Payload, other.Header); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("other secret: %v", err)
	}
	if _, err := NewClient(Options{SecretKey: "sk"}).VerifyEvent(ev.Payload, ev.Header); err == nil {
		t.Fatal("no webhook secret accepted an event")
	}
}

// Expiring a session that is closed already is no failure; a 400 for any
// other reason on a session still open is one (its page could take a
// payment), never taken for "already closed".
func TestExpireCheckoutTellsClosedFromRefused(t *testing.T) {
	ctx := context.Background()
	fs := paymentstest.StartStripe(t, "whsec_x")
	c := NewClient(Options{SecretKey: "sk_test_123", APIBase: fs.URL})
	in := CreateCheckout{Name: "Top-up", Amount: 1000, Currency: "USD", SuccessURL: "http://localhost/ok?s={CHECKOUT_SESSION_ID}", CancelURL: "http://localhost/no"}
	in.IdempotencyKey = "expire-1"
	cs, err := c.CreateCheckout(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ExpireCheckout(ctx, cs.ID); err != nil {
		t.Fatalf("an open session: %v", err)
	}
	if err := c.ExpireCheckout(ctx, cs.ID); !errors.Is(err, ErrIntentNotOpen) {
		t.Fatalf("an expired session: %v", err)
	}

	// A Stripe that refuses the expiry itself (as it does for a connected
	// account's session asked with the platform's key).
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/expire") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"type":"invalid_request_error","message":"This endpoint does not allow impersonation as a Connected Account."}}`))
			return
		}
		fs.ServeHTTP(w, r)
	}))
	defer refusing.Close()
	in.IdempotencyKey = "expire-2"
	open, err := c.CreateCheckout(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	err = NewClient(Options{SecretKey: "sk_test_123", APIBase: refusing.URL}).ExpireCheckout(ctx, open.ID)
	if err == nil || errors.Is(err, ErrIntentNotOpen) || !strings.Contains(err.Error(), "impersonation") {
		t.Fatalf("a refused expiry of an open session: %v", err)
	}
}
