package stripe

import (
	"context"
	"errors"
	"strings"

	sg "github.com/stripe/stripe-go/v85"

	"marquee/server/payments"
	"marquee/store"
)

var _ payments.DonationPayer = (*Provider)(nil)

// PayDonation takes a donation by card: a PaymentIntent for the amount
// stored on the donation (never the browser's), made once per donation
// (idempotency key, and the intent kept on the donation), which the
// browser's Payment Element confirms. Called again, it re-reads that
// intent: succeeded marks the donation PAID (as the payment_intent.succeeded
// webhook does, whichever comes first); otherwise it answers the same
// client secret. The donation counts for nothing until then.
func (p *Provider) PayDonation(ctx context.Context, req payments.DonationRequest) (*payments.DonationResult, error) {
	d, err := p.Store.DonationByID(ctx, req.DonationID)
	if err != nil {
		return nil, err
	}
	if d.AppID != req.AppID || d.UserID != req.Payer.UserID {
		return nil, store.ErrNotFound
	}
	if d.Status == store.DonationPaid {
		return &payments.DonationResult{Donation: d}, nil
	}
	if d.Status != store.DonationPending {
		return nil, store.ErrDonationClosed
	}
	if d.PaymentMethod == payments.Stripe && strings.HasPrefix(d.PaymentRef, "pi_") {
		in, err := p.Client.Retrieve(ctx, d.PaymentRef)
		if err != nil {
			return nil, payments.ProviderError("stripe", err)
		}
		if in.DonationID != d.ID || in.Amount != d.Amount {
			return nil, payments.ErrNotThisOrder
		}
		switch sg.PaymentIntentStatus(in.Status) {
		case sg.PaymentIntentStatusSucceeded:
			return p.donationPaid(ctx, "intent:"+in.ID+":succeeded", "payment_intent.retrieved", d, in)
		case sg.PaymentIntentStatusCanceled:
			return nil, store.ErrDonationClosed
		}
		return &payments.DonationResult{Donation: d, Payment: &payments.Started{Ref: in.ID, ClientSecret: in.ClientSecret, Status: in.Status}}, nil
	}
	dest, fee, err := p.Destination(ctx, d.AppID, d.Amount)
	if err != nil {
		return nil, err
	}
	in, err := p.Client.CreateIntent(ctx, CreateIntent{Amount: d.Amount, Currency: d.Currency, Email: req.Payer.Email,
		Metadata:       map[string]string{"donationId": d.ID, "appId": d.AppID, "userId": d.UserID, "kind": "donation"},
		IdempotencyKey: ConnectKey(DonationIntentKey(d.ID, d.Amount, d.Currency), dest, fee), Destination: dest, ApplicationFee: fee})
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if in.DonationID != d.ID || in.Amount != d.Amount {
		return nil, payments.ErrNotThisOrder
	}
	if err := p.Store.AttachDonationPayment(ctx, d.ID, payments.Stripe, in.ID); err != nil {
		return nil, err
	}
	d.PaymentMethod, d.PaymentRef = payments.Stripe, in.ID
	return &payments.DonationResult{Donation: d, Payment: &payments.Started{Ref: in.ID, ClientSecret: in.ClientSecret, Status: in.Status}}, nil
}

// donationPaid records that Stripe says in succeeded and, the first time,
// marks the donation PAID for the amount received.
func (p *Provider) donationPaid(ctx context.Context, eventID, typ string, d *store.Donation, in *Intent) (*payments.DonationResult, error) {
	rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: eventID, Type: typ, AppID: &d.AppID, PaymentRef: in.ID,
		Amount: in.AmountReceived, Currency: in.Currency}
	out, _, err := p.Store.ApplyDonationPaymentEvent(ctx, rec, d.ID, payments.Stripe, in.ID, in.AmountReceived, in.Currency)
	if err != nil {
		return nil, err
	}
	if rec.Outcome == store.OutcomeMismatch || rec.Outcome == store.OutcomeNotPayable {
		p.log().Error("stripe donation payment not applied: needs a refund", "donation", d.ID, "intent", in.ID, "outcome", rec.Outcome)
	}
	if out.Status != store.DonationPaid {
		return nil, payments.ErrNotThisOrder
	}
	p.bookProcessorFee(ctx, out.AppID, "donation:"+out.ID, nil, in, "Donation")
	return &payments.DonationResult{Donation: out}, nil
}

// webhookDonation applies payment_intent.succeeded / payment_failed for a
// donation's PaymentIntent, once per event id.
func (p *Provider) webhookDonation(ctx context.Context, ev sg.Event, in *Intent) (*payments.Result, error) {
	d, err := p.Store.DonationByID(ctx, in.DonationID)
	if errors.Is(err, store.ErrNotFound) {
		return &payments.Result{Ref: in.ID, Status: store.OutcomeIgnored}, nil
	}
	if err != nil {
		return nil, err
	}
	if ev.Type == "payment_intent.succeeded" {
		rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), AppID: &d.AppID, PaymentRef: in.ID,
			Amount: in.AmountReceived, Currency: in.Currency}
		out, fresh, err := p.Store.ApplyDonationPaymentEvent(ctx, rec, d.ID, payments.Stripe, in.ID, in.AmountReceived, in.Currency)
		if err != nil {
			return nil, err
		}
		if rec.Outcome == store.OutcomeMismatch || rec.Outcome == store.OutcomeNotPayable {
			p.log().Error("stripe donation payment not applied: needs a refund", "donation", d.ID, "intent", in.ID, "outcome", rec.Outcome)
		}
		if out.Status == store.DonationPaid && out.PaymentRef == in.ID {
			p.bookProcessorFee(ctx, out.AppID, "donation:"+out.ID, nil, in, "Donation")
		}
		return &payments.Result{Donation: out, Ref: in.ID, Status: statusOf(rec, fresh)}, nil
	}
	rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), AppID: &d.AppID, PaymentRef: in.ID,
		Amount: in.Amount, Currency: in.Currency, Message: in.FailureMessage, Outcome: store.OutcomeFailed}
	_, fresh, err := p.Store.ApplyPaymentEvent(ctx, rec, nil)
	if err != nil {
		return nil, err
	}
	return &payments.Result{Donation: d, Ref: in.ID, Status: statusOf(rec, fresh)}, nil
}
