package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// WalletTopup is money a member adds to their wallet from outside, by card
// or PayPal (issue 24). The amount is one the operator allows
// (WALLET_TOPUP_AMOUNTS), chosen on the server from the member's pick; the
// wallet is credited only when the provider says the money arrived (a
// signed webhook, or the server's own read of the payment), once however
// often and however concurrently that is reported.
type WalletTopup struct {
	bun.BaseModel `bun:"table:wallet_topups"`

	ID            string     `bun:",pk" json:"id"`
	AppID         string     `bun:",notnull" json:"appId"`
	UserID        string     `bun:",notnull" json:"-"`
	Amount        int64      `bun:",notnull" json:"amount"`
	Currency      string     `bun:",notnull,default:'USD'" json:"currency"`
	Status        string     `bun:",notnull,default:'PENDING'" json:"status"`
	PaymentMethod string     `bun:",notnull,default:''" json:"paymentMethod"`
	PaymentRef    string     `bun:",notnull,default:''" json:"-"`
	CreatedAt     time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	PaidAt        *time.Time `json:"paidAt"`
}

const (
	TopupPending = "PENDING"
	TopupPaid    = "PAID"
	// TopupExpired: left unpaid past DefaultTopupExpiry. A payment that
	// lands after is given back (strayTopupPayment).
	TopupExpired = "EXPIRED"
)

// DefaultTopupExpiry is how long a top-up waits for its payment.
const DefaultTopupExpiry = 24 * time.Hour

// ErrTopupClosed: the top-up is not waiting for payment.
var ErrTopupClosed = errors.New("top-up is not pending")

// TopupTransferRef is the ledger reference of a top-up's credit: the unique
// (app, reference) of wallet_transfers is the last line that keeps one
// top-up from crediting twice.
func TopupTransferRef(topupID string) string { return "topup:" + topupID }

// CreateTopup records a PENDING top-up of amount (already checked against
// the amounts the operator allows) to be paid by method.
func (s *Storage) CreateTopup(ctx context.Context, appID, userID string, amount int64, method string) (*WalletTopup, error) {
	return s.CreateTopupLimited(ctx, appID, userID, amount, method, 0)
}

// ErrTooManyPendingTopups: the member already has maxPending top-ups
// waiting for their payment (in any app: each one is a payment started on
// the platform's Stripe account, whose rate limit every app shares).
var ErrTooManyPendingTopups = errors.New("too many top-ups waiting for payment")

// CreateTopupLimited is CreateTopup refusing a member who already has
// maxPending top-ups waiting for payment (0: no limit). Concurrent calls of
// one member are serialised on their user row, so 50 at once start at most
// maxPending.
func (s *Storage) CreateTopupLimited(ctx context.Context, appID, userID string, amount int64, method string, maxPending int) (*WalletTopup, error) {
	if amount <= 0 {
		return nil, invalid("Amount must be above 0")
	}
	now := time.Now().UTC()
	t := &WalletTopup{ID: NewID(), AppID: appID, UserID: userID, Amount: amount, Currency: WalletCurrency,
		Status: TopupPending, PaymentMethod: method, CreatedAt: now}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if maxPending > 0 {
			if tx.Dialect().Name() == dialect.PG {
				if _, err := tx.NewRaw("SELECT id FROM users WHERE id = ? FOR UPDATE", userID).Exec(ctx); err != nil {
					return fmt.Errorf("lock member for top-up: %w", err)
				}
			}
			pending, err := tx.NewSelect().Model((*WalletTopup)(nil)).
				Where("user_id = ? AND status = ? AND created_at > ?", userID, TopupPending, now.Add(-DefaultTopupExpiry)).Count(ctx)
			if err != nil {
				return fmt.Errorf("count pending top-ups: %w", err)
			}
			if int(pending) >= maxPending {
				return ErrTooManyPendingTopups
			}
		}
		if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
			return fmt.Errorf("create top-up: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// TopupByID loads one top-up.
func (s *Storage) TopupByID(ctx context.Context, id string) (*WalletTopup, error) {
	t := new(WalletTopup)
	if err := selectOne(ctx, s.db.NewSelect().Model(t).Where("id = ?", id), "top-up"); err != nil {
		return nil, err
	}
	return t, nil
}

// TopupOf loads the member's own top-up in the app (someone else's is
// ErrNotFound).
func (s *Storage) TopupOf(ctx context.Context, appID, userID, id string) (*WalletTopup, error) {
	t := new(WalletTopup)
	if err := selectOne(ctx, s.db.NewSelect().Model(t).Where("id = ? AND app_id = ? AND user_id = ?", id, appID, userID), "top-up"); err != nil {
		return nil, err
	}
	return t, nil
}

// AttachTopupPayment remembers the provider payment (PaymentIntent, PayPal
// order) started for a PENDING top-up; the first ref sticks.
func (s *Storage) AttachTopupPayment(ctx context.Context, id, method, ref string) error {
	res, err := s.db.NewUpdate().Model((*WalletTopup)(nil)).Set("payment_method = ?", method).Set("payment_ref = ?", ref).
		Where("id = ? AND status = ? AND (payment_ref = '' OR payment_ref = ?)", id, TopupPending, ref).Exec(ctx)
	if err != nil {
		return fmt.Errorf("attach top-up payment: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t, err := s.TopupByID(ctx, id)
		if err != nil {
			return err
		}
		if t.Status != TopupPending {
			return ErrTopupClosed
		}
		if t.PaymentRef != ref {
			return ErrIllegalTransition
		}
	}
	return nil
}

// ApplyTopupPaymentEvent records a provider's event ev about a top-up's
// payment and, only the first time its id is seen, credits the member's
// wallet and marks the top-up PAID when the payment is the top-up's own
// (ref), for exactly its amount and currency, all in one transaction with
// the top-up row locked. A repeated delivery, or another report of the same
// payment (the browser's confirm after the webhook), changes nothing: the
// second finds the top-up PAID (ALREADY_APPLIED), and the ledger's unique
// reference would refuse a second credit anyway.
func (s *Storage) ApplyTopupPaymentEvent(ctx context.Context, ev *PaymentEvent, topupID, method, ref string, amount int64, currency string) (*WalletTopup, bool, error) {
	if ev.ID == "" {
		ev.ID = NewID()
	}
	t := new(WalletTopup)
	fresh := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if fresh, err = recordPaymentEvent(ctx, tx, ev, true); err != nil {
			return err
		}
		q := tx.NewSelect().Model(t).Where("id = ?", topupID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "top-up"); err != nil {
			return err
		}
		if !fresh {
			return nil
		}
		switch {
		case t.Status == TopupPaid && t.PaymentRef == ref && t.PaymentMethod == method:
			ev.Outcome = OutcomeAlready
		case t.Status != TopupPending || t.PaymentMethod != method || (t.PaymentRef != "" && t.PaymentRef != ref):
			ev.Outcome = OutcomeNotPayable
			if err := strayTopupPayment(ctx, tx, t, method, ref, amount, currency); err != nil {
				return err
			}
		case amount != t.Amount || !strings.EqualFold(currency, t.Currency):
			ev.Outcome = OutcomeMismatch
			if err := strayTopupPayment(ctx, tx, t, method, ref, amount, currency); err != nil {
				return err
			}
		default:
			if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: t.AppID, Reference: TopupTransferRef(t.ID), Kind: TransferCredit,
				From: OutsideMoney, To: Member(t.UserID), Amount: t.Amount, Memo: "Added funds (" + method + ")"}); err != nil {
				return err
			}
			now := time.Now().UTC()
			res, err := tx.NewUpdate().Model((*WalletTopup)(nil)).Set("status = ?", TopupPaid).Set("paid_at = ?", now).
				Set("payment_ref = ?", ref).Where("id = ? AND status = ?", t.ID, TopupPending).Exec(ctx)
			if err != nil {
				return fmt.Errorf("mark top-up paid: %w", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return ErrTopupClosed
			}
			t.Status, t.PaidAt, t.PaymentRef = TopupPaid, &now, ref
			ev.Outcome = OutcomePaid
		}
		if _, err := tx.NewUpdate().Model((*PaymentEvent)(nil)).Set("outcome = ?", ev.Outcome).Set("app_id = ?", t.AppID).
			Where("id = ?", ev.ID).Exec(ctx); err != nil {
			return fmt.Errorf("record payment event outcome: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return t, fresh, nil
}

// RecordTopupFailure keeps a provider's refusal of a top-up's payment (for
// support); it changes nothing else.
func (s *Storage) RecordTopupFailure(ctx context.Context, ev *PaymentEvent) error {
	ev.Outcome = OutcomeFailed
	_, _, err := s.ApplyPaymentEvent(ctx, ev, nil)
	return err
}

// TopupFailures counts the refusals recorded for a top-up's provider
// payment ref (a capture PayPal refused moves its next try to a fresh
// idempotency key, as PayPal replays a refusal to its key forever).
func (s *Storage) TopupFailures(ctx context.Context, provider, ref, typ string) (int, error) {
	n, err := s.db.NewSelect().Model((*PaymentEvent)(nil)).
		Where("provider = ? AND payment_ref = ? AND type = ? AND order_id IS NULL", provider, ref, typ).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count top-up failures: %w", err)
	}
	return int(n), nil
}

// strayTopupPayment writes, in the transaction that found it, the job that
// gives back a payment a top-up cannot take (it expired first, was paid
// another way, or the amount is not its own): the same refund_stray_payment
// job a stray order payment gets, so it is durable and retried. The member
// is told. A payment reported twice is refunded and announced once.
func strayTopupPayment(ctx context.Context, tx bun.Tx, t *WalletTopup, method, ref string, amount int64, currency string) error {
	why := "was already paid"
	if t.Status == TopupExpired {
		why = "had expired"
	}
	return refundStray(ctx, tx, StrayPayment{Provider: method, Ref: ref, TopupID: t.ID, Amount: amount, Currency: currency},
		Notice{AppID: t.AppID, Kind: KindSystem, RecipientIDs: []string{t.UserID},
			Text: fmt.Sprintf("A payment of %s to add funds arrived after the top-up %s. It is being refunded to you in full; your wallet is unchanged.",
				Money(amount, strings.ToUpper(currency)), why),
			Link: "/transactions"})
}

// ExpirePendingTopups marks top-ups still PENDING olderThan after they were
// made EXPIRED, each by a conditional update (a payment applied at the same
// moment wins or loses whole), and asks for an open card payment to be
// cancelled (the cancel_payment job orders use). A payment that lands
// after is refunded. It answers how many expired.
func (s *Storage) ExpirePendingTopups(ctx context.Context, olderThan time.Duration) (int, error) {
	if olderThan <= 0 {
		olderThan = DefaultTopupExpiry
	}
	cutoff := time.Now().UTC().Add(-olderThan)
	var stale []WalletTopup
	if err := s.db.NewSelect().Model(&stale).Where("status = ? AND created_at < ?", TopupPending, cutoff).
		Order("created_at ASC").Limit(500).Scan(ctx); err != nil {
		return 0, fmt.Errorf("find expired top-ups: %w", err)
	}
	n := 0
	for _, t := range stale {
		err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.NewUpdate().Model((*WalletTopup)(nil)).Set("status = ?", TopupExpired).
				Where("id = ? AND status = ?", t.ID, TopupPending).Exec(ctx)
			if err != nil {
				return fmt.Errorf("expire top-up %s: %w", t.ID, err)
			}
			if k, _ := res.RowsAffected(); k == 0 {
				return nil // paid meanwhile
			}
			n++
			return cancelOpenPayment(ctx, tx, CancelPaymentArgs{Provider: t.PaymentMethod, Ref: t.PaymentRef, TopupID: t.ID})
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
