package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/server/payments"
	"marquee/store"
)

// GET /api/store/:storeId/manage/orders?status=: every order of the store,
// for the creator and admins.
func (s *Server) apiManageOrders(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	if !access.CanFulfilOrders(sc.Can) {
		return forbidden(msgFulfilOnly)
	}
	page, limit, status, err := ordersQuery(c)
	if err != nil {
		return err
	}
	orders, p, err := s.loadOrders(c.Request().Context(), sc, true, status, page, limit)
	if err != nil {
		return err
	}
	return respondPage(c, orders, p)
}

type transitionRequest struct {
	Status         string `json:"status"`
	TrackingNumber string `json:"trackingNumber"`
	Reason         string `json:"reason"`
	RefundReason   string `json:"refundReason"`
	Amount         int64  `json:"amount"`
}

// moveOrder is every order action: fulfilment moves (PROCESSING, SHIPPED
// with a tracking number, DELIVERED), cancel (the buyer of an unpaid order,
// or fulfilment), and refund through the order's payment provider. The
// status machine in store decides what is legal (409 otherwise).
func (s *Server) moveOrder(ctx context.Context, sc *Scope, orderID string, req transitionRequest) (*store.OrderView, error) {
	to := strings.ToUpper(strings.TrimSpace(req.Status))
	if !validStatus(to) || to == store.OrderPending {
		return nil, badRequest("Unknown order status")
	}
	o, err := s.loadOrderForAction(ctx, sc, orderID, to)
	if err != nil {
		return nil, err
	}
	switch to {
	case store.OrderPaid:
		// Money arriving is the payment providers' to report, never a
		// button's.
		return nil, forbidden("Orders are marked paid by their payment")
	case store.OrderRefunded:
		reason := strings.TrimSpace(req.Reason + req.RefundReason)
		if reason == "" {
			return nil, badRequest("A refund reason is required")
		}
		if len(reason) > 500 {
			return nil, badRequest("Refund reason must be at most 500 characters")
		}
		if !store.CanTransition(o.Status, to) {
			return nil, orderError(store.ErrIllegalTransition)
		}
		p, err := s.payments.Get(o.PaymentMethod)
		if err != nil {
			return nil, badRequest("This order's payment method cannot refund right now")
		}
		if _, err := p.Refund(ctx, payments.RefundRequest{Order: &o.Order, Amount: req.Amount, Reason: reason}); err != nil {
			return nil, orderError(err)
		}
	default:
		if !o.NeedsShipping && (to == store.OrderProcessing || to == store.OrderShipped || to == store.OrderDelivered) {
			return nil, orderError(store.ErrIllegalTransition)
		}
		opts := store.TransitionOptions{From: o.Status}
		if to == store.OrderShipped {
			opts.TrackingNumber = strings.TrimSpace(req.TrackingNumber)
			if opts.TrackingNumber == "" {
				return nil, badRequest("A tracking number is required")
			}
			if len(opts.TrackingNumber) > 100 {
				return nil, badRequest("Tracking number must be at most 100 characters")
			}
		}
		if _, err := s.store.TransitionOrder(ctx, sc.App.ID, o.ID, to, opts); err != nil {
			return nil, orderError(err)
		}
	}
	return s.store.OrderOf(ctx, sc.App.Store.ID, "", o.ID)
}

// loadOrderForAction loads the order and checks the viewer may move it to
// to: fulfilment may do anything the machine allows; a buyer may only
// cancel their own order. Others get 404 for an order that is not theirs
// and 403 for one that is.
func (s *Server) loadOrderForAction(ctx context.Context, sc *Scope, orderID, to string) (*store.OrderView, error) {
	if access.CanFulfilOrders(sc.Can) {
		o, err := s.store.OrderOf(ctx, sc.App.Store.ID, "", orderID)
		return o, orderError(err)
	}
	o, err := s.store.OrderOf(ctx, sc.App.Store.ID, sc.User.ID, orderID)
	if err != nil {
		return nil, orderError(err)
	}
	if to == store.OrderCancelled && access.CanCancelOrder(sc.Can, true) {
		return o, nil
	}
	return nil, forbidden(msgFulfilOnly)
}

// PUT /api/store/:storeId/orders/:orderId/status {status, trackingNumber}
func (s *Server) apiOrderStatus(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	var req transitionRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	o, err := s.moveOrder(c.Request().Context(), sc, c.Param("orderId"), req)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, o, "Order updated")
}

// POST /api/store/:storeId/orders/:orderId/cancel
func (s *Server) apiOrderCancel(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	o, err := s.moveOrder(c.Request().Context(), sc, c.Param("orderId"), transitionRequest{Status: store.OrderCancelled})
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, o, "Order cancelled")
}

// POST /api/store/:storeId/orders/:orderId/refund {reason, amount}
func (s *Server) apiOrderRefund(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	var req transitionRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	req.Status = store.OrderRefunded
	o, err := s.moveOrder(c.Request().Context(), sc, c.Param("orderId"), req)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, o, "Order refunded")
}

// GET /api/store/:storeId/wallet: the viewer's wallet balance and movements.
func (s *Server) apiWallet(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	page, limit, _, err := ordersQuery(c)
	if err != nil {
		return err
	}
	w, p, err := s.store.Wallet(c.Request().Context(), sc.App.ID, sc.User.ID, page, limit)
	if err != nil {
		return err
	}
	return respondPage(c, w, p)
}
