package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/store"
)

// POST /api/store/:storeId/paypal/create-order {amount, currency, orderId,
// metadata}: the PayPal order to approve, for the order's server-side
// total. PayPal sends the buyer back to payment-success (which captures) or
// cancel_order.
func (s *Server) apiPayPalCreateOrder(c echo.Context) error {
	sc, err := s.paymentScope(c)
	if err != nil {
		return err
	}
	var req payRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	o, started, err := s.paypalStart(c, sc, req)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, fields{
		"paypalOrderId": started.Ref, "approvalUrl": started.ApprovalURL, "status": started.Status, "orderId": o.ID,
	})
}

// paypalStart is the one way a PayPal payment starts: the JSON call and the
// checkout's form share it.
func (s *Server) paypalStart(c echo.Context, sc *Scope, req payRequest) (*store.Order, *payments.Started, error) {
	o, p, err := s.payableOrder(c, sc, payments.PayPal, req)
	if err != nil {
		return nil, nil, err
	}
	started, err := p.Start(c.Request().Context(), payments.StartRequest{
		Order: o, Payer: payer(sc), Metadata: clientMetadata(req.Metadata),
		// PayPal adds token (its order id) and PayerID to the return address.
		ReturnURL: s.appURL(sc, "/payment-success", url.Values{"processor": {"paypal"}, "orderId": {o.ID}}),
		CancelURL: s.appURL(sc, "/cancel_order", url.Values{"orderId": {o.ID}}),
	})
	if err != nil {
		return nil, nil, paymentError(err, "Failed to create PayPal order", msgNotAwaiting)
	}
	return o, started, nil
}

// startPayPal answers the approval URL for the checkout form.
func (s *Server) startPayPal(c echo.Context, sc *Scope, req payRequest) (string, error) {
	_, started, err := s.paypalStart(c, sc, req)
	if err != nil {
		return "", err
	}
	return started.ApprovalURL, nil
}

type paypalCaptureRequest struct {
	PayPalOrderID string `json:"paypalOrderId"`
}

// POST /api/store/:storeId/paypal/capture-order {paypalOrderId}: captures
// the approved PayPal order; the order becomes PAID when PayPal says the
// capture completed. Capturing again answers the paid order.
func (s *Server) apiPayPalCapture(c echo.Context) error {
	sc, err := s.paymentScope(c)
	if err != nil {
		return err
	}
	var req paypalCaptureRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.PayPalOrderID = strings.TrimSpace(req.PayPalOrderID); req.PayPalOrderID == "" {
		return badRequest("paypalOrderId is required")
	}
	p, err := s.payments.Get(payments.PayPal)
	if err != nil {
		return badRequest("Payment method not available")
	}
	res, err := s.capturePayPal(c, sc, p, req.PayPalOrderID)
	if err != nil {
		return err
	}
	msg := "Payment captured"
	if res.Order.Status == store.OrderPending {
		msg = "Payment is not complete yet"
	}
	return respondMessage(c, http.StatusOK, fields{
		"paypalOrderId": res.Ref, "status": res.Status, "orderId": res.Order.ID, "orderStatus": res.Order.Status,
		"orderNumber": res.Order.OrderNumber,
	}, msg)
}

// capturePayPalOnReturn captures for the payment-success page and answers
// what the buyer should read when it did not work ("" when it did, or when
// the order is simply not paid yet). An order that is not the one PayPal's
// id belongs to is left alone.
func (s *Server) capturePayPalOnReturn(c echo.Context, sc *Scope, orderID, paypalOrderID string) string {
	p, err := s.payments.Get(payments.PayPal)
	if err != nil {
		return "Payment method not available"
	}
	o, err := s.store.OrderByPaymentRef(c.Request().Context(), sc.App.Store.ID, sc.User.ID, payments.PayPal, paypalOrderID)
	if err != nil || o.ID != orderID {
		return "Missing payment information"
	}
	if _, err := s.capturePayPal(c, sc, p, paypalOrderID); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			return e.Message
		}
		s.logger.Error("paypal capture on return failed", "order", orderID, "err", err)
		return "Failed to capture PayPal payment"
	}
	return ""
}

// capturePayPal is the one capture path: the JSON call and the
// payment-success page share it.
func (s *Server) capturePayPal(c echo.Context, sc *Scope, p payments.Provider, paypalOrderID string) (*payments.Result, error) {
	ctx := c.Request().Context()
	o, err := s.store.OrderByPaymentRef(ctx, sc.App.Store.ID, sc.User.ID, payments.PayPal, paypalOrderID)
	if err != nil {
		return nil, wrapLoad(err, msgNoOrder)
	}
	res, err := p.Confirm(ctx, payments.ConfirmRequest{Order: o, Payer: payer(sc), Ref: paypalOrderID})
	if err != nil {
		return nil, paymentError(err, "Failed to capture PayPal order", msgNotAwaiting)
	}
	return res, nil
}
