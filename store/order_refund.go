package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Refunds. An order's refunded_amount is the money given back so far. A
// refund that brings it to the total moves the order to REFUNDED, which
// takes back what the order granted (orderEffects); a smaller one leaves the
// status and the grants as they are (SPEC.md lists no partially refunded
// status; the order shows refundedAmount instead). Providers report
// partial refunds too (Stripe's charge.refunded), so every path adds up here.

// Outcomes of refund events beside the ones in payment.go.
const (
	OutcomePartiallyRefunded = "PARTIALLY_REFUNDED"
	OutcomeRefundPending     = "REFUND_PENDING"
	OutcomeRefundFailed      = "REFUND_FAILED"
)

func errRefundAmount() error { return invalid("Refund amount must be between 1 and the order total") }

// lockOrder loads the order row for update: concurrent refunds, payments and
// webhooks of one order queue on it (SQLite takes its write lock first).
func lockOrder(ctx context.Context, tx bun.Tx, orderID string) (*Order, error) {
	if tx.Dialect().Name() == dialect.SQLite {
		if _, err := tx.ExecContext(ctx, "UPDATE orders SET status = status WHERE 0"); err != nil {
			return nil, fmt.Errorf("lock order: %w", err)
		}
	}
	o := new(Order)
	q := tx.NewSelect().Model(o).Where("id = ?", orderID)
	if tx.Dialect().Name() == dialect.PG {
		q = q.For("UPDATE")
	}
	if err := selectOne(ctx, q, "order"); err != nil {
		return nil, err
	}
	return o, nil
}

// refundable answers how much of amount (0: all that is left) may be given
// back of o, or why not.
func refundable(o *Order, amount int64) (int64, error) {
	if !CanTransition(o.Status, OrderRefunded) {
		return 0, ErrIllegalTransition
	}
	left := o.Total - o.RefundedAmount
	if amount == 0 {
		amount = left
	}
	if amount < 1 || amount > left {
		return 0, errRefundAmount()
	}
	return amount, nil
}

// addRefunded records that the order's refunded money is now total (never
// less than before, never above the order's total) and makes the order
// REFUNDED when all of it is back. It answers the event's outcome.
func (s *Storage) addRefunded(ctx context.Context, tx bun.Tx, o *Order, refunded int64, reason string) (string, error) {
	if refunded > o.Total {
		refunded = o.Total
	}
	if refunded <= o.RefundedAmount && o.Status == OrderRefunded {
		return OutcomeAlready, nil
	}
	if refunded < o.RefundedAmount {
		refunded = o.RefundedAmount
	}
	before := o.RefundedAmount
	if refunded != o.RefundedAmount {
		q := tx.NewUpdate().Model((*Order)(nil)).Set("refunded_amount = ?", refunded).Set("updated_at = ?", time.Now().UTC()).
			Where("id = ?", o.ID)
		if reason != "" {
			q = q.Set("refund_reason = ?", reason)
			o.RefundReason = reason
		}
		if _, err := q.Exec(ctx); err != nil {
			return "", fmt.Errorf("record refunded amount: %w", err)
		}
		o.RefundedAmount = refunded
	}
	// The creator's ledger gives back in proportion (payout.go).
	if err := s.bookRefundTx(ctx, tx, o, o.RefundedAmount); err != nil {
		return "", err
	}
	if o.RefundedAmount < o.Total || o.Total == 0 {
		if o.RefundedAmount == 0 {
			return OutcomeAlready, nil
		}
		if o.RefundedAmount > before {
			if err := partialRefundMessage(ctx, tx, o, o.RefundedAmount-before); err != nil {
				return "", err
			}
		}
		return OutcomePartiallyRefunded, nil
	}
	if o.Status == OrderRefunded {
		return OutcomeAlready, nil
	}
	if !CanTransition(o.Status, OrderRefunded) {
		return OutcomeNotRefundable, nil
	}
	if reason == "" {
		reason = o.RefundReason
	}
	if err := s.transition(ctx, tx, o, OrderRefunded, TransitionOptions{RefundReason: reason}); err != nil {
		return "", err
	}
	return OutcomeRefunded, nil
}

// PendingRefund is money set aside for a refund being asked of a provider.
type PendingRefund struct {
	// ID names the refund's payment event; the provider's idempotency key
	// is made from it, so every refund has its own and a retry of one
	// refund never becomes a second.
	ID      string
	OrderID string
	AppID   string
	Amount  int64
	Reason  string
	// Method and Ref are the order's payment at the provider.
	Method string
	Ref    string
}

// BeginRefund sets aside amount (0: all that is left) of an order paid by
// method for a refund about to be asked of the provider. With the order row
// locked it checks the amount fits in what is not yet refunded, adds it to
// refunded_amount and records a REFUND_PENDING event. Concurrent refunds of
// one order queue on the lock, so together they never pass the total;
// FinishRefund records the provider's answer (a failure gives the amount
// back).
func (s *Storage) BeginRefund(ctx context.Context, appID, orderID, method string, amount int64, reason string) (*PendingRefund, error) {
	var pr *PendingRefund
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		o, err := lockOrder(ctx, tx, orderID)
		if err != nil {
			return err
		}
		if o.AppID != appID {
			return ErrNotFound
		}
		if o.PaymentMethod != method || o.PaymentRef == "" {
			return ErrIllegalTransition
		}
		amount, err := refundable(o, amount)
		if err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*Order)(nil)).Set("refunded_amount = refunded_amount + ?", amount).
			Where("id = ?", o.ID).Exec(ctx); err != nil {
			return fmt.Errorf("set refund aside: %w", err)
		}
		pr = &PendingRefund{ID: NewID(), OrderID: o.ID, AppID: o.AppID, Amount: amount, Reason: reason, Method: method, Ref: o.PaymentRef}
		ev := &PaymentEvent{ID: pr.ID, Provider: method, EventID: "refund-request:" + pr.ID, Type: "refund", AppID: &o.AppID,
			OrderID: &o.ID, PaymentRef: o.PaymentRef, Amount: amount, Currency: o.Currency, Outcome: OutcomeRefundPending,
			Message: reason, CreatedAt: time.Now().UTC()}
		if _, err := tx.NewInsert().Model(ev).Exec(ctx); err != nil {
			return fmt.Errorf("record refund request: %w", err)
		}
		return nil
	})
	return pr, err
}

// FinishRefund records the provider's answer to a pending refund: refundID
// when the money went back (the order becomes REFUNDED if that was the
// rest of it), or failure, which returns the set-aside amount. It answers
// the order as it now stands.
func (s *Storage) FinishRefund(ctx context.Context, pr *PendingRefund, refundID string, failure error) (*Order, error) {
	var order *Order
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		o, err := lockOrder(ctx, tx, pr.OrderID)
		if err != nil {
			return err
		}
		order = o
		ev := tx.NewUpdate().Model((*PaymentEvent)(nil)).Where("id = ? AND outcome = ?", pr.ID, OutcomeRefundPending)
		if failure != nil {
			if _, err := tx.NewUpdate().Model((*Order)(nil)).Set("refunded_amount = refunded_amount - ?", pr.Amount).
				Where("id = ?", o.ID).Exec(ctx); err != nil {
				return fmt.Errorf("give back refund reservation: %w", err)
			}
			o.RefundedAmount -= pr.Amount
			msg := failure.Error()
			if len(msg) > 500 {
				msg = msg[:500]
			}
			_, err := ev.Set("outcome = ?", OutcomeRefundFailed).Set("message = ?", msg).Exec(ctx)
			return err
		}
		// The amount is counted already; a full refund now revokes.
		outcome, err := s.addRefunded(ctx, tx, o, o.RefundedAmount, pr.Reason)
		if err != nil {
			return err
		}
		if outcome == OutcomeAlready {
			outcome = OutcomePartiallyRefunded
			if o.RefundedAmount >= o.Total {
				outcome = OutcomeRefunded
			}
		}
		if pr.Reason != "" && o.RefundReason != pr.Reason {
			if _, err := tx.NewUpdate().Model((*Order)(nil)).Set("refund_reason = ?", pr.Reason).Where("id = ?", o.ID).Exec(ctx); err != nil {
				return fmt.Errorf("record refund reason: %w", err)
			}
			o.RefundReason = pr.Reason
		}
		_, err = ev.Set("outcome = ?", outcome).Set("event_id = ?", "refund:"+refundID).Exec(ctx)
		return err
	})
	return order, err
}

// RefundTotalTx records, inside a provider event's transaction, that the
// provider has given back refunded in all for o (Stripe's charge
// amount_refunded): a refund made in the provider's dashboard, or one of
// ours reported again. The amount only ever grows, so deliveries in any
// order and refunds set aside by BeginRefund count once.
func (s *Storage) RefundTotalTx(ctx context.Context, tx bun.Tx, o *Order, refunded int64, reason string) (string, error) {
	if o.Status != OrderRefunded && !CanTransition(o.Status, OrderRefunded) {
		return OutcomeNotRefundable, nil
	}
	// A smaller total than recorded is news already counted (or a refund
	// set aside and not finished yet): only the whole total moves on.
	if refunded <= o.RefundedAmount && refunded < o.Total {
		return OutcomeAlready, nil
	}
	return s.addRefunded(ctx, tx, o, refunded, reason)
}

// RefundOrder gives a paid order's whole remaining amount back (see
// RefundOrderAmount).
func (s *Storage) RefundOrder(ctx context.Context, appID, orderID, reason string) (*Order, error) {
	return s.RefundOrderAmount(ctx, appID, orderID, 0, reason)
}

// RefundOrderAmount gives amount (0: all that is left) of a paid order back.
// For a wallet order the money goes from the app's account to the buyer's
// wallet in the same transaction; other methods' refunds are made at their
// provider (BeginRefund, FinishRefund) and a call here only records one
// (the whole rest of the order) without moving money.
func (s *Storage) RefundOrderAmount(ctx context.Context, appID, orderID string, amount int64, reason string) (*Order, error) {
	var order *Order
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		o, err := lockOrder(ctx, tx, orderID)
		if err != nil {
			return err
		}
		if o.AppID != appID {
			return ErrNotFound
		}
		if o.Total == 0 {
			if !CanTransition(o.Status, OrderRefunded) {
				return ErrIllegalTransition
			}
			order = o
			return s.transition(ctx, tx, o, OrderRefunded, TransitionOptions{RefundReason: reason})
		}
		amount, err := refundable(o, amount)
		if err != nil {
			return err
		}
		if o.PaymentMethod == WalletMethod && o.PaymentRef != "free" {
			// The fee comes back to the creator first, so the creator's
			// account holds all that the buyer gets back.
			if err := s.bookRefundTx(ctx, tx, o, o.RefundedAmount+amount); err != nil {
				return err
			}
			ref := orderRefundRef(o.ID)
			if amount != o.Total {
				// Each partial refund is its own transfer: it is
				// named by the refunded total it reaches.
				ref += ":" + strconv.FormatInt(o.RefundedAmount+amount, 10)
			}
			if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: appID, Reference: ref, Kind: TransferRefund,
				From: AppRevenue, To: Member(o.UserID), Amount: amount, OrderID: &o.ID, Memo: "Refund of order " + o.OrderNumber}); err != nil {
				return err
			}
		}
		order = o
		_, err = s.addRefunded(ctx, tx, o, o.RefundedAmount+amount, reason)
		return err
	})
	return order, err
}
