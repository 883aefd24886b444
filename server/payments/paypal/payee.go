package paypal

import (
	"context"

	"marquee/server/payments"
	"marquee/store"
)

// Fees is how the operator's platform fee applies to PayPal orders paid to
// a creator's own PayPal account (issue 24).
// The fee itself is the app's platform fee (store.Storage.PlatformFee).
type Fees struct {
	// Allowed (PAYPAL_PLATFORM_FEES): the operator's account may take
	// platform fees, so orders carry the fee in
	// payment_instruction.platform_fees. Otherwise the fee is recorded as
	// owed by the creator (store.PlatformFeeOwed).
	Allowed bool
}

// payeeOf answers the PayPal account an order of appID pays (nil: the
// operator's own, as before) and the platform fee the order carries.
// PayPal takes orders naming another account's payee from a platform only
// with its partner attribution (PAYPAL_BN_CODE): without one the app's
// orders are paid to the operator, as before, and the creator's earnings
// stay in the ledger.
func (p *Provider) payeeOf(ctx context.Context, appID string, total int64) (*Payee, int64, error) {
	pp, err := p.creatorPayee(ctx, appID)
	if err != nil || pp == nil {
		return nil, 0, err
	}
	payee := &Payee{MerchantID: pp.MerchantID, EmailAddress: pp.Email}
	if !p.Fees.Allowed {
		return payee, 0, nil
	}
	fee, err := p.Store.PlatformFee(ctx, appID, total)
	if err != nil {
		return nil, 0, err
	}
	return payee, fee, nil
}

// recordFeeOwed notes, for an order PayPal paid to its creator's account
// without a platform fee, the fee the creator owes. Once per payment.
func (p *Provider) recordFeeOwed(ctx context.Context, o *store.Order, ref string, amount int64, currency string) {
	if p.Fees.Allowed {
		return
	}
	pp, err := p.creatorPayee(ctx, o.AppID)
	if err != nil || pp == nil {
		if err != nil {
			p.log().Error("platform fee owed not recorded", "order", o.ID, "err", err)
		}
		return
	}
	fee, err := p.Store.PlatformFee(ctx, o.AppID, amount)
	if err != nil {
		p.log().Error("platform fee owed not recorded", "order", o.ID, "err", err)
		return
	}
	if fee <= 0 {
		return
	}
	if err := p.Store.RecordFeeOwed(ctx, &store.PlatformFeeOwed{AppID: o.AppID, OrderID: o.ID, Provider: payments.PayPal,
		PaymentRef: ref, Payee: pp.Name(), Gross: amount, Amount: fee, Currency: currency}); err != nil {
		p.log().Error("platform fee owed not recorded", "order", o.ID, "err", err)
	}
}

// creatorPayee is the app's PayPal payee when orders can name it (the
// platform has a BN code), nil otherwise.
func (p *Provider) creatorPayee(ctx context.Context, appID string) (*store.PayPalPayee, error) {
	pp, err := p.Store.PayPalPayeeOf(ctx, appID)
	if err != nil || pp == nil {
		return nil, err
	}
	if !p.Client.PartnerAttribution() {
		p.log().Warn("paypal payee not named: PAYPAL_BN_CODE is not set", "app", appID)
		return nil, nil
	}
	return pp, nil
}
