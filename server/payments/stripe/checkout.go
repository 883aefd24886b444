package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sg "github.com/stripe/stripe-go/v85"

	"marquee/server/payments"
	"marquee/store"
)

// Stripe Checkout (issue 24): a card payment that needs no JavaScript on
// our page. The member's plain form makes a Checkout Session (mode
// payment) and is redirected to its url, Stripe's hosted page; Stripe sends
// them back to SuccessURL, and checkout.session.completed (or the server's
// own read of the session) says the money arrived.

// CheckoutSession is the part of a Checkout Session the product reads.
type CheckoutSession struct {
	ID            string
	URL           string
	Status        string // open, complete, expired
	PaymentStatus string // unpaid, paid, no_payment_required
	AmountTotal   int64
	Currency      string
	PaymentIntent string
	// Subscription is the subscription a completed session in
	// subscription mode made (card_trial.go).
	Subscription string
	Metadata     map[string]string
}

func sessionOf(cs *sg.CheckoutSession) *CheckoutSession {
	out := &CheckoutSession{ID: cs.ID, URL: cs.URL, Status: string(cs.Status), PaymentStatus: string(cs.PaymentStatus),
		AmountTotal: cs.AmountTotal, Currency: strings.ToUpper(string(cs.Currency)), Metadata: cs.Metadata}
	if cs.PaymentIntent != nil {
		out.PaymentIntent = cs.PaymentIntent.ID
	}
	if cs.Subscription != nil {
		out.Subscription = cs.Subscription.ID
	}
	return out
}

// CreateCheckout asks for a Checkout Session that takes Amount once.
type CreateCheckout struct {
	Name       string
	Amount     int64
	Currency   string
	Email      string
	SuccessURL string
	CancelURL  string
	// Metadata names what the session pays (a top-up); it is on the
	// session only, not its PaymentIntent, so the intent's own events are
	// not taken for another payment of it.
	Metadata       map[string]string
	IdempotencyKey string
}

func (c *Client) CreateCheckout(ctx context.Context, in CreateCheckout) (*CheckoutSession, error) {
	p := &sg.CheckoutSessionCreateParams{
		Mode:       sg.String(string(sg.CheckoutSessionModePayment)),
		SuccessURL: sg.String(in.SuccessURL),
		CancelURL:  sg.String(in.CancelURL),
		LineItems: []*sg.CheckoutSessionCreateLineItemParams{{
			Quantity: sg.Int64(1),
			PriceData: &sg.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    sg.String(strings.ToLower(in.Currency)),
				UnitAmount:  sg.Int64(in.Amount),
				ProductData: &sg.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: sg.String(in.Name)},
			},
		}},
	}
	if in.Email != "" {
		p.CustomerEmail = sg.String(in.Email)
	}
	for k, v := range in.Metadata {
		p.AddMetadata(k, v)
	}
	if in.IdempotencyKey != "" {
		p.SetIdempotencyKey(in.IdempotencyKey)
	}
	cs, err := c.sc.V1CheckoutSessions.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("create checkout session: %w", err)
	}
	return sessionOf(cs), nil
}

// RetrieveCheckout asks Stripe how a Checkout Session stands.
func (c *Client) RetrieveCheckout(ctx context.Context, id string) (*CheckoutSession, error) {
	cs, err := c.sc.V1CheckoutSessions.Retrieve(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("retrieve checkout session: %w", err)
	}
	return sessionOf(cs), nil
}

// TopupCheckoutKey is the idempotency key of a top-up's Checkout Session.
func TopupCheckoutKey(topupID string, amount int64, currency string) string {
	return fmt.Sprintf("marquee-topup-%s-checkout-%d-%s", topupID, amount, strings.ToLower(currency))
}

var _ payments.TopupRedirecter = (*Provider)(nil)

// StartTopupRedirect makes the top-up's Checkout Session (once, for the
// stored amount) and answers its url as the approval URL: "Add funds" by
// card from a plain form, without JavaScript. The session names the top-up
// in its metadata; the wallet is credited by checkout.session.completed or
// the return page's read of the session, once.
func (p *Provider) StartTopupRedirect(ctx context.Context, req payments.TopupRequest) (*payments.Started, error) {
	t := req.Topup
	if t.Status != store.TopupPending {
		return nil, store.ErrTopupClosed
	}
	cs, err := p.Client.CreateCheckout(ctx, CreateCheckout{Name: "Wallet funds", Amount: t.Amount, Currency: t.Currency, Email: req.Payer.Email,
		SuccessURL: req.ReturnURL, CancelURL: req.CancelURL,
		Metadata:       map[string]string{"topupId": t.ID, "appId": t.AppID, "userId": t.UserID, "kind": "wallet_topup"},
		IdempotencyKey: TopupCheckoutKey(t.ID, t.Amount, t.Currency)})
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if cs.Metadata["topupId"] != t.ID || cs.AmountTotal != t.Amount || cs.URL == "" {
		return nil, payments.ErrNotThisOrder
	}
	if err := p.Store.AttachTopupPayment(ctx, t.ID, payments.Stripe, cs.ID); err != nil {
		return nil, err
	}
	t.PaymentRef = cs.ID
	return &payments.Started{Ref: cs.ID, ApprovalURL: cs.URL, Status: cs.Status}, nil
}

// confirmTopupCheckout re-reads a top-up's Checkout Session and credits
// the wallet the first time Stripe says it is paid.
func (p *Provider) confirmTopupCheckout(ctx context.Context, t *store.WalletTopup) (*store.WalletTopup, error) {
	cs, err := p.Client.RetrieveCheckout(ctx, t.PaymentRef)
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if cs.Metadata["topupId"] != t.ID {
		return nil, payments.ErrNotThisOrder
	}
	if cs.PaymentStatus != "paid" {
		return t, nil
	}
	rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: "checkout:" + cs.ID + ":paid", Type: "checkout.session.retrieved",
		AppID: &t.AppID, PaymentRef: cs.ID, Amount: cs.AmountTotal, Currency: cs.Currency}
	return p.applyRetrievedTopup(ctx, t, rec)
}

// webhookCheckout applies checkout.session.completed for a top-up's
// session, once per event id: paid sessions credit the wallet.
func (p *Provider) webhookCheckout(ctx context.Context, ev sg.Event) (*payments.Result, error) {
	var raw sg.CheckoutSession
	if err := json.Unmarshal(ev.Data.Raw, &raw); err != nil || raw.ID == "" {
		return nil, fmt.Errorf("%w: checkout session: %v", payments.ErrInvalidWebhook, err)
	}
	cs := sessionOf(&raw)
	if cs.Metadata[metaKind] == kindCardTrial {
		return p.webhookTrialCheckout(ctx, cs)
	}
	id := cs.Metadata["topupId"]
	if id == "" || cs.PaymentStatus != "paid" {
		return &payments.Result{Ref: cs.ID, Status: store.OutcomeIgnored}, nil
	}
	t, err := p.Store.TopupByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return &payments.Result{Ref: cs.ID, Status: store.OutcomeIgnored}, nil
	}
	if err != nil {
		return nil, err
	}
	rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), AppID: &t.AppID, PaymentRef: cs.ID,
		Amount: cs.AmountTotal, Currency: cs.Currency}
	_, fresh, err := p.Store.ApplyTopupPaymentEvent(ctx, rec, t.ID, payments.Stripe, cs.ID, cs.AmountTotal, cs.Currency)
	if err != nil {
		return nil, err
	}
	return &payments.Result{Ref: cs.ID, Status: statusOf(rec, fresh)}, nil
}

// ExpireCheckout expires an open Checkout Session so its page takes no
// payment; one no longer open answers ErrIntentNotOpen. Stripe refuses
// that with a 400 that has no error code, like other bad requests (a
// connected account's key, say), so the session's own status decides:
// only a session that is not open any more is "already closed".
func (c *Client) ExpireCheckout(ctx context.Context, id string) error {
	_, err := c.sc.V1CheckoutSessions.Expire(ctx, id, nil)
	var se *sg.Error
	if err == nil || !errors.As(err, &se) || se.HTTPStatusCode != 400 {
		if err != nil {
			return fmt.Errorf("expire checkout session: %w", err)
		}
		return nil
	}
	cs, rerr := c.RetrieveCheckout(ctx, id)
	if rerr != nil {
		return fmt.Errorf("expire checkout session: %w (and then: %v)", err, rerr)
	}
	if cs.Status != string(sg.CheckoutSessionStatusOpen) {
		return fmt.Errorf("%w: %s: %v", ErrIntentNotOpen, cs.Status, err)
	}
	return fmt.Errorf("expire checkout session: %w", err)
}
