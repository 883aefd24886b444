package server

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

type cartAddRequest struct {
	StoreItemID string  `json:"storeItemId"`
	VariantID   *string `json:"variantId"`
	Quantity    *int64  `json:"quantity"`
}

const maxLineQuantity = 1000

const msgJoinOnMembershipPage = "Memberships are joined on the membership page, not through the cart"

// cartError answers the cart's errors (errors.go): a line that is not in
// the viewer's cart is not found.
func cartError(err error) error {
	return answer(err, wording{store.ErrNotFound: "Cart item not found"})
}

// addToCart validates an add and runs it. Prices in the request are never
// read: the cart prices lines from the stored item and variant.
func (s *Server) addToCart(c echo.Context, sc *Scope, req cartAddRequest) (*store.CartView, error) {
	req.StoreItemID = strings.TrimSpace(req.StoreItemID)
	if req.StoreItemID == "" {
		return nil, badRequest("storeItemId is required")
	}
	if req.VariantID != nil && strings.TrimSpace(*req.VariantID) == "" {
		req.VariantID = nil
	}
	qty := int64(1)
	if req.Quantity != nil {
		qty = *req.Quantity
	}
	if qty < 1 || qty > maxLineQuantity {
		return nil, badRequest("quantity must be between 1 and 1000")
	}
	// Tiers are joined on the membership page, never through a cart.
	if it, err := s.store.ItemByID(c.Request().Context(), req.StoreItemID); err == nil && it.Type == store.ItemSubscription {
		return nil, badRequest(msgJoinOnMembershipPage)
	}
	cart, err := s.store.AddToCart(c.Request().Context(), sc.shop(), sc.User.ID, req.StoreItemID, req.VariantID, qty)
	return cart, cartError(err)
}

// POST /api/store/:storeId/cart/items {storeItemId, variantId, quantity}
func (s *Server) apiCartAdd(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	var req cartAddRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	cart, err := s.addToCart(c, sc, req)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, cart, "Item added to cart")
}

// formScope is the scope of a store form post: pages answer access problems
// by sending the viewer where they can fix them.
func (s *Server) formScope(c echo.Context) (*Scope, error) {
	sc := scopeFromPage(c)
	switch storeAccess(sc) {
	case "ok":
		return sc, nil
	case "signin":
		return nil, c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	default:
		return nil, c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/store")
	}
}

// POST /apps/:app/cart/items: Add to Cart without JavaScript. Back to the
// item page with the 'Added' notice, or to the cart with the reason.
func (s *Server) formCartAdd(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	req := cartAddRequest{StoreItemID: c.FormValue("storeItemId")}
	if v := c.FormValue("variantId"); v != "" {
		req.VariantID = &v
	}
	if v := c.FormValue("quantity"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return badRequest("quantity must be a number")
		}
		req.Quantity = &n
	}
	base := appBasePath(c.Request(), sc.App.Name)
	if _, err := s.addToCart(c, sc, req); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Fields["variantId"] != "" {
			// No size chosen: back to the item, whose form asks for one.
			return c.Redirect(http.StatusSeeOther, base+"/store/items/"+url.PathEscape(req.StoreItemID)+"?choose=variant")
		}
		if errors.As(err, &e) && e.Status < 500 {
			return c.Redirect(http.StatusSeeOther, base+"/cart?error="+url.QueryEscape(e.Message))
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, base+"/store/items/"+url.PathEscape(req.StoreItemID)+"?added=1")
}
