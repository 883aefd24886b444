package payments

import (
	"context"
	"errors"

	"marquee/store"
)

// DonationPayer is the part of a provider that takes one-off donations
// (POST /api/donations/process). A donation is not an order (nothing is
// shipped, no stock, no cart), so it has its own small call; the provider
// and its registry are the same ones orders use.
type DonationPayer interface {
	PayDonation(ctx context.Context, req DonationRequest) (*DonationResult, error)
}

// DonationResult is the donation as it now stands and, when the money has
// not arrived yet (a card), what the browser needs to finish: the
// PaymentIntent's client secret for the Payment Element. Calling
// PayDonation again for the same donation answers the same payment, or the
// donation PAID once the provider says the money arrived.
type DonationResult struct {
	Donation *store.Donation
	Payment  *Started
}

type DonationRequest struct {
	AppID      string
	DonationID string
	Payer      Payer
}

// DonationLedger is what the wallet needs to pay a donation: the money moves
// and the donation is marked PAID in one transaction.
type DonationLedger interface {
	PayDonationFromWallet(ctx context.Context, appID, userID, donationID string) (*store.Donation, error)
}

// PayDonation pays from the donor's wallet; too little money is ErrDeclined.
func (w *WalletProvider) PayDonation(ctx context.Context, req DonationRequest) (*DonationResult, error) {
	l, ok := w.Ledger.(DonationLedger)
	if !ok {
		return nil, ErrNotSupported
	}
	d, err := l.PayDonationFromWallet(ctx, req.AppID, req.Payer.UserID, req.DonationID)
	if errors.Is(err, store.ErrInsufficientFunds) {
		return nil, ErrDeclined
	}
	if err != nil {
		return nil, err
	}
	return &DonationResult{Donation: d}, nil
}

// DonationPayerFor answers the registered provider for method when it takes
// donations, ErrDisabled or ErrNotSupported otherwise.
func (r *Registry) DonationPayerFor(method string) (DonationPayer, error) {
	p, err := r.Get(method)
	if err != nil {
		return nil, err
	}
	dp, ok := p.(DonationPayer)
	if !ok {
		return nil, ErrNotSupported
	}
	return dp, nil
}
