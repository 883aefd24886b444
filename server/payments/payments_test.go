package payments

import (
	"context"
	"errors"
	"testing"

	"marquee/store"
)

type fakeLedger struct {
	paid, refunded int
	err            error
}

func (f *fakeLedger) MarkOrderPaid(ctx context.Context, orderID, method, ref string, amount int64) (*store.Order, error) {
	return nil, nil
}
func (f *fakeLedger) RefundOrderAmount(ctx context.Context, appID, orderID string, amount int64, reason string) (*store.Order, error) {
	f.refunded++
	return &store.Order{ID: orderID, Status: store.OrderRefunded}, nil
}
func (f *fakeLedger) PayOrderFromWallet(ctx context.Context, appID, userID, orderID string) (*store.Order, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.paid++
	return &store.Order{ID: orderID, Status: store.OrderPaid, PaymentRef: "t1"}, nil
}

type named string

func (n named) Name() string                                              { return string(n) }
func (named) Start(context.Context, StartRequest) (*Started, error)       { return nil, nil }
func (named) Confirm(context.Context, ConfirmRequest) (*Result, error)    { return nil, nil }
func (named) Refund(context.Context, RefundRequest) (*store.Order, error) { return nil, nil }

func TestRegistry(t *testing.T) {
	var none *Registry
	if _, err := none.Get(Wallet); !errors.Is(err, ErrDisabled) {
		t.Fatalf("nil registry: %v", err)
	}
	r := NewRegistry(named(PayPal), NewWallet(&fakeLedger{}), named(Stripe))
	if got := r.Names(); len(got) != 3 || got[0] != Wallet || got[1] != PayPal || got[2] != Stripe {
		t.Fatalf("names %v: the wallet first, then by name", got)
	}
	if !r.Enabled(Stripe) || r.Enabled("bitcoin") {
		t.Fatal("enabled")
	}
}

// The wallet provider: a short wallet is ErrDeclined; refunds go to the ledger.
func TestWalletProvider(t *testing.T) {
	ctx := context.Background()
	l := &fakeLedger{err: store.ErrInsufficientFunds}
	w := NewWallet(l)
	o := &store.Order{ID: "o1", AppID: "a1", Total: 500}
	if _, err := w.Confirm(ctx, ConfirmRequest{Order: o, Payer: Payer{UserID: "u1"}}); !errors.Is(err, ErrDeclined) {
		t.Fatalf("short wallet: %v", err)
	}
	l.err = nil
	res, err := w.Confirm(ctx, ConfirmRequest{Order: o, Payer: Payer{UserID: "u1"}})
	if err != nil || res.Order.Status != store.OrderPaid || res.Ref != "t1" || l.paid != 1 {
		t.Fatalf("confirm %+v %v", res, err)
	}
	if _, err := w.Refund(ctx, RefundRequest{Order: o, Reason: "x"}); err != nil || l.refunded != 1 {
		t.Fatalf("full refund: %v", err)
	}
}
