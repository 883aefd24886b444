package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// ItemData is what the item page renders. InCart lists the variant ids
// (or "" for no variant) of this item already in the viewer's cart: SPEC.md
// section 5 disables Add to Cart for the same item and variant.
type ItemData struct {
	Access    string          `json:"access" tstype:"StoreAccess"`
	StoreID   string          `json:"storeId"`
	Item      *store.ItemView `json:"item"`
	InCart    []string        `json:"inCart"`
	CartCount int64           `json:"cartCount"`
	Added     bool            `json:"added"`
	// ChooseVariant: an add without a variant came back refused (the form
	// without JavaScript); the page asks for one.
	ChooseVariant bool `json:"chooseVariant"`
	// Event is what an EVENT_TICKET admits to (nil otherwise, or when the
	// event is gone).
	Event *store.EventOption `json:"event"`
}

// loadItem is the one loader of an item: the item with media, tags and
// variants, or 404 'Item not found' (also for another app's item).
func (s *Server) loadItem(c echo.Context, sc *Scope, itemID string) (*store.ItemView, error) {
	it, err := s.store.ItemByID(c.Request().Context(), itemID)
	if err != nil {
		return nil, wrapLoad(err, "Item not found")
	}
	// A tier is not a store item: the membership page shows those on sale.
	if !sc.contains(it.AppID) || it.Type == store.ItemSubscription {
		return nil, notFound("Item not found")
	}
	return s.store.ItemView(c.Request().Context(), it)
}

// GET /api/store/items/:itemId
func (s *Server) apiStoreItem(c echo.Context) error {
	sc, it, err := s.scopeOfItem(c, c.Param("itemId"))
	if err != nil {
		return err
	}
	view, err := s.loadItem(c, sc, it.ID)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, view)
}

// GET /apps/:app/store/items/:itemId. The item is shown to everyone who can
// reach the store page's app (it is indexable, and featured items are on
// the public landing page already); adding to the cart needs following,
// which Access tells the page.
func (s *Server) pageStoreItem(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	data := &ItemData{Access: storeAccess(sc), InCart: []string{}, Added: c.QueryParam("added") == "1",
		ChooseVariant: c.QueryParam("choose") == "variant"}
	if data.Access == "disabled" {
		props.Data = data
		return s.renderPage(c, "StoreItem", props)
	}
	data.StoreID = sc.App.Store.ID
	if it, err := s.store.ItemByID(c.Request().Context(), c.Param("itemId")); err == nil && it.AppID == sc.App.ID && it.Type == store.ItemSubscription {
		return c.Redirect(http.StatusFound, membershipPath(sc.App.Name))
	}
	view, err := s.loadItem(c, sc, c.Param("itemId"))
	if err != nil {
		if isNotFoundErr(err) {
			props.Error, props.Status = "Item Not Found", http.StatusNotFound
		} else {
			s.logger.Error("item load failed", "app", sc.App.Name, "err", err)
			props.Error, props.Status = "Failed to fetch store item", http.StatusServiceUnavailable
		}
		props.Data = data
		return s.renderPage(c, "StoreItem", props)
	}
	data.Item = view
	if view.EventID != nil {
		if e, err := s.store.EventByID(c.Request().Context(), *view.EventID); err == nil && e.AppID == sc.App.ID {
			data.Event = &store.EventOption{ID: e.ID, Name: e.Name, StartDate: e.StartDate}
		}
	}
	if data.Access == "ok" {
		if cart, err := s.store.Cart(c.Request().Context(), sc.shop(), sc.User.ID); err == nil {
			data.CartCount = cart.Totals.ItemCount
			for _, l := range cart.Items {
				if l.ItemID == view.ID {
					v := ""
					if l.VariantID != nil {
						v = *l.VariantID
					}
					data.InCart = append(data.InCart, v)
				}
			}
		} else {
			s.logger.Error("cart load failed", "app", sc.App.Name, "err", err)
		}
	}
	props.Data = data
	return s.renderPage(c, "StoreItem", props)
}

// isNotFoundErr reports a 404 *Error.
func isNotFoundErr(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Status == http.StatusNotFound
}
