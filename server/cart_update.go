package server

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"
)

type cartUpdateRequest struct {
	Quantity *int64 `json:"quantity"`
}

// PUT /api/store/:storeId/cart/items/:cartItemId {quantity}: 0 or less
// removes the line (SPEC.md section 4).
func (s *Server) apiCartUpdate(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	var req cartUpdateRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.Quantity == nil {
		return badRequest("quantity is required")
	}
	if *req.Quantity > maxLineQuantity {
		return badRequest("quantity must be between 1 and 1000")
	}
	cart, err := s.store.UpdateCartLine(c.Request().Context(), sc.shop(), sc.User.ID, c.Param("cartItemId"), *req.Quantity)
	if err != nil {
		return cartError(err)
	}
	return respond(c, http.StatusOK, cart)
}

// DELETE /api/store/:storeId/cart/items/:cartItemId
func (s *Server) apiCartRemove(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	cart, err := s.store.RemoveCartLine(c.Request().Context(), sc.shop(), sc.User.ID, c.Param("cartItemId"))
	if err != nil {
		return cartError(err)
	}
	return respondMessage(c, http.StatusOK, cart, "Item removed from cart")
}

// DELETE /api/store/:storeId/cart
func (s *Server) apiCartClear(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	if err := s.store.ClearCart(c.Request().Context(), sc.shop(), sc.User.ID); err != nil {
		return err
	}
	return respondDone(c, "Cart cleared")
}

// POST /apps/:app/cart/items/:cartItemId {quantity} or {remove}: the cart's
// quantity buttons and Remove without JavaScript.
func (s *Server) formCartUpdate(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	back := appBasePath(c.Request(), sc.App.Name) + "/cart"
	qty := int64(0)
	if c.FormValue("remove") == "" {
		if qty, err = strconv.ParseInt(c.FormValue("quantity"), 10, 64); err != nil || qty > maxLineQuantity {
			return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape("quantity must be a number"))
		}
	}
	if _, err := s.store.UpdateCartLine(c.Request().Context(), sc.shop(), sc.User.ID, c.Param("cartItemId"), qty); err != nil {
		var e *Error
		if err = cartError(err); errors.As(err, &e) && e.Status < 500 {
			return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape(e.Message))
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, back)
}

// POST /apps/:app/cart/clear
func (s *Server) formCartClear(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	if err := s.store.ClearCart(c.Request().Context(), sc.shop(), sc.User.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/cart")
}
