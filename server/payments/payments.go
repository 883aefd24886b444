// Package payments is the one interface every way of paying for an order
// goes through (DESIGN.md decision 4). A Provider starts a payment (a card
// PaymentIntent, a PayPal order, nothing for the wallet), confirms it, and
// refunds it. Whatever the provider, an order becomes PAID only through
// Orders.MarkOrderPaid (or the wallet's own transaction), with the amount the
// provider says arrived; the client's numbers are never read. Providers are
// registered by name: "musepay" (the member wallet, the default), "stripe"
// and "paypal".
package payments

import (
	"context"
	"errors"
	"net/http"
	"sort"

	"marquee/store"
)

// Method names of SPEC.md section 9.
const (
	Wallet = store.WalletMethod // "musepay"
	Stripe = "stripe"
	PayPal = "paypal"
)

// Errors a provider answers; the server maps them to statuses.
var (
	// ErrDeclined: the provider refused the payment (card declined, not
	// enough in the wallet). The order stays PENDING and may be paid again.
	ErrDeclined = errors.New("payment declined")
	// ErrNotSupported: the provider has no such operation (a webhook for
	// the wallet).
	ErrNotSupported = errors.New("not supported by this payment method")
	// ErrDisabled: the method is not configured.
	ErrDisabled = errors.New("payment method not enabled")
)

// Orders is what providers need from the order machinery (store.Storage
// implements it).
type Orders interface {
	// MarkOrderPaid moves a PENDING order to PAID when amount is its
	// total; a repeated report with the same ref changes nothing.
	MarkOrderPaid(ctx context.Context, orderID, method, ref string, amount int64) (*store.Order, error)
	// RefundOrderAmount gives amount (0: all that is left) of a paid
	// order back into the buyer's wallet in one transaction; reaching the
	// total makes the order REFUNDED.
	RefundOrderAmount(ctx context.Context, appID, orderID string, amount int64, reason string) (*store.Order, error)
}

// Payer is the signed-in member paying: the server knows who pays whom, so
// nothing about it is taken from the request body.
type Payer struct {
	UserID string
	Email  string
}

// StartRequest begins paying order.
type StartRequest struct {
	Order *store.Order
	Payer Payer
	// ReturnURL and CancelURL are where a redirecting provider (PayPal)
	// sends the buyer back: /apps/{app}/payment-success and
	// /apps/{app}/cancel_order.
	ReturnURL string
	CancelURL string
	Metadata  map[string]string
}

// Started is what the browser needs to go on: a client secret for a card
// form, an approval URL for a redirect. The wallet has nothing to start.
type Started struct {
	// Ref is the provider's id of the payment (PaymentIntent id, PayPal
	// order id); it is kept as the order's payment reference.
	Ref          string `json:"ref"`
	ClientSecret string `json:"clientSecret,omitempty"`
	ApprovalURL  string `json:"approvalUrl,omitempty"`
	Status       string `json:"status"`
}

// ConfirmRequest asks the provider whether money arrived for Ref (the card
// confirm and PayPal capture calls; the wallet pays here).
type ConfirmRequest struct {
	Order *store.Order
	Payer Payer
	Ref   string
	// PaymentMethodID: the card the browser collected (Stripe).
	PaymentMethodID string
}

// Result of a confirm or a webhook: the order as it now stands.
type Result struct {
	Order *store.Order `json:"order"`
	// Donation: the donation a card webhook was about (instead of an order).
	Donation *store.Donation `json:"donation,omitempty"`
	Ref      string          `json:"ref"`
	Status   string          `json:"status"`
}

// RefundRequest gives money back; Amount 0 means all that is not refunded
// yet. A refund smaller than that leaves the order's status and grants; the
// order records refundedAmount.
type RefundRequest struct {
	Order  *store.Order
	Amount int64
	Reason string
}

// Provider is one way of paying.
type Provider interface {
	Name() string
	// Start begins a payment for a PENDING order.
	Start(ctx context.Context, req StartRequest) (*Started, error)
	// Confirm completes the payment and, when the provider says the money
	// arrived, marks the order PAID (through Orders).
	Confirm(ctx context.Context, req ConfirmRequest) (*Result, error)
	// Refund gives money back at the provider and records the refund.
	Refund(ctx context.Context, req RefundRequest) (*store.Order, error)
}

// Webhooks is implemented by providers that report payments on their own
// (Stripe, PayPal): Verify checks the signature and answers the event, Apply
// then marks the order PAID (or refunded) through Orders, idempotently.
type Webhooks interface {
	HandleWebhook(ctx context.Context, body []byte, header http.Header) (*Result, error)
}

// Registry holds the enabled providers by name.
type Registry struct {
	providers map[string]Provider
}

func NewRegistry(ps ...Provider) *Registry {
	r := &Registry{providers: map[string]Provider{}}
	for _, p := range ps {
		r.Register(p)
	}
	return r
}

func (r *Registry) Register(p Provider) { r.providers[p.Name()] = p }

// Get answers the provider for method, ErrDisabled when none.
func (r *Registry) Get(method string) (Provider, error) {
	if r == nil {
		return nil, ErrDisabled
	}
	p, ok := r.providers[method]
	if !ok {
		return nil, ErrDisabled
	}
	return p, nil
}

// Enabled reports whether method is registered.
func (r *Registry) Enabled(method string) bool {
	_, err := r.Get(method)
	return err == nil
}

// Names lists the enabled methods, the wallet first (the default).
func (r *Registry) Names() []string {
	var out []string
	for n := range r.providers {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i] == Wallet) != (out[j] == Wallet) {
			return out[i] == Wallet
		}
		return out[i] < out[j]
	})
	return out
}
