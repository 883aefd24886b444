package payments

import (
	"context"
	"errors"

	"marquee/store"
)

// WalletLedger is what the wallet provider needs: the order is paid and
// marked PAID in one database transaction.
type WalletLedger interface {
	Orders
	PayOrderFromWallet(ctx context.Context, appID, userID, orderID string) (*store.Order, error)
}

// WalletProvider pays orders from the buyer's app-scoped wallet (SPEC.md's
// musepay). There is nothing to start and no webhook: Confirm moves the
// money and marks the order PAID atomically.
type WalletProvider struct {
	Ledger WalletLedger
}

func NewWallet(l WalletLedger) *WalletProvider { return &WalletProvider{Ledger: l} }

func (w *WalletProvider) Name() string { return Wallet }

func (w *WalletProvider) Start(ctx context.Context, req StartRequest) (*Started, error) {
	return &Started{Ref: req.Order.ID, Status: "requires_confirmation"}, nil
}

// Confirm pays req.Order from req.Payer's wallet. Too little money is
// ErrDeclined (the order stays PENDING); an order no longer PENDING is
// store.ErrIllegalTransition.
func (w *WalletProvider) Confirm(ctx context.Context, req ConfirmRequest) (*Result, error) {
	o, err := w.Ledger.PayOrderFromWallet(ctx, req.Order.AppID, req.Payer.UserID, req.Order.ID)
	if errors.Is(err, store.ErrInsufficientFunds) {
		return nil, ErrDeclined
	}
	if err != nil {
		return nil, err
	}
	return &Result{Order: o, Ref: o.PaymentRef, Status: "succeeded"}, nil
}

// Refund gives req.Amount (0: all that is left) back to the buyer's wallet.
func (w *WalletProvider) Refund(ctx context.Context, req RefundRequest) (*store.Order, error) {
	return w.Ledger.RefundOrderAmount(ctx, req.Order.AppID, req.Order.ID, req.Amount, req.Reason)
}
