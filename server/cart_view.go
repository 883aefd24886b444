package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// CartData is what the cart page renders; Cart has the shape of GET
// /api/store/:storeId/cart, and both come from loadCart.
type CartData struct {
	Access  string          `json:"access" tstype:"StoreAccess"`
	StoreID string          `json:"storeId"`
	Cart    *store.CartView `json:"cart"`
	Notice  string          `json:"notice,omitempty"`
}

// loadCart is the one loader of the viewer's cart in the scope's store.
func (s *Server) loadCart(c echo.Context, sc *Scope) (*store.CartView, error) {
	return s.store.Cart(c.Request().Context(), sc.shop(), sc.User.ID)
}

// GET /api/store/:storeId/cart answers the active cart; a member without
// one gets 404, which SPEC.md's client reads as "no cart" (an emptied cart
// still exists and answers 200 with no lines).
func (s *Server) apiCart(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	cart, err := s.loadCart(c, sc)
	if err != nil {
		return err
	}
	if cart.ID == "" {
		return notFound("Cart not found")
	}
	return respond(c, http.StatusOK, cart)
}

// GET /apps/:app/cart
func (s *Server) pageCart(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	data := &CartData{Access: storeAccess(sc), Notice: c.QueryParam("error")}
	if len(data.Notice) > 200 {
		data.Notice = ""
	}
	if data.Access != "ok" {
		props.Status = accessStatus(data.Access)
		props.Data = data
		return s.renderPage(c, "Cart", props)
	}
	data.StoreID = sc.App.Store.ID
	cart, err := s.loadCart(c, sc)
	if err != nil {
		s.logger.Error("cart load failed", "app", sc.App.Name, "err", err)
		props.Error, props.Status = "Failed to fetch cart", http.StatusServiceUnavailable
	}
	data.Cart = cart
	props.Data = data
	return s.renderPage(c, "Cart", props)
}
