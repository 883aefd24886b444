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
// Naming another account as payee is PayPal's "Pay another account" and
// needs no partner status; the BN code (PAYPAL_BN_CODE) is sent when set
// and is required only for platform_fees (the config check enforces it).
func (p *Provider) payeeOf(ctx context.Context, appID string, total int64) (*Payee, int64, error) {
	pp, err := p.Store.PayPalPayeeOf(ctx, appID)
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
	pp, err := p.Store.PayPalPayeeOf(ctx, o.AppID)
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
