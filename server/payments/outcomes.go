package payments

import (
	"errors"
	"fmt"
	"strings"

	"marquee/store"
)

// Errors of the card and PayPal providers, beside the ones in payments.go.
var (
	// ErrInvalidWebhook: a webhook whose signature does not verify, or is
	// too old; it changes nothing and answers 400.
	ErrInvalidWebhook = errors.New("invalid webhook")
	// ErrNotThisOrder: the provider's payment belongs to another order (or
	// another amount) than the one named; nothing is paid.
	ErrNotThisOrder = errors.New("payment does not belong to this order")
	// ErrNoApprovalURL: PayPal made the order but sent no link to approve it.
	ErrNoApprovalURL = errors.New("PayPal order created but approval URL is missing")
	// ErrProvider: the provider could not be reached or refused the call for
	// a reason that is not the buyer's (answered 502).
	ErrProvider = errors.New("payment provider error")
	// ErrStoredFailure: the provider answered a call with a failure (a 500
	// included) that it keeps for the call's idempotency key and replays
	// to every retry with that key; a retry needs a fresh key.
	ErrStoredFailure = errors.New("provider failure stored for this idempotency key")
)

// DeclinedError is ErrDeclined with the provider's own reason ("Your card
// was declined."), which the buyer needs to try another card.
type DeclinedError struct{ Reason string }

func (e *DeclinedError) Error() string { return "payment declined: " + e.Reason }
func (e *DeclinedError) Unwrap() error { return ErrDeclined }

// Message is what the buyer reads: SPEC.md's 'Payment failed. Please try
// again.' followed by the provider's reason when there is one.
func (e *DeclinedError) Message() string {
	r := strings.TrimSpace(e.Reason)
	if r == "" {
		return "Payment failed. Please try again."
	}
	return "Payment failed. Please try again. " + r
}

// Declined wraps a provider's refusal.
func Declined(reason string) error { return &DeclinedError{Reason: reason} }

// providerError marks err as the provider's failure.
func ProviderError(what string, err error) error {
	return fmt.Errorf("%s: %w: %w", what, ErrProvider, err)
}

// RefundAmount checks a refund of an order paid by method and answers how
// much to give back: req.Amount, or all that is not refunded yet when it is
// 0. The store checks again with the order locked (BeginRefund).
func RefundAmount(req RefundRequest, method string) (int64, error) {
	o := req.Order
	if !store.CanTransition(o.Status, store.OrderRefunded) {
		return 0, store.ErrIllegalTransition
	}
	left := o.Total - o.RefundedAmount
	amount := req.Amount
	if amount == 0 {
		amount = left
	}
	if amount < 1 || amount > left {
		return 0, &store.ErrInvalid{Msg: "Refund amount must be between 1 and the order total"}
	}
	if o.PaymentMethod != method || o.PaymentRef == "" {
		return 0, ErrNotThisOrder
	}
	return amount, nil
}
