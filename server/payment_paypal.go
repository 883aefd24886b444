package server

import (
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
	return respond(c, http.StatusOK, PayPalOrderCreated{
		ApprovalURL: started.ApprovalURL, OrderID: o.ID, PayPalOrderID: started.Ref, Status: started.Status,
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
	res, err := s.confirmPayment(c.Request().Context(), sc, payments.PayPal, req.PayPalOrderID, "")
	if err != nil {
		return err
	}
	return respondConfirmed(c, payments.PayPal, res)
}

// PayPalOrderCreated is data of POST /api/store/:storeId/paypal/create-order.
type PayPalOrderCreated struct {
	atTop
	ApprovalURL   string `json:"approvalUrl"`
	OrderID       string `json:"orderId"`
	PayPalOrderID string `json:"paypalOrderId"`
	Status        string `json:"status"`
}
