package stripe

import (
	"context"
	"strings"
	"testing"

	"marquee/server/payments/paymentstest"
)

// A wallet top-up's PaymentIntent (no order; the top-up in its metadata,
// keyed by the top-up) is a request stripe-mock accepts, and reading it
// back names the top-up.
func TestTopupRequestShapesAgainstStripeMock(t *testing.T) {
	base := paymentstest.StartStripeMock(t)
	c := NewClient(Options{SecretKey: "sk_test_123", APIBase: base})
	ctx := context.Background()
	in, err := c.CreateIntent(ctx, CreateIntent{Amount: 2500, Currency: "USD", Email: "member@example.com",
		Metadata:       map[string]string{"topupId": "tu_1", "appId": "app_1", "userId": "u_1", "kind": "wallet_topup"},
		IdempotencyKey: TopupIntentKey("tu_1", 2500, "USD")})
	if err != nil || !strings.HasPrefix(in.ID, "pi_") || in.ClientSecret == "" {
		t.Fatalf("top-up intent: %+v %v", in, err)
	}
	if _, err := c.Retrieve(ctx, in.ID); err != nil {
		t.Fatalf("retrieve: %v", err)
	}
	// The fee read (latest_charge.balance_transaction expanded) is a
	// request Stripe's spec allows.
	if _, _, _, err := c.ChargeFee(ctx, in.ID); err != nil {
		t.Fatalf("charge fee: %v", err)
	}
	// The no-JavaScript top-up's Checkout Session.
	cs, err := c.CreateCheckout(ctx, CreateCheckout{Name: "Wallet funds", Amount: 2500, Currency: "USD", Email: "member@example.com",
		SuccessURL: "https://example.com/apps/a/wallet/topup/return?topupId=tu_1", CancelURL: "https://example.com/apps/a/transactions",
		Metadata: map[string]string{"topupId": "tu_1"}, IdempotencyKey: TopupCheckoutKey("tu_1", 2500, "USD")})
	if err != nil || !strings.HasPrefix(cs.ID, "cs_") {
		t.Fatalf("checkout session: %+v %v", cs, err)
	}
	if _, err := c.RetrieveCheckout(ctx, cs.ID); err != nil {
		t.Fatalf("retrieve checkout session: %v", err)
	}
	// An expired top-up's session and intent are closed (the cancel_payment job).
	if err := c.ExpireCheckout(ctx, cs.ID); err != nil {
		t.Fatalf("expire checkout session: %v", err)
	}
	if err := c.Cancel(ctx, in.ID); err != nil {
		t.Fatalf("cancel intent: %v", err)
	}
	if in.OrderID != "" {
		t.Fatalf("a top-up intent names an order: %+v", in)
	}
}
