package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/jobs"
	"marquee/server/payments"
	"marquee/server/payments/paypal"
	"marquee/server/payments/stripe"
	"marquee/store"
)

// registerCardAndPayPal adds the card and PayPal methods when their keys are
// configured; without keys they are simply not offered.
func (s *Server) registerCardAndPayPal(d Deps) {
	if d.Config.Stripe.Enabled() {
		card := &stripe.Provider{
			Client: stripe.NewClient(stripe.Options{SecretKey: d.Config.Stripe.SecretKey, WebhookSecret: d.Config.Stripe.WebhookSecret,
				APIBase: d.Config.Stripe.APIBase}),
			Store: d.Store, PublishableKey: d.Config.Stripe.PublishableKey, Logger: s.logger,
			PayoutsRequired: d.Config.PayoutsRequired, ConnectWebhookSecret: d.Config.Stripe.ConnectWebhookSecret,
		}
		s.payments.Register(card)
		s.cardRenewals = card
	}
	if d.Config.PayPal.Enabled() {
		s.payments.Register(&paypal.Provider{
			Client: paypal.NewClient(paypal.Options{ClientID: d.Config.PayPal.ClientID, ClientSecret: d.Config.PayPal.ClientSecret,
				APIBase: d.Config.PayPal.APIBase, WebhookID: d.Config.PayPal.WebhookID,
				PartnerAttributionID: d.Config.PayPal.BNCode}),
			Store: d.Store, Logger: s.logger,
			Fees: paypal.Fees{Allowed: d.Config.PayPal.PlatformFees},
		})
	}
}

// cardOffered reports whether the app's members may pay by card: cards
// are configured and, when payouts are required (PAYOUTS_REQUIRED), the
// app's Stripe Connect account can take charges.
func (s *Server) cardOffered(ctx context.Context, appID string) bool {
	if s.cardRenewals == nil {
		return false
	}
	return s.cardRenewals.CardOffered(ctx, appID)
}

// CardRenewals is the card provider's half of the start_card_renewal job
// (nil when cards are not configured), for the job queue's wiring.
func (s *Server) CardRenewals() jobs.CardRenewals {
	if s.cardRenewals == nil {
		return nil
	}
	return s.cardRenewals
}

// Messages of the payment calls (SPEC.md section 8 where it names one).
const (
	msgNoOrder          = "No order found. Please try again."
	msgAmountMismatch   = "Payment amount does not match the order total"
	msgNotAwaiting      = "This order is not awaiting payment"
	msgNotRefundable    = "This order cannot be refunded in its current status"
	msgRefundOnly       = "Only the app's creator or an admin can refund payments"
	msgPaymentForeign   = "This payment does not belong to this order"
	msgInvalidSignature = "Invalid webhook signature"
)

// paymentError answers provider and order errors (errors.go) in the words
// of the call: fallback is SPEC.md's wording when the provider itself failed
// ('Failed to create payment intent', ...), illegal when the order is in a
// status the call cannot act on.
func paymentError(err error, fallback string, illegal string) error {
	return answer(err, wording{
		store.ErrNotFound:          msgNoOrder,
		store.ErrIllegalTransition: illegal,
		payments.ErrProvider:       fallback,
	})
}

// payRequest is the body of create-intent and create-order (SPEC.md section
// 7). Amount and currency are the browser's idea of the total: they are
// checked against the order, never used.
type payRequest struct {
	Amount   *int64            `json:"amount"`
	Currency string            `json:"currency"`
	OrderID  string            `json:"orderId"`
	Metadata map[string]string `json:"metadata"`
}

// payableOrder loads the viewer's order of the scope's store for a payment
// by method, refusing a client amount or currency that is not the order's.
func (s *Server) payableOrder(c echo.Context, sc *Scope, method string, req payRequest) (*store.Order, payments.Provider, error) {
	p, err := s.payments.Get(method)
	if err != nil || (method == payments.Stripe && !s.cardOffered(c.Request().Context(), sc.App.ID)) {
		return nil, nil, badRequest("Payment method not available")
	}
	if strings.TrimSpace(req.OrderID) == "" {
		return nil, nil, badRequest("orderId is required")
	}
	o, err := s.store.OrderInStore(c.Request().Context(), sc.App.Store.ID, sc.User.ID, strings.TrimSpace(req.OrderID))
	if err != nil {
		return nil, nil, wrapLoad(err, msgNoOrder)
	}
	if req.Amount != nil && *req.Amount != o.Total {
		return nil, nil, badRequest(msgAmountMismatch)
	}
	if req.Currency != "" && !strings.EqualFold(strings.TrimSpace(req.Currency), o.Currency) {
		return nil, nil, badRequest(msgAmountMismatch)
	}
	if o.Status != store.OrderPending {
		return nil, nil, &Error{Status: http.StatusConflict, Message: msgNotAwaiting}
	}
	if o.Total <= 0 {
		return nil, nil, badRequest("This order has nothing to pay")
	}
	// What the wallet refuses (a plan off sale, no shipping address), a
	// card or PayPal payment must not start for either.
	if err := s.store.ReadyToPay(c.Request().Context(), o); err != nil {
		return nil, nil, answer(err, nil)
	}
	return o, p, nil
}

// clientMetadata keeps a few short metadata entries from the browser, as
// Stripe and PayPal limit them; they are labels, never amounts.
func clientMetadata(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if len(out) == 10 {
			break
		}
		if k = strings.TrimSpace(k); k == "" || len(k) > 40 {
			continue
		}
		if len(v) > 200 {
			v = v[:200]
		}
		out[k] = v
	}
	return out
}

// payer is the signed-in member, from the session.
func payer(sc *Scope) payments.Payer {
	return payments.Payer{UserID: sc.User.ID, Email: sc.User.Email}
}

// appURL is an absolute address of an app page, for providers that send
// the buyer back (PayPal), on the app's domain when it has one.
func (s *Server) appURL(sc *Scope, path string, query url.Values) string {
	u := s.appLink(context.Background(), sc.App.ID, sc.App.Name, path)
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return u
}

// paymentScope is the scope of a payment call: the store's app, a signed-in
// member who may use the store.
func (s *Server) paymentScope(c echo.Context) (*Scope, error) {
	if _, err := requireUser(c); err != nil {
		return nil, err
	}
	return s.scopeOfStore(c, c.Param("storeId"))
}

// StrayRefunder is a provider that can give back a payment its order could
// not take (card, PayPal).
type StrayRefunder interface {
	RefundStray(ctx context.Context, ref string, amount int64, refused int) error
}

// StrayRefunds is the refund_stray_payment job's side in the server (nil
// when neither cards nor PayPal are configured).
func (s *Server) StrayRefunds() jobs.StrayRefunds {
	if !s.payments.Enabled(payments.Stripe) && !s.payments.Enabled(payments.PayPal) {
		return nil
	}
	return s
}

// RefundStrayPayment gives p back through its provider.
func (s *Server) RefundStrayPayment(ctx context.Context, p store.StrayPayment, refused int) error {
	prov, err := s.payments.Get(p.Provider)
	if err != nil {
		return fmt.Errorf("refund stray payment: %w", err)
	}
	r, ok := prov.(StrayRefunder)
	if !ok {
		s.logger.Error("stray payment cannot be refunded by its method", "method", p.Provider, "ref", p.Ref, "order", p.OrderID)
		return nil
	}
	return r.RefundStray(ctx, p.Ref, p.Amount, refused)
}

// CancelPayment cancels a cancelled order's open provider payment (the
// cancel_payment job); methods without one to cancel do nothing.
func (s *Server) CancelPayment(ctx context.Context, a store.CancelPaymentArgs) error {
	prov, err := s.payments.Get(a.Provider)
	if err != nil {
		return nil
	}
	c, ok := prov.(interface {
		CancelPayment(ctx context.Context, ref string) error
	})
	if !ok {
		return nil
	}
	return c.CancelPayment(ctx, a.Ref)
}
