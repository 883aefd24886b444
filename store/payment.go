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

// PaymentEvent is one thing a payment provider told us about an order: a
// webhook (its event id), or a refund made through the API (its refund id).
// (provider, event_id) is unique, so the same event is applied once however
// often and however concurrently it is delivered.
type PaymentEvent struct {
	bun.BaseModel `bun:"table:payment_events"`

	ID         string    `bun:",pk" json:"id"`
	Provider   string    `bun:",notnull" json:"provider"`
	EventID    string    `bun:",notnull" json:"eventId"`
	Type       string    `bun:",notnull" json:"type"`
	AppID      *string   `json:"-"`
	OrderID    *string   `json:"orderId"`
	PaymentRef string    `bun:",notnull,default:''" json:"paymentRef"`
	Amount     int64     `bun:",notnull,default:0" json:"amount"`
	Currency   string    `bun:",notnull,default:''" json:"currency"`
	Outcome    string    `bun:",notnull,default:''" json:"outcome"`
	Message    string    `bun:",notnull,default:''" json:"message"`
	CreatedAt  time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// Outcomes of a payment event, kept on its row so support can tell what a
// delivery did.
const (
	OutcomePaid          = "PAID"
	OutcomeRefunded      = "REFUNDED"
	OutcomeFailed        = "FAILED"
	OutcomeAlready       = "ALREADY_APPLIED"
	OutcomeMismatch      = "AMOUNT_MISMATCH"
	OutcomeNotPayable    = "NOT_PAYABLE"
	OutcomeNotRefundable = "NOT_REFUNDABLE"
	OutcomeIgnored       = "IGNORED"
)

// AttachPayment remembers the provider payment (PaymentIntent, PayPal
// order) started for a PENDING order, so a later confirm, capture or webhook
// that names only the provider's id finds the order. Only a PENDING order
// takes one: ErrIllegalTransition otherwise. A payment started before by
// another method (a card form, then PayPal) is cancelled in the same
// transaction: the order keeps one payment, and the other must not take
// money. The swap is conditional on the payment it replaces, so two
// concurrent starts never leave one uncancelled.
func (s *Storage) AttachPayment(ctx context.Context, orderID, method, ref string) error {
	for range 10 {
		done := false
		err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			o := new(Order)
			if err := selectOne(ctx, tx.NewSelect().Model(o).Column("id", "status", "payment_method", "payment_ref").
				Where("id = ?", orderID), "order"); err != nil {
				return err
			}
			if o.Status != OrderPending {
				return ErrIllegalTransition
			}
			res, err := tx.NewUpdate().Model((*Order)(nil)).
				Set("payment_method = ?", method).Set("payment_ref = ?", ref).Set("updated_at = ?", time.Now().UTC()).
				Where("id = ? AND status = ? AND payment_method = ? AND payment_ref = ?", orderID, OrderPending, o.PaymentMethod, o.PaymentRef).
				Exec(ctx)
			if err != nil {
				return fmt.Errorf("attach payment to order: %w", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return nil // moved meanwhile: look again
			}
			done = true
			if o.PaymentRef == ref && o.PaymentMethod == method {
				return nil
			}
			return cancelOpenPayment(ctx, tx, CancelPaymentArgs{Provider: o.PaymentMethod, Ref: o.PaymentRef, OrderID: o.ID})
		})
		if err != nil || done {
			return err
		}
	}
	return ErrIllegalTransition
}

// OrderInStore loads an order of storeID; with userID set, only that
// member's (someone else's order is ErrNotFound, as if it did not exist).
func (s *Storage) OrderInStore(ctx context.Context, storeID, userID, orderID string) (*Order, error) {
	o := new(Order)
	q := s.db.NewSelect().Model(o).Where("id = ? AND store_id = ?", orderID, storeID)
	if userID != "" {
		q = q.Where("user_id = ?", userID)
	}
	if err := selectOne(ctx, q, "order"); err != nil {
		return nil, err
	}
	return o, nil
}

// OrderByPaymentRef finds the order a provider payment belongs to, in
// storeID (and of userID when set; of any method when method is empty). An
// empty ref finds nothing.
func (s *Storage) OrderByPaymentRef(ctx context.Context, storeID, userID, method, ref string) (*Order, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, ErrNotFound
	}
	o := new(Order)
	q := s.db.NewSelect().Model(o).Where("payment_ref = ? AND store_id = ?", ref, storeID)
	if method != "" {
		q = q.Where("payment_method = ?", method)
	}
	if userID != "" {
		q = q.Where("user_id = ?", userID)
	}
	if err := selectOne(ctx, q.Order("created_at DESC"), "order"); err != nil {
		return nil, err
	}
	return o, nil
}

// OrderByID loads any order by id, for webhooks (which are not scoped to a
// viewer: the provider's signature is the authority).
func (s *Storage) OrderByID(ctx context.Context, orderID string) (*Order, error) {
	o := new(Order)
	if err := selectOne(ctx, s.db.NewSelect().Model(o).Where("id = ?", orderID), "order"); err != nil {
		return nil, err
	}
	return o, nil
}

// PaymentApply changes the order an event is about, inside the event's
// transaction, and answers the outcome to record.
type PaymentApply func(ctx context.Context, tx bun.Tx, o *Order) (string, error)

// ApplyPaymentEvent records ev and, only if this is the first time the
// provider's event id is seen, runs apply on ev's order in the same
// transaction (the order row locked). It answers the order as it now
// stands and whether this delivery was the first. If apply fails nothing is
// recorded, so the provider's retry tries again.
func (s *Storage) ApplyPaymentEvent(ctx context.Context, ev *PaymentEvent, apply PaymentApply) (*Order, bool, error) {
	if ev.ID == "" {
		ev.ID = NewID()
	}
	var order *Order
	fresh := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if fresh, err = recordPaymentEvent(ctx, tx, ev, true); err != nil {
			return err
		}
		if ev.OrderID == nil {
			return nil
		}
		o := new(Order)
		q := tx.NewSelect().Model(o).Where("id = ?", *ev.OrderID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "order"); err != nil {
			return err
		}
		order = o
		if !fresh || apply == nil {
			return nil
		}
		outcome, err := apply(ctx, tx, o)
		if err != nil {
			return err
		}
		ev.Outcome = outcome
		if _, err := tx.NewUpdate().Model((*PaymentEvent)(nil)).Set("outcome = ?", outcome).Set("message = ?", ev.Message).
			Where("id = ?", ev.ID).Exec(ctx); err != nil {
			return fmt.Errorf("record payment event outcome: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return order, fresh, nil
}

// PayOrderTx marks o PAID inside an event's transaction when the provider
// says amount of currency arrived for ref, o's own payment (the reference
// Start attached). An order already paid by ref is ALREADY_APPLIED. Money
// the order cannot take (it was cancelled or expired, paid another way, or
// the payment is another than its own, or of another amount, or the
// membership plan it buys went off sale, which cancels it) is NOT_PAYABLE
// or AMOUNT_MISMATCH, and is given back: a refund job is written in this
// transaction and the buyer is told (strayPayment).
func (s *Storage) PayOrderTx(ctx context.Context, tx bun.Tx, o *Order, method, ref string, amount int64, currency string) (string, error) {
	if o.Status != OrderPending {
		if o.PaidAt != nil && o.PaymentRef == ref && o.PaymentMethod == method {
			return OutcomeAlready, nil
		}
		return OutcomeNotPayable, strayPayment(ctx, tx, o, method, ref, amount, currency, "")
	}
	if o.PaymentMethod != method || o.PaymentRef != ref {
		return OutcomeNotPayable, strayPayment(ctx, tx, o, method, ref, amount, currency, "")
	}
	if amount != o.Total || !strings.EqualFold(currency, o.Currency) {
		return OutcomeMismatch, strayPayment(ctx, tx, o, method, ref, amount, currency, "")
	}
	if err := plansOnSale(ctx, tx, o.ID); errors.Is(err, ErrPlanOffSale) {
		// The plan went off sale while the buyer paid: the order can never
		// be fulfilled, so it is cancelled and the money given back.
		if err := s.transition(ctx, tx, o, OrderCancelled, TransitionOptions{From: OrderPending}); err != nil {
			return "", err
		}
		return OutcomeNotPayable, strayPayment(ctx, tx, o, method, ref, amount, currency, "buys a membership plan that is no longer on sale")
	} else if err != nil {
		return "", err
	}
	if err := s.MarkPaidTx(ctx, tx, o, method, ref); err != nil {
		return "", err
	}
	return OutcomePaid, nil
}

// JobRefundStrayPayment is the job (server/jobs) that gives back a payment
// its order, top-up or donation could not take.
const JobRefundStrayPayment = "refund_stray_payment"

// StrayPayment is the refund_stray_payment job's arguments.
type StrayPayment struct {
	Provider string `json:"provider"`
	Ref      string `json:"ref"`
	OrderID  string `json:"orderId"`
	// TopupID: the wallet top-up the payment was for (instead of an order).
	TopupID string `json:"topupId,omitempty"`
	// DonationID: the donation the payment was for.
	DonationID string `json:"donationId,omitempty"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
}

// refundStray writes, in the transaction that found it, the job that gives
// back a payment nothing can take, and tells the member (n) in the same
// transaction. It is the one way an order, a top-up and a donation refuse
// money. A payment reported twice (the browser's confirm and the webhook)
// is refunded and announced once: the caller records the payment's event
// with a refusing outcome after this runs.
func refundStray(ctx context.Context, tx bun.Tx, p StrayPayment, n Notice) error {
	if p.Amount <= 0 || p.Ref == "" {
		return nil
	}
	seen, err := tx.NewSelect().Model((*PaymentEvent)(nil)).
		Where("provider = ? AND payment_ref = ? AND outcome IN (?)", p.Provider, p.Ref, bun.List([]string{OutcomeNotPayable, OutcomeMismatch})).Exists(ctx)
	if err != nil {
		return fmt.Errorf("check stray payment: %w", err)
	}
	if seen {
		return nil
	}
	p.Currency = strings.ToUpper(p.Currency)
	if err := enqueue(ctx, tx, JobRefundStrayPayment, p); err != nil {
		return err
	}
	_, err = Notify(ctx, tx, n)
	return err
}

// strayPayment refunds a payment o cannot take and tells the buyer why
// (why, or what o's status says).
func strayPayment(ctx context.Context, tx bun.Tx, o *Order, method, ref string, amount int64, currency, why string) error {
	if why == "" {
		why = "was already paid"
		switch {
		case o.Status == OrderCancelled:
			why = "was cancelled"
		case o.Status == OrderPending:
			why = "could not take it"
		}
		why = "arrived after the order " + why
	}
	return refundStray(ctx, tx, StrayPayment{Provider: method, Ref: ref, OrderID: o.ID, Amount: amount, Currency: currency},
		Notice{AppID: o.AppID, Kind: KindOrderStatus, RecipientIDs: []string{o.UserID},
			Text: "A payment for order " + o.OrderNumber + " " + why + ". It is being refunded to you in full.",
			Link: "/orders/" + o.ID})
}

// PaymentEvents lists what providers reported about an order, oldest first
// (refund amounts for the order page, and tests).
func (s *Storage) PaymentEvents(ctx context.Context, orderID string) ([]PaymentEvent, error) {
	var out []PaymentEvent
	if err := s.db.NewSelect().Model(&out).Where("order_id = ?", orderID).Order("created_at ASC", "id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load payment events: %w", err)
	}
	return out, nil
}

// OrderByProviderRef finds the order whose payment ref is ref, in any app:
// for webhooks, whose only authority is the provider's signature.
func (s *Storage) OrderByProviderRef(ctx context.Context, method, ref string) (*Order, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, ErrNotFound
	}
	o := new(Order)
	q := s.db.NewSelect().Model(o).Where("payment_ref = ? AND payment_method = ?", ref, method).Order("created_at DESC")
	if err := selectOne(ctx, q, "order"); err != nil {
		return nil, err
	}
	return o, nil
}

// recordPaymentEvent inserts a provider's event once: it reports whether this
// delivery is the first with its (provider, event_id). The unique key
// decides, so a concurrent duplicate waits for the first to commit, then
// inserts nothing. lockSQLite takes SQLite's write lock first, so two
// deliveries queue instead of failing on a lock upgrade (callers that lock
// another table first pass false).
func recordPaymentEvent(ctx context.Context, tx bun.Tx, ev *PaymentEvent, lockSQLite bool) (bool, error) {
	if lockSQLite && tx.Dialect().Name() == dialect.SQLite {
		if _, err := tx.ExecContext(ctx, "UPDATE payment_events SET outcome = outcome WHERE 0"); err != nil {
			return false, fmt.Errorf("lock payment events: %w", err)
		}
	}
	res, err := tx.NewInsert().Model(ev).On("CONFLICT (provider, event_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("record payment event %s: %w", ev.EventID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
