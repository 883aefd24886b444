package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/store"
)

// CheckoutStep is one step of the checkout's progress bar. Done steps link
// back (SPEC.md section 2: completed steps are clickable).
type CheckoutStep struct {
	Key   string `json:"key" tstype:"'review' | 'shipping' | 'payment'"`
	Label string `json:"label"`
	State string `json:"state" tstype:"'done' | 'current' | 'todo'"`
	Href  string `json:"href,omitempty"`
}

// CheckoutData is what the checkout page renders: before the order exists
// the cart (step Review Cart), then the order through Shipping (only with a
// PHYSICAL item) and Payment.
type CheckoutData struct {
	Access  string                `json:"access" tstype:"StoreAccess"`
	StoreID string                `json:"storeId"`
	Step    string                `json:"step" tstype:"'review' | 'shipping' | 'payment'"`
	Steps   []CheckoutStep        `json:"steps"`
	Cart    *store.CartView       `json:"cart"`
	Order   *store.OrderView      `json:"order"`
	Address store.ShippingAddress `json:"address"`
	// Countries are those the shipping step offers: the app's zones'
	// when it has any (it ships nowhere else), else all of ISO 3166-1.
	Countries []store.Country `json:"countries"`
	// Rates are what this order pays to ship to each zone, for the
	// shipping step (empty: the app has no zones and shipping is free).
	Rates []ShippingRate `json:"rates"`

	Payment       PaymentConfig `json:"payment"`
	WalletBalance int64         `json:"walletBalance"`
	// Pending is the member's latest unpaid order, offered when the cart
	// is empty (the cart became that order).
	Pending *store.OrderView `json:"pending"`
	Error   string           `json:"error,omitempty"`
}

func notice(c echo.Context, key string) string {
	v := c.QueryParam(key)
	if len(v) > 200 {
		return ""
	}
	return v
}

// GET /apps/:app/checkout[?orderId=&step=review|shipping|payment]
func (s *Server) pageCheckout(c echo.Context) error {
	return s.renderCheckout(c, checkoutView{OrderID: c.QueryParam("orderId"), Step: c.QueryParam("step"), Error: notice(c, "error")})
}

// checkoutView says which checkout to render: a refused shipping form
// comes back with the address as typed (Typed) and its status.
type checkoutView struct {
	OrderID, Step, Error string
	Typed                *store.ShippingAddress
	Status               int
}

func (s *Server) renderCheckout(c echo.Context, v checkoutView) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	d := &CheckoutData{Access: storeAccess(sc), Countries: store.Countries, Rates: []ShippingRate{}, Error: v.Error}
	props.Data = d
	if v.Status != 0 {
		props.Status = v.Status
	}
	if d.Access != "ok" {
		props.Status = accessStatus(d.Access)
		return s.renderPage(c, "Checkout", props)
	}
	ctx := c.Request().Context()
	base := appBasePath(c.Request(), sc.App.Name)
	d.StoreID, d.Payment = sc.App.Store.ID, s.paymentConfig(c.Request().Context(), sc.App.ID)
	d.Address.Country = "US"
	bal, err := s.store.WalletBalance(ctx, sc.App.ID, sc.User.ID)
	if err != nil {
		return err
	}
	d.WalletBalance = bal
	orderID := v.OrderID
	if orderID == "" {
		cart, err := s.loadCart(c, sc)
		if err != nil {
			return err
		}
		d.Cart, d.Step = cart, "review"
		if len(cart.Items) == 0 {
			pending, _, err := s.store.Orders(ctx, store.OrderFilter{StoreID: sc.App.Store.ID, UserID: sc.User.ID, Status: store.OrderPending, Limit: 1})
			if err != nil {
				return err
			}
			if len(pending) > 0 {
				d.Pending = &pending[0]
			}
		}
		physical := false
		for _, l := range cart.Items {
			physical = physical || l.StoreItem.Type == store.ItemPhysical
		}
		d.Steps = checkoutSteps(base, "", physical, false, "review")
		return s.renderPage(c, "Checkout", props)
	}
	o, err := s.store.OrderOf(ctx, sc.App.Store.ID, sc.User.ID, orderID)
	if isNotFound(err) {
		props.Status = http.StatusNotFound
		props.Error = "No order found. Please try again."
		return s.renderPage(c, "Checkout", props)
	}
	if err != nil {
		return err
	}
	if o.Status != store.OrderPending {
		return c.Redirect(http.StatusSeeOther, base+"/orders/"+url.PathEscape(o.ID))
	}
	d.Order = o
	hasAddress := o.ShippingAddress != ""
	if hasAddress {
		_ = json.Unmarshal([]byte(o.ShippingAddress), &d.Address)
	}
	if v.Typed != nil {
		d.Address = *v.Typed
	}
	if o.NeedsShipping {
		if err := s.checkoutRates(c, sc, d); err != nil {
			return err
		}
	}
	step := v.Step
	switch {
	case step == "review":
	case step == "shipping" && o.NeedsShipping:
	case o.NeedsShipping && !hasAddress:
		step = "shipping"
	default:
		step = "payment"
	}
	d.Step = step
	d.Steps = checkoutSteps(base, o.ID, o.NeedsShipping, hasAddress, step)
	return s.renderPage(c, "Checkout", props)
}

// checkoutSteps lays out Review Cart, Shipping (when needed) and Payment.
// With an order, Review Cart is done; Shipping is done once it has an
// address; a done step links to itself.
func checkoutSteps(base, orderID string, shipping, hasAddress bool, current string) []CheckoutStep {
	keys := []string{"review"}
	if shipping {
		keys = append(keys, "shipping")
	}
	keys = append(keys, "payment")
	labels := map[string]string{"review": "Review Cart", "shipping": "Shipping", "payment": "Payment"}
	var out []CheckoutStep
	for _, k := range keys {
		st := CheckoutStep{Key: k, Label: labels[k], State: "todo"}
		done := orderID != "" && (k == "review" || (k == "shipping" && hasAddress))
		switch {
		case k == current:
			st.State = "current"
		case done:
			st.State = "done"
		}
		if st.State == "done" {
			st.Href = base + "/checkout?orderId=" + url.QueryEscape(orderID) + "&step=" + k
		}
		out = append(out, st)
	}
	return out
}

// formError sends a refused form back to where it came from with the
// reason; anything else (a dependency down) is an error page.
func formError(c echo.Context, err error, back string) error {
	var e *Error
	if errors.As(err, &e) && e.Status < 500 {
		sep := "?"
		if u, perr := url.Parse(back); perr == nil && u.RawQuery != "" {
			sep = "&"
		}
		return c.Redirect(http.StatusSeeOther, back+sep+"error="+url.QueryEscape(e.Message))
	}
	return err
}

// msgCreateOrderFailed is SPEC.md's 'Failed to create order'.
const msgCreateOrderFailed = "Failed to create order"

// POST /apps/:app/checkout: leaving Review Cart makes the order (the same
// call as POST .../orders/checkout), then on to Shipping or Payment.
func (s *Server) formCheckout(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	base := appBasePath(c.Request(), sc.App.Name)
	req := checkoutRequest{CartID: c.FormValue("cartId"), Notes: c.FormValue("notes"), PaymentMethod: c.FormValue("paymentMethod")}
	o, _, err := s.checkout(c, sc, req, nil)
	if err != nil {
		if status, _ := classify(err); status >= 500 {
			// SPEC.md section 8's wording, on the page the member was on,
			// rather than an error page: the cart is as it was.
			s.logger.Error("checkout failed", "app", sc.App.Name, "err", err)
			return c.Redirect(http.StatusSeeOther, base+"/checkout?error="+url.QueryEscape(msgCreateOrderFailed))
		}
		return formError(c, err, base+"/checkout")
	}
	return c.Redirect(http.StatusSeeOther, base+"/checkout?orderId="+url.QueryEscape(o.ID))
}

func addressFromForm(c echo.Context) *store.ShippingAddress {
	return &store.ShippingAddress{FirstName: c.FormValue("firstName"), LastName: c.FormValue("lastName"),
		Address: c.FormValue("address"), City: c.FormValue("city"), State: c.FormValue("state"),
		ZipCode: c.FormValue("zipCode"), Country: c.FormValue("country"), Phone: c.FormValue("phone")}
}

// POST /apps/:app/checkout/shipping: the shipping step's form.
func (s *Server) formCheckoutShipping(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	base := appBasePath(c.Request(), sc.App.Name)
	orderID := c.FormValue("orderId")
	back := base + "/checkout?orderId=" + url.QueryEscape(orderID) + "&step=shipping"
	typed := addressFromForm(c)
	if _, err := s.store.SetOrderShipping(c.Request().Context(), sc.App.Store.ID, sc.User.ID, orderID, typed); err != nil {
		var e *Error
		if errors.As(orderError(err), &e) && e.Status == http.StatusBadRequest {
			// Refused as typed (a postal code, a country not shipped
			// to): the form comes back with what was typed.
			return s.renderCheckout(c, checkoutView{OrderID: orderID, Step: "shipping", Error: e.Message, Typed: typed, Status: e.Status})
		}
		return formError(c, orderError(err), back)
	}
	return c.Redirect(http.StatusSeeOther, base+"/checkout?orderId="+url.QueryEscape(orderID)+"&step=payment")
}

// POST /apps/:app/checkout/pay: the payment step's form (the wallet; card
// and PayPal add their own flows). Success goes to payment-success.
func (s *Server) formCheckoutPay(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	base := appBasePath(c.Request(), sc.App.Name)
	orderID := c.FormValue("orderId")
	back := base + "/checkout?orderId=" + url.QueryEscape(orderID) + "&step=payment"
	method := c.FormValue("paymentMethod")
	if method == "" {
		method = payments.Wallet
	}
	switch method {
	case payments.Wallet:
	case payments.PayPal:
		// Without JavaScript the form still pays by PayPal: the server
		// starts the PayPal order and sends the browser to approve it.
		approval, err := s.startPayPal(c, sc, payRequest{OrderID: orderID})
		if err != nil {
			return formError(c, err, back)
		}
		return c.Redirect(http.StatusSeeOther, approval)
	case payments.Stripe:
		return formError(c, badRequest("Card payments need JavaScript turned on"), back)
	default:
		return formError(c, badRequest(msgMethodOff), back)
	}
	if _, err := s.payWithWallet(c, sc, orderID); err != nil {
		return formError(c, err, back)
	}
	return c.Redirect(http.StatusSeeOther, base+"/payment-success?processor="+payments.Wallet+"&orderId="+url.QueryEscape(orderID))
}

// ShippingRate is one zone's rate for the order at checkout.
type ShippingRate struct {
	Zone      string   `json:"zone"`
	Countries []string `json:"countries"`
	// Amount is what this order pays to ship there, in cents.
	Amount int64 `json:"amount"`
	// FreeOver is the zone's threshold (0: none).
	FreeOver int64 `json:"freeOver"`
}

// checkoutRates fills the countries and each zone's rate for the order's
// physical items; the address defaults to a country the app ships to.
func (s *Server) checkoutRates(c echo.Context, sc *Scope, d *CheckoutData) error {
	ctx := c.Request().Context()
	countries, err := s.store.ShippingCountriesOf(ctx, sc.App.ID)
	if err != nil {
		return err
	}
	d.Countries = countries
	zones, err := s.store.ShippingZones(ctx, sc.App.ID)
	if err != nil {
		return err
	}
	var qty int64
	for _, it := range d.Order.Items {
		if it.StoreItem.Type == store.ItemPhysical {
			qty += it.Quantity
		}
	}
	for _, z := range zones {
		names := make([]string, len(z.Countries))
		for i, code := range z.Countries {
			names[i] = store.CountryName(code)
		}
		sort.Strings(names)
		d.Rates = append(d.Rates, ShippingRate{Zone: z.Name, Countries: names, Amount: z.Rate(qty, d.Order.Subtotal), FreeOver: z.FreeOver})
	}
	ships := false
	for _, c := range countries {
		ships = ships || c.Code == d.Address.Country
	}
	if !ships && len(countries) > 0 {
		d.Address.Country = countries[0].Code
	}
	return nil
}
