package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/store"
)

// confirmWords is how each provider's confirm is worded in its answers:
// the JSON key of its payment id, the success message, and the failure
// messages of the JSON call and of the payment-success page.
var confirmWords = map[string]struct {
	ref                          func(d *PaymentConfirmed) *string
	done, failed, failedOnReturn string
}{
	payments.Stripe: {ref: func(d *PaymentConfirmed) *string { return &d.PaymentIntentID }, done: "Payment confirmed",
		failed: "Failed to confirm payment", failedOnReturn: "Payment confirmation failed"},
	payments.PayPal: {ref: func(d *PaymentConfirmed) *string { return &d.PayPalOrderID }, done: "Payment captured",
		failed: "Failed to capture PayPal order", failedOnReturn: "Failed to capture PayPal payment"},
}

// confirmPayment is the one confirm path of card and PayPal payments: the
// JSON calls (Stripe's confirm, PayPal's capture) and the payment-success
// page go through it, so both providers' answers reach the order the same
// way and are worded by the same table. ref is the provider's payment id
// (PaymentIntent or PayPal order) of one of the viewer's orders.
func (s *Server) confirmPayment(ctx context.Context, sc *Scope, method, ref, paymentMethodID string) (*payments.Result, error) {
	if _, err := s.payments.Get(method); err != nil {
		return nil, badRequest(msgMethodOff)
	}
	o, err := s.store.OrderByPaymentRef(ctx, sc.App.Store.ID, sc.User.ID, method, ref)
	if err != nil {
		return nil, wrapLoad(err, msgNoOrder)
	}
	return s.confirmOrder(ctx, sc, method, o, ref, paymentMethodID)
}

func (s *Server) confirmOrder(ctx context.Context, sc *Scope, method string, o *store.Order, ref, paymentMethodID string) (*payments.Result, error) {
	p, err := s.payments.Get(method)
	if err != nil {
		return nil, badRequest(msgMethodOff)
	}
	res, err := p.Confirm(ctx, payments.ConfirmRequest{Order: o, Payer: payer(sc), Ref: ref, PaymentMethodID: paymentMethodID})
	if err != nil {
		return nil, paymentError(err, confirmWords[method].failed, msgNotAwaiting)
	}
	return res, nil
}

// respondConfirmed answers a confirm call with the order as it now stands.
func respondConfirmed(c echo.Context, method string, res *payments.Result) error {
	words := confirmWords[method]
	msg := words.done
	if res.Order.Status == store.OrderPending {
		msg = "Payment is not complete yet"
	}
	data := PaymentConfirmed{OrderID: res.Order.ID, OrderNumber: res.Order.OrderNumber, OrderStatus: res.Order.Status, Status: res.Status}
	*words.ref(&data) = res.Ref
	return respondMessage(c, http.StatusOK, data, msg)
}

// PaymentConfirmed is data of the card's confirm and PayPal's capture: the
// order as it now stands and the provider's id of the payment, under the
// name each call has always answered it (one of the two is set).
type PaymentConfirmed struct {
	atTop
	OrderID         string `json:"orderId"`
	OrderNumber     string `json:"orderNumber"`
	OrderStatus     string `json:"orderStatus" tstype:"OrderStatus"`
	PaymentIntentID string `json:"paymentIntentId,omitempty"`
	PayPalOrderID   string `json:"paypalOrderId,omitempty"`
	Status          string `json:"status"`
}

// confirmOnReturn confirms for the payment-success page a buyer comes back
// to and answers what the buyer should read when it did not work: "" when
// it did, or when the order is simply not paid yet.
//
// PayPal's return carries its id (ref): an order it does not belong to is
// "Missing payment information". A card's 3-D Secure return carries
// nothing we trust (ref ""), so the order's own PENDING PaymentIntent is
// asked, and any other order is left alone.
func (s *Server) confirmOnReturn(c echo.Context, sc *Scope, method, orderID, ref string) string {
	ctx := c.Request().Context()
	var o *store.Order
	var err error
	if ref != "" {
		o, err = s.store.OrderByPaymentRef(ctx, sc.App.Store.ID, sc.User.ID, method, ref)
		if err != nil || o.ID != orderID {
			return "Missing payment information"
		}
	} else {
		o, err = s.store.OrderInStore(ctx, sc.App.Store.ID, sc.User.ID, orderID)
		if err != nil || o.Status != store.OrderPending || o.PaymentMethod != method || o.PaymentRef == "" {
			return ""
		}
		ref = o.PaymentRef
	}
	if _, err := s.confirmOrder(ctx, sc, method, o, ref, ""); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			return e.Message
		}
		s.logger.Error("payment confirm on return failed", "method", method, "order", orderID, "err", err)
		return confirmWords[method].failedOnReturn
	}
	return ""
}
