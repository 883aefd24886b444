package stripe

import (
	"context"
	"strings"
	"testing"
	"time"

	"marquee/server/payments/paymentstest"
)

// The Connect calls are accepted by stripe-mock, which checks every
// parameter against Stripe's OpenAPI spec: the Express account, its
// onboarding link and dashboard login link, a destination charge with the
// platform fee, a refund reversing the transfer and the fee, and a
// membership's subscription paying the account less a fee percent.
func TestConnectRequestShapesAgainstStripeMock(t *testing.T) {
	base := paymentstest.StartStripeMock(t)
	c := NewClient(Options{SecretKey: "sk_test_123", APIBase: base})
	ctx := context.Background()
	acct, err := c.CreateAccount(ctx, "app_1", "creator@example.com", ConnectAccountKey("app_1"))
	if err != nil || !strings.HasPrefix(acct.AccountID, "acct_") {
		t.Fatalf("create account: %+v %v", acct, err)
	}
	if _, err := c.RetrieveAccount(ctx, acct.AccountID); err != nil {
		t.Fatalf("retrieve account: %v", err)
	}
	link, err := c.AccountLink(ctx, acct.AccountID, "https://example.com/apps/a/studio/payouts/refresh", "https://example.com/apps/a/studio/payouts/return")
	if err != nil || link == "" {
		t.Fatalf("account link: %q %v", link, err)
	}
	login, err := c.LoginLink(ctx, acct.AccountID)
	if err != nil || login == "" {
		t.Fatalf("login link: %q %v", login, err)
	}
	in, err := c.CreateIntent(ctx, CreateIntent{OrderID: "ord_1", Amount: 5000, Currency: "USD", Destination: acct.AccountID, ApplicationFee: 250,
		IdempotencyKey: ConnectKey(IntentKey("ord_1", 5000, "USD"), acct.AccountID, 250)})
	if err != nil || !strings.HasPrefix(in.ID, "pi_") {
		t.Fatalf("destination charge: %+v %v", in, err)
	}
	if _, err := c.CreateRefund(ctx, in.ID, 2000, RefundKey("r_c1"), true); err != nil {
		t.Fatalf("refund reversing the transfer: %v", err)
	}
	cu, err := c.CreateCustomer(ctx, "buyer@example.com", nil, "marquee-order-ord_9-customer")
	if err != nil {
		t.Fatalf("customer: %v", err)
	}
	if _, err := c.CreateSubscription(ctx, Renewal{Customer: cu, PaymentMethod: "pm_card_visa", Name: "Circle", Amount: 800, Currency: "USD",
		Interval: "month", TrialEnd: time.Now().AddDate(0, 1, 0), IdempotencyKey: RenewalKey("s_1", "ord_9", 0),
		Destination: acct.AccountID, FeePercent: 5}); err != nil {
		t.Fatalf("subscription to a connected account: %v", err)
	}
}
