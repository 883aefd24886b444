package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/server/payments"
	"marquee/store"
)

// Messages of the order calls (SPEC.md section 8 where it names one).
const (
	msgOrderNotFound   = "Order not found"
	msgNotEnoughWallet = "Insufficient wallet balance"
	msgMethodOff       = "Payment method not available"
	msgFulfilOnly      = "Only the app's creator or an admin can manage orders"
)

// orderError answers the order calls' errors (errors.go) in their words.
func orderError(err error) error {
	return answer(err, wording{store.ErrNotFound: msgOrderNotFound})
}

// ordersQuery reads page and limit (pageParams) and an optional status
// filter.
func ordersQuery(c echo.Context) (page, limit int, status string, err error) {
	if page, limit, err = pageParams(c, store.DefaultPageSize); err != nil {
		return 0, 0, "", err
	}
	status, err = orderStatusFilter(c)
	return page, limit, status, err
}

// orderStatusFilter reads the optional status filter of an order list.
func orderStatusFilter(c echo.Context) (string, error) {
	status := strings.ToUpper(strings.TrimSpace(c.QueryParam("status")))
	if status != "" && !validStatus(status) {
		return "", badRequest("Unknown order status")
	}
	return status, nil
}

func validStatus(s string) bool {
	for _, st := range store.OrderStatuses {
		if st == s {
			return true
		}
	}
	return false
}

// loadOrders is the one loader of order lists: the viewer's own, or with
// all set (fulfilment) every order of the store.
func (s *Server) loadOrders(ctx context.Context, sc *Scope, all bool, status string, page, limit int) ([]store.OrderView, store.Pagination, error) {
	f := store.OrderFilter{StoreID: sc.App.Store.ID, Status: status, Page: page, Limit: limit}
	if !all {
		f.UserID = sc.User.ID
	}
	orders, p, err := s.store.Orders(ctx, f)
	if err != nil {
		return nil, p, err
	}
	for i := range orders {
		if err := s.signDownloads(ctx, sc.App.Name, &orders[i]); err != nil {
			return nil, p, err
		}
	}
	return orders, p, nil
}

// loadOrder is the one loader of an order: a member sees only their own
// (anyone else's is 404, as if it did not exist); those who fulfil see any.
func (s *Server) loadOrder(ctx context.Context, sc *Scope, orderID string) (*store.OrderView, error) {
	userID := sc.User.ID
	if access.CanFulfilOrders(sc.Can) {
		userID = ""
	}
	o, err := s.store.OrderOf(ctx, sc.App.Store.ID, userID, orderID)
	if err != nil {
		return nil, orderError(err)
	}
	// The buyer's files, by links signed for the buyer.
	if err := s.signDownloads(ctx, sc.App.Name, o); err != nil {
		return nil, err
	}
	return o, nil
}

// GET /api/store/:storeId/orders: the viewer's orders, newest first.
func (s *Server) apiOrders(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	page, limit, status, err := ordersQuery(c)
	if err != nil {
		return err
	}
	orders, p, err := s.loadOrders(c.Request().Context(), sc, false, status, page, limit)
	if err != nil {
		return err
	}
	return respondPage(c, orders, p)
}

// GET /api/store/:storeId/orders/:orderId
func (s *Server) apiOrder(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	o, err := s.loadOrder(c.Request().Context(), sc, c.Param("orderId"))
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, o)
}

type checkoutRequest struct {
	CartID          string          `json:"cartId"`
	ShippingAddress json.RawMessage `json:"shippingAddress"`
	Notes           string          `json:"notes"`
	PaymentMethod   string          `json:"paymentMethod"`
}

// parseAddress accepts the address as an object or as JSON text (SPEC.md
// section 3 calls it JSON text); empty or null means none yet.
func parseAddress(raw json.RawMessage) (*store.ShippingAddress, error) {
	txt := strings.TrimSpace(string(raw))
	if txt == "" || txt == "null" || txt == `""` {
		return nil, nil
	}
	if strings.HasPrefix(txt, `"`) {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return nil, badRequest("Invalid shipping address")
		}
		raw = json.RawMessage(inner)
	}
	a := new(store.ShippingAddress)
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, badRequest("Invalid shipping address")
	}
	return a, nil
}

// checkout validates and makes the order. Amounts in the request are never
// read: the order's totals come from stored prices.
func (s *Server) checkout(c echo.Context, sc *Scope, req checkoutRequest, addr *store.ShippingAddress) (*store.Order, bool, error) {
	req.CartID = strings.TrimSpace(req.CartID)
	if req.CartID == "" {
		cart, err := s.loadCart(c, sc)
		if err != nil {
			return nil, false, err
		}
		if cart.ID == "" {
			return nil, false, badRequest("Your cart is empty")
		}
		req.CartID = cart.ID
	}
	method := strings.TrimSpace(req.PaymentMethod)
	if method == "" {
		method = payments.Wallet
	}
	if !s.payments.Enabled(method) {
		return nil, false, badRequest(msgMethodOff)
	}
	notes := strings.TrimSpace(req.Notes)
	if len(notes) > 1000 {
		return nil, false, badRequest("Notes must be at most 1000 characters")
	}
	if plan, err := s.store.CartBuysMembership(c.Request().Context(), req.CartID); err != nil {
		return nil, false, err
	} else if plan {
		if err := s.refuseWhileRenewedByCard(c.Request().Context(), sc); err != nil {
			return nil, false, err
		}
	}
	o, created, err := s.store.CreateOrder(c.Request().Context(), sc.shop(), sc.User.ID,
		store.CheckoutInput{CartID: req.CartID, Shipping: addr, Notes: notes, PaymentMethod: method})
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, notFound("Cart not found")
	}
	return o, created, orderError(err)
}

// POST /api/store/:storeId/orders/checkout {cartId, shippingAddress, notes,
// paymentMethod}: 201 with the new order, or 200 with the order a previous
// call already made from this cart.
func (s *Server) apiCheckout(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	var req checkoutRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	addr, err := parseAddress(req.ShippingAddress)
	if err != nil {
		return err
	}
	o, created, err := s.checkout(c, sc, req, addr)
	if err != nil {
		return err
	}
	view, err := s.store.OrderOf(c.Request().Context(), sc.App.Store.ID, sc.User.ID, o.ID)
	if err != nil {
		return err
	}
	if created {
		return respondMessage(c, http.StatusCreated, view, "Order created")
	}
	return respondMessage(c, http.StatusOK, view, "Order already created for this cart")
}

// PUT /api/store/:storeId/orders/:orderId/shipping: the shipping step, on
// the viewer's own unpaid order.
func (s *Server) apiOrderShipping(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	body, err := readJSONBody(c)
	if err != nil {
		return err
	}
	var wrapper struct {
		ShippingAddress json.RawMessage `json:"shippingAddress"`
	}
	_ = json.Unmarshal(body, &wrapper)
	raw := wrapper.ShippingAddress
	if len(raw) == 0 {
		raw = body // the address itself as the body
	}
	addr, err := parseAddress(raw)
	if err != nil {
		return err
	}
	if addr == nil {
		return badRequest("Shipping address is required")
	}
	if _, err := s.store.SetOrderShipping(c.Request().Context(), sc.App.Store.ID, sc.User.ID, c.Param("orderId"), addr); err != nil {
		return orderError(err)
	}
	view, err := s.store.OrderOf(c.Request().Context(), sc.App.Store.ID, sc.User.ID, c.Param("orderId"))
	if err != nil {
		return orderError(err)
	}
	return respondMessage(c, http.StatusOK, view, "Shipping address saved")
}

func readJSONBody(c echo.Context) ([]byte, error) {
	var raw json.RawMessage
	if err := c.Bind(&raw); err != nil {
		return nil, badRequest("Invalid request body")
	}
	return raw, nil
}

// payWithWallet pays the viewer's own order from their wallet through the
// payments interface.
func (s *Server) payWithWallet(c echo.Context, sc *Scope, orderID string) (*store.Order, error) {
	ctx := c.Request().Context()
	p, err := s.payments.Get(payments.Wallet)
	if err != nil {
		return nil, orderError(err)
	}
	o, err := s.store.OrderOf(ctx, sc.App.Store.ID, sc.User.ID, orderID)
	if err != nil {
		return nil, orderError(err)
	}
	res, err := p.Confirm(ctx, payments.ConfirmRequest{Order: &o.Order, Payer: payments.Payer{UserID: sc.User.ID, Email: sc.User.Email}})
	if err != nil {
		return nil, orderError(err)
	}
	return res.Order, nil
}

type walletPayRequest struct {
	OrderID string `json:"orderId"`
	// The demo client also sends userId, userWalletAddress, amount,
	// currency, creatorCoinId, creatorWalletAddress and metadata: the
	// server knows who pays whom and how much, so they are not read.
}

// POST /api/store/:storeId/musepay/process {orderId, ...}: pays the order
// from the viewer's wallet, atomically with marking it PAID.
func (s *Server) apiWalletPay(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	var req walletPayRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if strings.TrimSpace(req.OrderID) == "" {
		return badRequest("No order found. Please try again.")
	}
	o, err := s.payWithWallet(c, sc, req.OrderID)
	if err != nil {
		return err
	}
	balance, err := s.store.WalletBalance(c.Request().Context(), sc.App.ID, sc.User.ID)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, map[string]any{
		"orderId": o.ID, "orderNumber": o.OrderNumber, "status": o.Status, "transactionId": o.PaymentRef,
		"amount": o.Total, "currency": o.Currency, "walletBalance": balance,
	}, "Payment successful")
}

// PaymentConfig is GET .../stripe-payments/config (SPEC.md section 3). The
// card and PayPal parts are filled when their providers are registered.
type PaymentConfig struct {
	Stripe struct {
		PublishableKey string `json:"publishableKey"`
	} `json:"stripe"`
	PayPal struct {
		Enabled bool `json:"enabled"`
	} `json:"paypal"`
	Crypto struct {
		Enabled bool `json:"enabled"`
	} `json:"crypto"`
	Methods       []string `json:"methods"`
	DefaultMethod string   `json:"defaultMethod"`
}

func (s *Server) paymentConfig(ctx context.Context, appID string) PaymentConfig {
	var pc PaymentConfig
	pc.Crypto.Enabled = s.payments.Enabled(payments.Wallet)
	pc.PayPal.Enabled = s.payments.Enabled(payments.PayPal)
	card := s.cardOffered(ctx, appID)
	if card {
		// Public by design: the browser's Stripe.js needs it.
		pc.Stripe.PublishableKey = s.cfg.Stripe.PublishableKey
	}
	pc.Methods = []string{}
	for _, m := range s.payments.Names() {
		if m != payments.Stripe || card {
			pc.Methods = append(pc.Methods, m)
		}
	}
	if len(pc.Methods) > 0 {
		pc.DefaultMethod = pc.Methods[0]
	}
	return pc
}

// GET /api/store/:storeId/stripe-payments/config
func (s *Server) apiPaymentConfig(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, s.paymentConfig(c.Request().Context(), sc.App.ID))
}
