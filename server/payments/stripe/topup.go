package stripe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sg "github.com/stripe/stripe-go/v85"

	"marquee/server/payments"
	"marquee/store"
)

var _ payments.TopupPayer = (*Provider)(nil)

// TopupIntentKey is the idempotency key of a top-up's PaymentIntent: every
// retry and concurrent start answers the one intent.
func TopupIntentKey(topupID string, amount int64, currency string) string {
	return fmt.Sprintf("marquee-topup-%s-intent-%d-%s", topupID, amount, strings.ToLower(currency))
}

// StartTopup answers the top-up's PaymentIntent (made once, for the stored
// amount), which the browser's Payment Element confirms.
func (p *Provider) StartTopup(ctx context.Context, req payments.TopupRequest) (*payments.Started, error) {
	t := req.Topup
	if t.Status != store.TopupPending {
		return nil, store.ErrTopupClosed
	}
	if strings.HasPrefix(t.PaymentRef, "pi_") {
		in, err := p.Client.Retrieve(ctx, t.PaymentRef)
		if err == nil && in.TopupID == t.ID && in.Amount == t.Amount && in.Status != string(sg.PaymentIntentStatusCanceled) {
			return &payments.Started{Ref: in.ID, ClientSecret: in.ClientSecret, Status: in.Status}, nil
		}
	}
	in, err := p.Client.CreateIntent(ctx, CreateIntent{Amount: t.Amount, Currency: t.Currency, Email: req.Payer.Email,
		Metadata:       map[string]string{"topupId": t.ID, "appId": t.AppID, "userId": t.UserID, "kind": "wallet_topup"},
		IdempotencyKey: TopupIntentKey(t.ID, t.Amount, t.Currency)})
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if in.TopupID != t.ID || in.Amount != t.Amount {
		return nil, payments.ErrNotThisOrder
	}
	if err := p.Store.AttachTopupPayment(ctx, t.ID, payments.Stripe, in.ID); err != nil {
		return nil, err
	}
	t.PaymentRef = in.ID
	return &payments.Started{Ref: in.ID, ClientSecret: in.ClientSecret, Status: in.Status}, nil
}

// ConfirmTopup re-reads the top-up's PaymentIntent at Stripe (the browser's
// word that it paid is never enough) and credits the wallet the first time
// Stripe says the whole amount arrived. Not paid yet answers the top-up
// still PENDING.
func (p *Provider) ConfirmTopup(ctx context.Context, req payments.TopupRequest) (*store.WalletTopup, error) {
	t := req.Topup
	if t.Status == store.TopupPaid {
		return t, nil
	}
	if t.PaymentMethod == payments.Stripe && strings.HasPrefix(t.PaymentRef, "cs_") {
		return p.confirmTopupCheckout(ctx, t)
	}
	if t.PaymentMethod != payments.Stripe || !strings.HasPrefix(t.PaymentRef, "pi_") {
		return nil, payments.ErrNotThisOrder
	}
	in, err := p.Client.Retrieve(ctx, t.PaymentRef)
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if in.TopupID != t.ID {
		return nil, payments.ErrNotThisOrder
	}
	switch sg.PaymentIntentStatus(in.Status) {
	case sg.PaymentIntentStatusSucceeded:
		rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: "intent:" + in.ID + ":succeeded", Type: "payment_intent.retrieved",
			AppID: &t.AppID, PaymentRef: in.ID, Amount: in.AmountReceived, Currency: in.Currency}
		return p.applyRetrievedTopup(ctx, t, rec)
	case sg.PaymentIntentStatusRequiresPaymentMethod:
		if in.FailureMessage != "" {
			return nil, payments.Declined(in.FailureMessage)
		}
	}
	return t, nil
}

// webhookTopup applies payment_intent.succeeded / payment_failed for a
// top-up's PaymentIntent, once per event id.
func (p *Provider) webhookTopup(ctx context.Context, ev sg.Event, in *Intent) (*payments.Result, error) {
	t, err := p.Store.TopupByID(ctx, in.TopupID)
	if errors.Is(err, store.ErrNotFound) {
		return &payments.Result{Ref: in.ID, Status: store.OutcomeIgnored}, nil
	}
	if err != nil {
		return nil, err
	}
	rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), AppID: &t.AppID, PaymentRef: in.ID,
		Amount: in.AmountReceived, Currency: in.Currency}
	if ev.Type != "payment_intent.succeeded" {
		rec.Amount, rec.Message = in.Amount, in.FailureMessage
		if err := p.Store.RecordTopupFailure(ctx, rec); err != nil {
			return nil, err
		}
		return &payments.Result{Ref: in.ID, Status: store.OutcomeFailed}, nil
	}
	_, fresh, err := p.Store.ApplyTopupPaymentEvent(ctx, rec, t.ID, payments.Stripe, in.ID, in.AmountReceived, in.Currency)
	if err != nil {
		return nil, err
	}
	if rec.Outcome == store.OutcomeMismatch || rec.Outcome == store.OutcomeNotPayable {
		p.log().Error("stripe top-up payment not applied: it is being refunded", "topup", t.ID, "intent", in.ID, "outcome", rec.Outcome)
	}
	return &payments.Result{Ref: in.ID, Status: statusOf(rec, fresh)}, nil
}

// applyRetrievedTopup credits the top-up with the payment Stripe reported
// when asked (rec: its PaymentIntent or Checkout Session), once; a payment
// the top-up can no longer take is being refunded, and the caller is told.
func (p *Provider) applyRetrievedTopup(ctx context.Context, t *store.WalletTopup, rec *store.PaymentEvent) (*store.WalletTopup, error) {
	out, _, err := p.Store.ApplyTopupPaymentEvent(ctx, rec, t.ID, payments.Stripe, rec.PaymentRef, rec.Amount, rec.Currency)
	if err != nil {
		return nil, err
	}
	if out.Status != store.TopupPaid {
		p.log().Warn("stripe top-up payment not applied: it is being refunded", "topup", t.ID, "ref", rec.PaymentRef, "outcome", rec.Outcome)
		return nil, store.ErrTopupClosed
	}
	return out, nil
}
