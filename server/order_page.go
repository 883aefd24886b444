package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/server/payments"
	"marquee/store"
)

// OrdersData is the buyer's orders page and the fulfilment screen; Orders
// has the shape of GET .../orders (and .../manage/orders).
type OrdersData struct {
	Access     string            `json:"access" tstype:"StoreAccess"`
	StoreID    string            `json:"storeId"`
	Orders     []store.OrderView `json:"orders"`
	Pagination store.Pagination  `json:"pagination"`
	Status     string            `json:"status"`
	Statuses   []string          `json:"statuses" tstype:"OrderStatus[]"`
	Notice     string            `json:"notice,omitempty"`
	Error      string            `json:"error,omitempty"`
}

func (s *Server) ordersPage(c echo.Context, page string, all bool) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	d := &OrdersData{Access: storeAccess(sc), Orders: []store.OrderView{}, Statuses: store.OrderStatuses,
		Notice: notice(c, "notice"), Error: notice(c, "error")}
	props.Data = d
	if d.Access != "ok" {
		props.Status = accessStatus(d.Access)
		return s.renderPage(c, page, props)
	}
	if all && !access.CanFulfilOrders(sc.Can) {
		return forbidden(msgFulfilOnly)
	}
	d.StoreID = sc.App.Store.ID
	n, limit, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return err
	}
	// An unknown status filter shows every order.
	status, _ := orderStatusFilter(c)
	d.Status = status
	orders, p, err := s.loadOrders(c.Request().Context(), sc, all, status, n, limit)
	if err != nil {
		s.logger.Error("orders load failed", "app", sc.App.Name, "err", err)
		props.Error, props.Status = "Failed to load orders", http.StatusServiceUnavailable
		return s.renderPage(c, page, props)
	}
	d.Orders, d.Pagination = orders, p
	return s.renderPage(c, page, props)
}

// GET /apps/:app/orders
func (s *Server) pageOrders(c echo.Context) error { return s.ordersPage(c, "Orders", false) }

// GET /apps/:app/manage/orders: fulfilment, creator and admins.
func (s *Server) pageManageOrders(c echo.Context) error { return s.ordersPage(c, "ManageOrders", true) }

// OrderData is the order page.
type OrderData struct {
	Access    string           `json:"access" tstype:"StoreAccess"`
	StoreID   string           `json:"storeId"`
	Order     *store.OrderView `json:"order"`
	CanCancel bool             `json:"canCancel"`
	CanFulfil bool             `json:"canFulfil"`
	// CanRefund: the viewer may refund and some of the order's money is
	// not given back yet (RefundLeft, in cents).
	CanRefund  bool   `json:"canRefund"`
	RefundLeft int64  `json:"refundLeft"`
	Notice     string `json:"notice,omitempty"`
	Error      string `json:"error,omitempty"`
}

// GET /apps/:app/orders/:orderId
func (s *Server) pageOrder(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	d := &OrderData{Access: storeAccess(sc), Notice: notice(c, "notice"), Error: notice(c, "error")}
	props.Data = d
	if d.Access != "ok" {
		props.Status = accessStatus(d.Access)
		return s.renderPage(c, "Order", props)
	}
	d.StoreID = sc.App.Store.ID
	o, err := s.loadOrder(c.Request().Context(), sc, c.Param("orderId"))
	if err != nil {
		var e *Error
		if isErr(err, &e) && e.Status == http.StatusNotFound {
			props.Error, props.Status = "Order not found", http.StatusNotFound
			return s.renderPage(c, "Order", props)
		}
		s.logger.Error("order load failed", "app", sc.App.Name, "err", err)
		props.Error, props.Status = "Failed to load order", http.StatusServiceUnavailable
		return s.renderPage(c, "Order", props)
	}
	d.Order = o
	d.CanFulfil = access.CanFulfilOrders(sc.Can)
	d.CanCancel = o.Status == store.OrderPending && access.CanCancelOrder(sc.Can, o.UserID == sc.User.ID)
	if d.CanFulfil && o.Total > o.RefundedAmount && store.CanTransition(o.Status, store.OrderRefunded) {
		d.CanRefund, d.RefundLeft = true, o.Total-o.RefundedAmount
	}
	return s.renderPage(c, "Order", props)
}

// POST /apps/:app/orders/:orderId/cancel: the buyer's Cancel Order button.
func (s *Server) formOrderCancel(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	back := appBasePath(c.Request(), sc.App.Name) + "/orders/" + url.PathEscape(c.Param("orderId"))
	if _, err := s.moveOrder(c.Request().Context(), sc, c.Param("orderId"), transitionRequest{Status: store.OrderCancelled}); err != nil {
		return formError(c, err, back)
	}
	return c.Redirect(http.StatusSeeOther, back+"?notice="+url.QueryEscape("Order cancelled"))
}

// POST /apps/:app/manage/orders/:orderId {status, trackingNumber, reason}:
// the fulfilment screen's action buttons, back to the list they came from.
func (s *Server) formManageOrder(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	list := appBasePath(c.Request(), sc.App.Name) + "/manage/orders"
	back, filter := list, strings.ToUpper(c.FormValue("filter"))
	if validStatus(filter) {
		back += "?status=" + filter
	}
	req := transitionRequest{Status: c.FormValue("status"), TrackingNumber: c.FormValue("trackingNumber"), Reason: c.FormValue("reason")}
	o, err := s.moveOrder(c.Request().Context(), sc, c.Param("orderId"), req)
	if err != nil {
		return formError(c, err, back)
	}
	if o.Status != filter {
		// The order left the filtered list: back to every order, where
		// it stays in view with its new status.
		back = list
	}
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	return c.Redirect(http.StatusSeeOther, back+sep+"notice="+url.QueryEscape("Order "+o.OrderNumber+" is now "+orderStatusWords[o.Status]))
}

// orderStatusWords are the status labels of SPEC.md section 4 (the pages'
// statusLabels), for the notices the server words itself.
var orderStatusWords = map[string]string{
	store.OrderPending: "Awaiting Payment", store.OrderPaid: "Payment Confirmed", store.OrderProcessing: "Processing",
	store.OrderShipped: "Shipped", store.OrderDelivered: "Delivered", store.OrderCancelled: "Cancelled", store.OrderRefunded: "Refunded",
}

// PaymentSuccessData is the payment-success page: missing (no processor or
// order), error, processing (the provider has not confirmed yet) or success.
type PaymentSuccessData struct {
	Access    string           `json:"access" tstype:"StoreAccess"`
	State     string           `json:"state" tstype:"'missing' | 'error' | 'processing' | 'success'"`
	Processor string           `json:"processor"`
	Order     *store.OrderView `json:"order"`
	// Message says why a payment failed (the provider's reason).
	Message string `json:"message,omitempty"`
}

// GET /apps/:app/payment-success?processor=&orderId=&paypalOrderId=
func (s *Server) pagePaymentSuccess(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	d := &PaymentSuccessData{Access: storeAccess(sc), Processor: c.QueryParam("processor")}
	props.Data = d
	if d.Access != "ok" {
		props.Status = accessStatus(d.Access)
		return s.renderPage(c, "PaymentSuccess", props)
	}
	orderID := c.QueryParam("orderId")
	if d.Processor == "" || orderID == "" {
		d.State = "missing"
		return s.renderPage(c, "PaymentSuccess", props)
	}
	if d.Processor == payments.PayPal {
		// PayPal sends the buyer back here with its order id (as token);
		// capturing is this page's job, and repeating it (a reload) is
		// harmless. The order is PAID only if PayPal says the capture
		// completed.
		// A membership's subscription comes back with subscription_id
		// (its token is PayPal's agreement token, not an id of ours).
		ppID := c.QueryParam("subscription_id")
		if ppID == "" {
			ppID = c.QueryParam("paypalOrderId")
		}
		if ppID == "" {
			ppID = c.QueryParam("token")
		}
		if ppID == "" {
			d.State = "missing"
			return s.renderPage(c, "PaymentSuccess", props)
		}
		if msg := s.confirmOnReturn(c, sc, payments.PayPal, orderID, ppID); msg != "" {
			d.Message = msg
		}
	}
	if d.Processor == payments.Stripe {
		// A card that needed a redirect (3-D Secure) comes back here:
		// ask Stripe how the order's PaymentIntent stands.
		if msg := s.confirmOnReturn(c, sc, payments.Stripe, orderID, ""); msg != "" {
			d.Message = msg
		}
	}
	o, err := s.store.OrderOf(c.Request().Context(), sc.App.Store.ID, sc.User.ID, orderID)
	switch {
	case isNotFound(err):
		d.State = "error"
	case err != nil:
		return err
	case o.PaidAt != nil && o.Status != store.OrderRefunded && o.Status != store.OrderCancelled:
		d.State, d.Order = "success", o
	case o.Status == store.OrderPending:
		d.State, d.Order = "processing", o
	default:
		d.State, d.Order = "error", o
	}
	return s.renderPage(c, "PaymentSuccess", props)
}

// GET /apps/:app/cancel_order: the buyer left a redirecting payment.
func (s *Server) pageCancelOrder(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	props.Data = map[string]any{"orderId": c.QueryParam("orderId")}
	return s.renderPage(c, "CancelOrder", props)
}

// WalletData is the transactions page: the member's wallet in this app.
type WalletData struct {
	Access     string            `json:"access" tstype:"StoreAccess"`
	StoreID    string            `json:"storeId"`
	Wallet     *store.WalletView `json:"wallet"`
	Pagination store.Pagination  `json:"pagination"`
	// AddFunds is the "Add funds" form (wallet_topup.go).
	AddFunds TopupPage `json:"addFunds"`
}

// GET /apps/:app/transactions
func (s *Server) pageTransactions(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	d := &WalletData{Access: storeAccess(sc)}
	props.Data = d
	if d.Access != "ok" {
		props.Status = accessStatus(d.Access)
		return s.renderPage(c, "Transactions", props)
	}
	d.StoreID = sc.App.Store.ID
	page, _, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return err
	}
	w, p, err := s.store.Wallet(c.Request().Context(), sc.App.ID, sc.User.ID, page, store.DefaultPageSize)
	if err != nil {
		s.logger.Error("wallet load failed", "app", sc.App.Name, "err", err)
		props.Error, props.Status = "Failed to load transactions", http.StatusServiceUnavailable
		return s.renderPage(c, "Transactions", props)
	}
	d.Wallet, d.Pagination = w, p
	d.AddFunds = s.topupPage(c, sc)
	return s.renderPage(c, "Transactions", props)
}

func isErr(err error, target **Error) bool { return errors.As(err, target) }
