package payments

import (
	"context"

	"marquee/store"
)

// TopupRequest starts or confirms a wallet top-up (issue 24). The amount is
// the stored top-up's; nothing of it comes from the browser.
type TopupRequest struct {
	Topup *store.WalletTopup
	Payer Payer
	// ReturnURL and CancelURL: where PayPal sends the member back.
	ReturnURL string
	CancelURL string
}

// TopupPayer is the part of a provider (card, PayPal) that takes money in
// for the wallet. StartTopup makes (or reuses) the provider's payment;
// ConfirmTopup asks the provider whether the money arrived and, the first
// time it did, credits the wallet (store.ApplyTopupPaymentEvent). The
// provider's webhooks credit it the same way, whichever comes first.
type TopupPayer interface {
	StartTopup(ctx context.Context, req TopupRequest) (*Started, error)
	ConfirmTopup(ctx context.Context, req TopupRequest) (*store.WalletTopup, error)
}

// TopupPayerFor answers the registered provider for method when it takes
// top-ups: the wallet itself does not (ErrNotSupported).
func (r *Registry) TopupPayerFor(method string) (TopupPayer, error) {
	p, err := r.Get(method)
	if err != nil {
		return nil, err
	}
	tp, ok := p.(TopupPayer)
	if !ok {
		return nil, ErrNotSupported
	}
	return tp, nil
}

// TopupRedirecter is a card provider that can also take a top-up on a
// hosted page of its own (Stripe Checkout): the "Add funds" form without
// JavaScript redirects there, as PayPal's approval does.
type TopupRedirecter interface {
	StartTopupRedirect(ctx context.Context, req TopupRequest) (*Started, error)
}
