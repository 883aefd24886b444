// Package stripe takes card payments through Stripe (stripe/stripe-go):
// Client is the thin layer over the API (PaymentIntents, refunds, webhook
// signatures); Provider puts it behind payments.Provider and
// payments.Webhooks.
package stripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sg "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// Options configure a Client.
type Options struct {
	SecretKey     string
	WebhookSecret string
	// APIBase is another API address (stripe-mock, a fake); empty is Stripe.
	APIBase    string
	HTTPClient *http.Client
	// Tolerance is how old a webhook signature may be; 0 is 300 s.
	Tolerance time.Duration
}

// Client speaks to Stripe's API.
type Client struct {
	sc            *sg.Client
	webhookSecret string
	tolerance     time.Duration
}

func NewClient(o Options) *Client {
	cfg := &sg.BackendConfig{
		HTTPClient: o.HTTPClient,
		// stripe-go retries network failures and 409s with the same
		// idempotency key, so a retry never makes a second charge.
		MaxNetworkRetries: sg.Int64(2),
		LeveledLogger:     &sg.LeveledLogger{Level: sg.LevelNull},
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.APIBase != "" {
		cfg.URL = sg.String(strings.TrimRight(o.APIBase, "/"))
	}
	tol := o.Tolerance
	if tol <= 0 {
		tol = webhook.DefaultTolerance
	}
	return &Client{
		sc:            sg.NewClient(o.SecretKey, sg.WithBackends(sg.NewBackendsWithConfig(cfg))),
		webhookSecret: o.WebhookSecret,
		tolerance:     tol,
	}
}

// Intent is the part of a PaymentIntent the product reads.
type Intent struct {
	ID             string
	ClientSecret   string
	Status         string
	Amount         int64
	AmountReceived int64
	Currency       string
	OrderID        string
	// DonationID: the donation a PaymentIntent pays (instead of an order).
	DonationID string
	// TopupID: the wallet top-up a PaymentIntent pays (instead of an order).
	TopupID string
	// FailureMessage is Stripe's own words for the last failed attempt
	// ("Your card was declined.").
	FailureMessage string
	// Customer and PaymentMethod: the saved card a membership renews with.
	Customer      string
	PaymentMethod string
	// Destination and ApplicationFee: a destination charge's connected
	// account and the platform's fee on it (Connect).
	Destination    string
	ApplicationFee int64
}

func intentOf(pi *sg.PaymentIntent) *Intent {
	in := &Intent{ID: pi.ID, ClientSecret: pi.ClientSecret, Status: string(pi.Status), Amount: pi.Amount,
		AmountReceived: pi.AmountReceived, Currency: strings.ToUpper(string(pi.Currency)), OrderID: pi.Metadata["orderId"],
		DonationID: pi.Metadata["donationId"], TopupID: pi.Metadata["topupId"]}
	if pi.LastPaymentError != nil {
		in.FailureMessage = pi.LastPaymentError.Msg
	}
	if pi.Customer != nil {
		in.Customer = pi.Customer.ID
	}
	if pi.PaymentMethod != nil {
		in.PaymentMethod = pi.PaymentMethod.ID
	}
	if pi.TransferData != nil && pi.TransferData.Destination != nil {
		in.Destination = pi.TransferData.Destination.ID
	}
	in.ApplicationFee = pi.ApplicationFeeAmount
	return in
}

// CreateIntent asks for a PaymentIntent of amount (minor units) for an order.
type CreateIntent struct {
	OrderID  string
	Amount   int64
	Currency string
	Email    string
	Metadata map[string]string
	// IdempotencyKey makes every retry and concurrent click answer the
	// same PaymentIntent.
	IdempotencyKey string
	// Customer, when set, keeps the card for later off-session charges
	// (a membership's renewals).
	Customer string
	// Destination, when set, makes it a destination charge to that
	// connected account (on_behalf_of it too), the platform keeping
	// ApplicationFee.
	Destination    string
	ApplicationFee int64
}

// IntentKey is the idempotency key of an order's PaymentIntent. The amount
// and currency are part of it because Stripe refuses a reused key with other
// parameters; an order's total never changes, so in practice one order has
// one key and so one PaymentIntent.
func IntentKey(orderID string, amount int64, currency string) string {
	return fmt.Sprintf("marquee-order-%s-intent-%d-%s", orderID, amount, strings.ToLower(currency))
}

// ConnectKey extends an intent's idempotency key with its destination and
// fee, which are parameters of the request too: an order started before its
// app's account was ready, and started again after, gets an intent of its
// own rather than Stripe's refusal of a reused key.
func ConnectKey(key, destination string, fee int64) string {
	if destination == "" {
		return key
	}
	return fmt.Sprintf("%s-to-%s-fee-%d", key, destination, fee)
}

// DonationIntentKey is the idempotency key of a donation's PaymentIntent:
// repeated (or concurrent) process calls get the one intent.
func DonationIntentKey(donationID string, amount int64, currency string) string {
	return fmt.Sprintf("marquee-donation-%s-intent-%d-%s", donationID, amount, strings.ToLower(currency))
}

// RefundKey is the idempotency key of one refund (refundID is the refund's
// own record, store.PendingRefund): a retry of that refund gives the money
// back once, and a second refund of the same amount is a refund of its own.
func RefundKey(refundID string) string {
	return "marquee-refund-" + refundID
}

func (c *Client) CreateIntent(ctx context.Context, in CreateIntent) (*Intent, error) {
	p := &sg.PaymentIntentCreateParams{
		Amount:   sg.Int64(in.Amount),
		Currency: sg.String(strings.ToLower(in.Currency)),
		// The Payment Element offers whatever methods the account has on.
		AutomaticPaymentMethods: &sg.PaymentIntentCreateAutomaticPaymentMethodsParams{Enabled: sg.Bool(true)},
	}
	if in.Destination != "" {
		// on_behalf_of makes the creator's account the settlement
		// merchant: its country's rules and fees, its statement
		// descriptor on the buyer's statement.
		p.OnBehalfOf = sg.String(in.Destination)
		p.TransferData = &sg.PaymentIntentCreateTransferDataParams{Destination: sg.String(in.Destination)}
		if in.ApplicationFee > 0 {
			p.ApplicationFeeAmount = sg.Int64(in.ApplicationFee)
		}
	}
	if in.Customer != "" {
		p.Customer = sg.String(in.Customer)
		p.SetupFutureUsage = sg.String(string(sg.PaymentIntentSetupFutureUsageOffSession))
	}
	if in.Email != "" {
		p.ReceiptEmail = sg.String(in.Email)
	}
	for k, v := range in.Metadata {
		p.AddMetadata(k, v)
	}
	if in.OrderID != "" {
		p.AddMetadata("orderId", in.OrderID)
	}
	if in.IdempotencyKey != "" {
		p.SetIdempotencyKey(in.IdempotencyKey)
	}
	pi, err := c.sc.V1PaymentIntents.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("create payment intent: %w", err)
	}
	return intentOf(pi), nil
}

// Retrieve asks Stripe how a PaymentIntent stands: the server's only source
// for "the money arrived" besides a signed webhook.
func (c *Client) Retrieve(ctx context.Context, id string) (*Intent, error) {
	pi, err := c.sc.V1PaymentIntents.Retrieve(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("retrieve payment intent: %w", err)
	}
	return intentOf(pi), nil
}

// Cancel cancels a PaymentIntent so no payment form can pay it any more.
// One that succeeded or was cancelled already answers ErrIntentNotOpen.
func (c *Client) Cancel(ctx context.Context, id string) error {
	p := &sg.PaymentIntentCancelParams{CancellationReason: sg.String(string(sg.PaymentIntentCancellationReasonAbandoned))}
	if _, err := c.sc.V1PaymentIntents.Cancel(ctx, id, p); err != nil {
		var se *sg.Error
		if errors.As(err, &se) && se.Code == sg.ErrorCodePaymentIntentUnexpectedState {
			return fmt.Errorf("%w: %v", ErrIntentNotOpen, err)
		}
		return fmt.Errorf("cancel payment intent: %w", err)
	}
	return nil
}

// ErrIntentNotOpen: the PaymentIntent succeeded or was cancelled already.
var ErrIntentNotOpen = errors.New("payment intent is not open")

// ErrCardDeclined wraps Stripe's refusal of a card; the message is Stripe's.
type CardError struct{ Message string }

func (e *CardError) Error() string { return "card declined: " + e.Message }

// Confirm confirms a PaymentIntent with a payment method collected by the
// browser. A declined card is a *CardError with Stripe's message.
func (c *Client) Confirm(ctx context.Context, id, paymentMethodID, returnURL string) (*Intent, error) {
	p := &sg.PaymentIntentConfirmParams{}
	if paymentMethodID != "" {
		p.PaymentMethod = sg.String(paymentMethodID)
	}
	if returnURL != "" {
		p.ReturnURL = sg.String(returnURL)
	}
	pi, err := c.sc.V1PaymentIntents.Confirm(ctx, id, p)
	if err != nil {
		var se *sg.Error
		if errors.As(err, &se) && se.Type == sg.ErrorTypeCard {
			return nil, &CardError{Message: se.Msg}
		}
		return nil, fmt.Errorf("confirm payment intent: %w", err)
	}
	return intentOf(pi), nil
}

// Refund is a refund Stripe made.
type Refund struct {
	ID            string
	Amount        int64
	Currency      string
	Status        string
	PaymentIntent string
}

// CreateRefund gives back amount (0: all that was paid) of a PaymentIntent.
// reverse, for a destination charge, takes the refund back from the
// connected account (reverse_transfer) and gives back the platform's fee in
// proportion (refund_application_fee).
func (c *Client) CreateRefund(ctx context.Context, paymentIntentID string, amount int64, idempotencyKey string, reverse bool) (*Refund, error) {
	p := &sg.RefundCreateParams{PaymentIntent: sg.String(paymentIntentID)}
	if reverse {
		p.ReverseTransfer = sg.Bool(true)
		p.RefundApplicationFee = sg.Bool(true)
	}
	if amount > 0 {
		p.Amount = sg.Int64(amount)
	}
	p.Reason = sg.String(string(sg.RefundReasonRequestedByCustomer))
	if idempotencyKey != "" {
		p.SetIdempotencyKey(idempotencyKey)
	}
	r, err := c.sc.V1Refunds.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("create refund: %w", err)
	}
	out := &Refund{ID: r.ID, Amount: r.Amount, Currency: strings.ToUpper(string(r.Currency)), Status: string(r.Status)}
	if r.PaymentIntent != nil {
		out.PaymentIntent = r.PaymentIntent.ID
	}
	return out, nil
}

// ErrBadSignature: the webhook is not signed by our endpoint's secret, or
// the signature is older than the tolerance.
var ErrBadSignature = errors.New("stripe webhook signature invalid or stale")

// ErrNoWebhookSecret: webhooks are refused until STRIPE_WEBHOOK_SECRET is set.
var ErrNoWebhookSecret = errors.New("stripe webhook secret not configured")

// VerifyEvent checks the Stripe-Signature header with webhook.ConstructEvent's
// rules (HMAC over the timestamp and body, 300 s tolerance) and answers the
// event. The API-version check is relaxed: the endpoint's version is chosen
// in Stripe's dashboard, and only ids, amounts and metadata are read, which
// every version carries the same way.
func (c *Client) VerifyEvent(payload []byte, header string) (sg.Event, error) {
	if c.webhookSecret == "" {
		return sg.Event{}, ErrNoWebhookSecret
	}
	ev, err := webhook.ConstructEventWithOptions(payload, header, c.webhookSecret, webhook.ConstructEventOptions{
		Tolerance: c.tolerance, IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		return sg.Event{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return ev, nil
}

// CreateCustomer makes the Stripe customer a membership's card is saved on,
// once per key (the plan order's).
func (c *Client) CreateCustomer(ctx context.Context, email string, meta map[string]string, idempotencyKey string) (string, error) {
	p := &sg.CustomerCreateParams{}
	if email != "" {
		p.Email = sg.String(email)
	}
	for k, v := range meta {
		p.AddMetadata(k, v)
	}
	if idempotencyKey != "" {
		p.SetIdempotencyKey(idempotencyKey)
	}
	cu, err := c.sc.V1Customers.Create(ctx, p)
	if err != nil {
		return "", fmt.Errorf("create customer: %w", err)
	}
	return cu.ID, nil
}

// Renewal asks for a Stripe subscription that renews a membership already
// paid until TrialEnd.
type Renewal struct {
	Customer      string
	PaymentMethod string
	Name          string
	Amount        int64
	Currency      string
	// Interval is "month" or "year".
	Interval string
	// TrialEnd is the end of the period the first payment bought: Stripe
	// charges nothing before it, so that period is not paid twice.
	TrialEnd       time.Time
	Metadata       map[string]string
	IdempotencyKey string
	// Destination and FeePercent: each invoice's money goes to the
	// app's connected account (on_behalf_of it), less FeePercent for the
	// platform.
	Destination string
	FeePercent  float64
	// Coupon, when set, discounts the subscription's invoices: an offer
	// code still running after the first payment (store/offers.go).
	Coupon *Coupon
}

// Coupon is a Stripe coupon for an offer: PercentOff or AmountOff (cents,
// in the renewal's currency); Duration "repeating" (Months long, from the
// subscription's start) or "forever".
type Coupon struct {
	PercentOff, AmountOff int64
	Duration              string
	Months                int64
	Code                  string
	// OfferID is the offer the coupon is made for: its coupon has an id
	// of its own (CouponID), so each shape of an offer is one coupon on
	// Stripe however many members use it.
	OfferID string
}

// CouponID names the Stripe coupon of an offer's shape (its discount,
// duration, months and currency).
func CouponID(off *Coupon, currency string) string {
	id := fmt.Sprintf("marquee-offer-%s-%s", off.OfferID, off.Duration)
	if off.Duration == "repeating" {
		id += fmt.Sprintf("-%d", off.Months)
	}
	if off.AmountOff > 0 {
		id += "-" + strings.ToLower(currency)
	}
	return id
}

// ensureCoupon answers the coupon of the offer's shape, creating it the
// first time (by its id, with an idempotency key of the same name; a
// coupon that exists already is used as it is).
func (c *Client) ensureCoupon(ctx context.Context, off *Coupon, currency string) (string, error) {
	cp := &sg.CouponCreateParams{Duration: sg.String(off.Duration), Name: sg.String(off.Code)}
	if off.PercentOff > 0 {
		cp.PercentOff = sg.Float64(float64(off.PercentOff))
	} else {
		cp.AmountOff, cp.Currency = sg.Int64(off.AmountOff), sg.String(strings.ToLower(currency))
	}
	if off.Duration == "repeating" {
		cp.DurationInMonths = sg.Int64(off.Months)
	}
	id := CouponID(off, currency)
	cp.ID = sg.String(id)
	cp.SetIdempotencyKey(id)
	coupon, err := c.sc.V1Coupons.Create(ctx, cp)
	var se *sg.Error
	if errors.As(err, &se) && se.Code == sg.ErrorCodeResourceAlreadyExists {
		return id, nil
	}
	if err != nil {
		return "", fmt.Errorf("create coupon: %w", err)
	}
	return coupon.ID, nil
}

// CreateSubscription makes the price and the subscription of a membership
// and answers the subscription's id. Both calls carry keys derived from
// IdempotencyKey, so a retry (the browser's confirm racing the webhook)
// answers the same subscription.
func (c *Client) CreateSubscription(ctx context.Context, r Renewal) (string, error) {
	pp := &sg.PriceCreateParams{
		Currency:    sg.String(strings.ToLower(r.Currency)),
		UnitAmount:  sg.Int64(r.Amount),
		Recurring:   &sg.PriceCreateRecurringParams{Interval: sg.String(r.Interval)},
		ProductData: &sg.PriceCreateProductDataParams{Name: sg.String(r.Name)},
	}
	if r.Metadata["planId"] != "" {
		// The price names its tier, so a change made in Stripe's portal
		// (customer.subscription.updated) says which tier it moved to.
		pp.AddMetadata("planId", r.Metadata["planId"])
	}
	if r.IdempotencyKey != "" {
		pp.SetIdempotencyKey(r.IdempotencyKey + "-price")
	}
	price, err := c.sc.V1Prices.Create(ctx, pp)
	if err != nil {
		return "", fmt.Errorf("create price: %w", err)
	}
	sp := &sg.SubscriptionCreateParams{
		Customer: sg.String(r.Customer),
		Items:    []*sg.SubscriptionCreateItemParams{{Price: sg.String(price.ID)}},
		TrialEnd: sg.Int64(r.TrialEnd.Unix()),
	}
	if r.PaymentMethod != "" {
		sp.DefaultPaymentMethod = sg.String(r.PaymentMethod)
	}
	if off := r.Coupon; off != nil {
		coupon, err := c.ensureCoupon(ctx, off, r.Currency)
		if err != nil {
			return "", err
		}
		sp.Discounts = []*sg.SubscriptionCreateDiscountParams{{Coupon: sg.String(coupon)}}
	}
	if r.Destination != "" {
		sp.OnBehalfOf = sg.String(r.Destination)
		sp.TransferData = &sg.SubscriptionCreateTransferDataParams{Destination: sg.String(r.Destination)}
		if r.FeePercent > 0 {
			sp.ApplicationFeePercent = sg.Float64(r.FeePercent)
		}
	}
	for k, v := range r.Metadata {
		sp.AddMetadata(k, v)
	}
	if r.IdempotencyKey != "" {
		sp.SetIdempotencyKey(r.IdempotencyKey + "-subscription")
	}
	sub, err := c.sc.V1Subscriptions.Create(ctx, sp)
	if err != nil {
		return "", fmt.Errorf("create subscription: %w", err)
	}
	return sub.ID, nil
}

// ChangePrice moves subscription id to a new price (r's name, amount,
// currency, interval and planId metadata). An upgrade (prorate) invoices
// the difference for the rest of the period at once; a downgrade bills the
// new price from the next invoice on. The calls carry keys derived from
// r.IdempotencyKey, so a repeated request changes the subscription once.
func (c *Client) ChangePrice(ctx context.Context, id string, r Renewal, prorate bool) error {
	sub, err := c.sc.V1Subscriptions.Retrieve(ctx, id, nil)
	if err != nil {
		return fmt.Errorf("retrieve subscription: %w", err)
	}
	if sub.Items == nil || len(sub.Items.Data) != 1 {
		return fmt.Errorf("subscription %s has no single item to change", id)
	}
	pp := &sg.PriceCreateParams{
		Currency:    sg.String(strings.ToLower(r.Currency)),
		UnitAmount:  sg.Int64(r.Amount),
		Recurring:   &sg.PriceCreateRecurringParams{Interval: sg.String(r.Interval)},
		ProductData: &sg.PriceCreateProductDataParams{Name: sg.String(r.Name)},
	}
	pp.AddMetadata("planId", r.Metadata["planId"])
	pp.SetIdempotencyKey(r.IdempotencyKey + "-price")
	price, err := c.sc.V1Prices.Create(ctx, pp)
	if err != nil {
		return fmt.Errorf("create price: %w", err)
	}
	behaviour := "none"
	if prorate {
		behaviour = "always_invoice"
	}
	up := &sg.SubscriptionUpdateParams{
		Items:             []*sg.SubscriptionUpdateItemParams{{ID: sg.String(sub.Items.Data[0].ID), Price: sg.String(price.ID)}},
		ProrationBehavior: sg.String(behaviour),
	}
	if off := r.Coupon; off != nil {
		// An upgrade's offer code: the coupon discounts the upgrade's
		// invoice and those within its duration.
		coupon, err := c.ensureCoupon(ctx, off, r.Currency)
		if err != nil {
			return err
		}
		up.Discounts = []*sg.SubscriptionUpdateDiscountParams{{Coupon: sg.String(coupon)}}
	}
	up.AddMetadata("planId", r.Metadata["planId"])
	up.SetIdempotencyKey(r.IdempotencyKey + "-update")
	if _, err := c.sc.V1Subscriptions.Update(ctx, id, up); err != nil {
		return fmt.Errorf("update subscription: %w", err)
	}
	return nil
}

// Subscription answers subscription id as Stripe holds it now. Webhooks
// arrive late and out of order, so a change is applied from this, not from
// the event's copy.
func (c *Client) Subscription(ctx context.Context, id string) (*sg.Subscription, error) {
	sub, err := c.sc.V1Subscriptions.Retrieve(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("retrieve subscription: %w", err)
	}
	return sub, nil
}

// PortalURL opens a Billing Portal session for the customer of
// subscription id (where a card member changes the card and reads the
// invoices) and answers its address; the member comes back to returnURL.
func (c *Client) PortalURL(ctx context.Context, id, returnURL string) (string, error) {
	sub, err := c.sc.V1Subscriptions.Retrieve(ctx, id, nil)
	if err != nil {
		return "", fmt.Errorf("retrieve subscription: %w", err)
	}
	if sub.Customer == nil || sub.Customer.ID == "" {
		return "", fmt.Errorf("subscription %s has no customer", id)
	}
	ps, err := c.sc.V1BillingPortalSessions.Create(ctx, &sg.BillingPortalSessionCreateParams{
		Customer: sg.String(sub.Customer.ID), ReturnURL: sg.String(returnURL)})
	if err != nil {
		return "", fmt.Errorf("create billing portal session: %w", err)
	}
	return ps.URL, nil
}

// SetCancelAtPeriodEnd stops (or resumes) a subscription's renewals at the
// end of its period.
func (c *Client) SetCancelAtPeriodEnd(ctx context.Context, id string, cancel bool) error {
	if _, err := c.sc.V1Subscriptions.Update(ctx, id, &sg.SubscriptionUpdateParams{CancelAtPeriodEnd: sg.Bool(cancel)}); err != nil {
		return fmt.Errorf("update subscription: %w", err)
	}
	return nil
}

// ChargeFee answers what Stripe kept of a succeeded PaymentIntent's charge:
// the fee of its balance transaction (latest_charge.balance_transaction,
// expanded in one request). found is false while Stripe has no balance
// transaction for it yet.
func (c *Client) ChargeFee(ctx context.Context, paymentIntentID string) (fee int64, currency string, found bool, err error) {
	p := &sg.PaymentIntentRetrieveParams{}
	p.AddExpand("latest_charge.balance_transaction")
	pi, err := c.sc.V1PaymentIntents.Retrieve(ctx, paymentIntentID, p)
	if err != nil {
		return 0, "", false, fmt.Errorf("retrieve payment intent fee: %w", err)
	}
	if pi.LatestCharge == nil || pi.LatestCharge.BalanceTransaction == nil || pi.LatestCharge.BalanceTransaction.ID == "" {
		return 0, "", false, nil
	}
	bt := pi.LatestCharge.BalanceTransaction
	return bt.Fee, strings.ToUpper(string(bt.Currency)), true, nil
}
