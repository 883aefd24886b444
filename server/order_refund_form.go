package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// POST /apps/:app/orders/:orderId/refund {amount, reason}: the order page's
// refund form for the creator and admins. amount is in dollars ("3",
// "3.50"); empty gives back all that is not refunded yet. Every method
// (wallet, card, PayPal) refunds through moveOrder, as the order refund
// call does, so a full refund takes back stock and downloads the same way.
func (s *Server) formOrderRefund(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	back := appBasePath(c.Request(), sc.App.Name) + "/orders/" + url.PathEscape(c.Param("orderId"))
	req := transitionRequest{Status: store.OrderRefunded, Reason: c.FormValue("reason")}
	if v := strings.TrimSpace(c.FormValue("amount")); v != "" {
		cents, ok := parseDollars(v)
		if !ok {
			return formError(c, badRequest("Enter the amount to refund in dollars, like 3.00"), back)
		}
		req.Amount = cents
	}
	o, err := s.moveOrder(c.Request().Context(), sc, c.Param("orderId"), req)
	if err != nil {
		return formError(c, err, back)
	}
	msg := "Refunded " + "$" + cents(o.RefundedAmount) + " of $" + cents(o.Total) + " so far"
	if o.Status == store.OrderRefunded {
		msg = "Order " + o.OrderNumber + " is refunded in full"
	}
	return c.Redirect(http.StatusSeeOther, back+"?notice="+url.QueryEscape(msg))
}
