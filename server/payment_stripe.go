package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/server/payments"
	"marquee/store"
)

// POST /api/store/:storeId/stripe-payments/create-intent {amount, currency,
// orderId, metadata}: the order's PaymentIntent, for the amount the server
// computed when the order was made. One order has one PaymentIntent however
// often (and however concurrently) Pay is clicked.
func (s *Server) apiStripeCreateIntent(c echo.Context) error {
	sc, err := s.paymentScope(c)
	if err != nil {
		return err
	}
	var req payRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	o, p, err := s.payableOrder(c, sc, payments.Stripe, req)
	if err != nil {
		return err
	}
	started, err := p.Start(c.Request().Context(), payments.StartRequest{Order: o, Payer: payer(sc), Metadata: clientMetadata(req.Metadata)})
	if err != nil {
		return paymentError(err, "Failed to create payment intent", msgNotAwaiting)
	}
	return respond(c, http.StatusOK, StripeIntent{
		Amount: o.Total, ClientSecret: started.ClientSecret, Currency: o.Currency, OrderID: o.ID,
		PaymentIntentID: started.Ref, Status: started.Status,
	})
}

type stripeConfirmRequest struct {
	PaymentIntentID string `json:"paymentIntentId"`
	PaymentMethodID string `json:"paymentMethodId"`
}

// POST /api/store/:storeId/stripe-payments/confirm {paymentIntentId,
// paymentMethodId}: confirms (or, after the Payment Element confirmed in the
// browser, re-reads) the PaymentIntent at Stripe. The order is PAID only if
// Stripe says the money arrived; the browser's word is never enough.
func (s *Server) apiStripeConfirm(c echo.Context) error {
	sc, err := s.paymentScope(c)
	if err != nil {
		return err
	}
	var req stripeConfirmRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.PaymentIntentID = strings.TrimSpace(req.PaymentIntentID); req.PaymentIntentID == "" {
		return badRequest("paymentIntentId is required")
	}
	res, err := s.confirmPayment(c.Request().Context(), sc, payments.Stripe, req.PaymentIntentID, strings.TrimSpace(req.PaymentMethodID))
	if err != nil {
		return err
	}
	return respondConfirmed(c, payments.Stripe, res)
}

type refundRequest struct {
	PaymentIntentID string `json:"paymentIntentId"`
	Amount          *int64 `json:"amount"`
	Reason          string `json:"reason"`
}

// POST /api/store/:storeId/stripe-payments/refund {paymentIntentId, amount,
// reason}: the creator or an admin gives money back, fully (no amount) or
// partly. A refund reaching the total makes the order REFUNDED (and takes
// back what it granted); a smaller one leaves its status and records
// refundedAmount. The payment id may
// be a PaymentIntent or a PayPal order: the order's own method refunds it.
func (s *Server) apiPaymentRefund(c echo.Context) error {
	sc, err := s.paymentScope(c)
	if err != nil {
		return err
	}
	if !access.CanRefundPayments(sc.Role) {
		return forbidden(msgRefundOnly)
	}
	var req refundRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.PaymentIntentID = strings.TrimSpace(req.PaymentIntentID); req.PaymentIntentID == "" {
		return badRequest("paymentIntentId is required")
	}
	amount := int64(0)
	if req.Amount != nil {
		if *req.Amount <= 0 {
			return badRequest("Refund amount must be between 1 and the order total")
		}
		amount = *req.Amount
	}
	reason := strings.TrimSpace(req.Reason)
	if len(reason) > 500 {
		return badRequest("Refund reason must be at most 500 characters")
	}
	if reason == "" {
		reason = "Refunded by the store"
	}
	ctx := c.Request().Context()
	o, err := s.refundTarget(ctx, sc.App.Store.ID, req.PaymentIntentID)
	if err != nil {
		return wrapLoad(err, "Order not found")
	}
	p, err := s.payments.Get(o.PaymentMethod)
	if err != nil {
		return badRequest("Payment method not available")
	}
	if amount > o.Total {
		return badRequest("Refund amount must be between 1 and the order total")
	}
	out, err := p.Refund(ctx, payments.RefundRequest{Order: o, Amount: amount, Reason: reason})
	if err != nil {
		return paymentError(err, "Failed to process refund", msgNotRefundable)
	}
	if amount == 0 {
		amount = o.Total - o.RefundedAmount
	}
	return respondMessage(c, http.StatusOK, RefundProcessed{
		Amount: amount, Currency: out.Currency, OrderID: out.ID, PaymentIntentID: req.PaymentIntentID,
		RefundReason: out.RefundReason, RefundedAmount: out.RefundedAmount, RefundedAt: out.RefundedAt, Status: out.Status,
	}, "Refund processed")
}

// refundTarget finds the order a refund names: by its payment at the
// provider (a PaymentIntent, a PayPal order, the wallet's transactionId)
// or, for a wallet order, which has no provider payment a client knows of,
// by the order's id.
func (s *Server) refundTarget(ctx context.Context, storeID, ref string) (*store.Order, error) {
	o, err := s.store.OrderByPaymentRef(ctx, storeID, "", "", ref)
	if !errors.Is(err, store.ErrNotFound) {
		return o, err
	}
	v, err := s.store.OrderOf(ctx, storeID, "", ref)
	if err != nil {
		return nil, err
	}
	if v.PaymentMethod != payments.Wallet || v.PaidAt == nil {
		return nil, store.ErrNotFound
	}
	return &v.Order, nil
}

// StripeIntent is data of POST /api/store/:storeId/stripe-payments/create-intent.
type StripeIntent struct {
	Amount          int64  `json:"amount"`
	ClientSecret    string `json:"clientSecret"`
	Currency        string `json:"currency"`
	OrderID         string `json:"orderId"`
	PaymentIntentID string `json:"paymentIntentId"`
	Status          string `json:"status"`
}

// RefundProcessed is data of POST /api/store/:storeId/stripe-payments/refund.
type RefundProcessed struct {
	Amount          int64      `json:"amount"`
	Currency        string     `json:"currency"`
	OrderID         string     `json:"orderId"`
	PaymentIntentID string     `json:"paymentIntentId"`
	RefundReason    string     `json:"refundReason"`
	RefundedAmount  int64      `json:"refundedAmount"`
	RefundedAt      *time.Time `json:"refundedAt"`
	Status          string     `json:"status" tstype:"OrderStatus"`
}
