package server

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// itemRequest is the body of POST /api/store/:storeId/items and PUT
// /api/store/items/:itemId: the whole item, as the item form sends it.
type itemRequest struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Type         string   `json:"type"`
	Price        *int64   `json:"price"`
	ComparePrice *int64   `json:"comparePrice"`
	Stock        *int64   `json:"stock"`
	SKU          string   `json:"sku"`
	IsFeatured   bool     `json:"isFeatured"`
	Tags         []string `json:"tags"`
	MediaIDs     []string `json:"mediaIds"`
	// EventID links an EVENT_TICKET to an event of the same app: paying
	// for the ticket makes the buyer an attendee (store/event_ticket.go).
	EventID  string `json:"eventId"`
	Variants []struct {
		ID              string `json:"id"`
		Name            string `json:"name"`
		Value           string `json:"value"`
		PriceAdjustment int64  `json:"priceAdjustment"`
		Stock           *int64 `json:"stock"`
	} `json:"variants"`
}

const maxPriceCents = 100_000_000 // one million dollars

// validate checks an item as a creator types it, with messages the form
// shows as they are.
func (r *itemRequest) validate() (store.ItemInput, error) {
	in := store.ItemInput{Name: strings.TrimSpace(r.Name), Description: strings.TrimSpace(r.Description),
		Type: strings.ToUpper(strings.TrimSpace(r.Type)), SKU: strings.TrimSpace(r.SKU), IsFeatured: r.IsFeatured,
		ComparePrice: r.ComparePrice, Stock: r.Stock, MediaIDs: r.MediaIDs,
		EventID: strings.TrimSpace(r.EventID)}
	switch {
	case in.Name == "":
		return in, badRequest("Please enter an item name")
	case utf8.RuneCountInString(in.Name) > 200:
		return in, badRequest("Name is too long (200 characters at most)")
	case !store.OneLine(in.Name):
		return in, fieldError("name", store.MsgOneLine("Name"))
	case !store.OneLine(in.SKU):
		return in, fieldError("sku", store.MsgOneLine("SKU"))
	case !store.TextOnly(in.Description):
		return in, fieldError("description", "Description must not contain control characters")
	case utf8.RuneCountInString(in.Description) > 5000:
		return in, badRequest("Description is too long (5000 characters at most)")
	case !store.IsItemType(in.Type):
		return in, badRequest("type must be one of " + strings.Join(store.ItemTypes, ", "))
	case r.Price == nil:
		return in, badRequest("Please enter a price")
	case *r.Price < 0 || *r.Price > maxPriceCents:
		return in, badRequest("Price must be between $0 and $1,000,000")
	case r.ComparePrice != nil && (*r.ComparePrice <= *r.Price || *r.ComparePrice > maxPriceCents):
		return in, badRequest("Compare price must be higher than the price")
	case r.Stock != nil && (*r.Stock < 0 || *r.Stock > 1_000_000):
		return in, badRequest("Stock must be 0 or more, or untracked")
	case utf8.RuneCountInString(in.SKU) > 64:
		return in, badRequest("SKU is too long (64 characters at most)")
	case len(r.MediaIDs) > 10:
		return in, badRequest("An item can have 10 images at most")
	case len(r.Tags) > 20:
		return in, badRequest("An item can have 20 tags at most")
	case len(r.Variants) > 50:
		return in, badRequest("An item can have 50 variants at most")
	case in.EventID != "" && in.Type != store.ItemEventTicket:
		return in, badRequest("Only an event ticket can be linked to an event")
	}
	in.Price = *r.Price
	for _, t := range r.Tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if utf8.RuneCountInString(t) > 40 {
			return in, badRequest("Tags are 40 characters at most")
		}
		if !store.OneLine(t) {
			return in, fieldError("tags", store.MsgOneLine("A tag"))
		}
		in.Tags = append(in.Tags, t)
	}
	for _, v := range r.Variants {
		vi := store.VariantInput{ID: strings.TrimSpace(v.ID), Name: strings.TrimSpace(v.Name), Value: strings.TrimSpace(v.Value),
			PriceAdjustment: v.PriceAdjustment, Stock: v.Stock}
		switch {
		case vi.Name == "" || vi.Value == "":
			return in, badRequest("Every variant needs a name and a value")
		case utf8.RuneCountInString(vi.Name) > 60 || utf8.RuneCountInString(vi.Value) > 60:
			return in, badRequest("Variant names and values are 60 characters at most")
		case !store.OneLine(vi.Name) || !store.OneLine(vi.Value):
			return in, fieldError("variants", store.MsgOneLine("A variant's name and value"))
		case in.Price+vi.PriceAdjustment < 0 || vi.PriceAdjustment > maxPriceCents:
			return in, badRequest("A variant's price adjustment cannot make its price negative")
		case vi.Stock != nil && (*vi.Stock < 0 || *vi.Stock > 1_000_000):
			return in, badRequest("Variant stock must be 0 or more, or untracked")
		}
		in.Variants = append(in.Variants, vi)
	}
	return in, nil
}

// requireManage answers 403 unless the viewer may manage the store
// (access.Flags.CanManageStore).
func (sc *Scope) requireManage() error {
	if err := sc.requireFeature(featureStore); err != nil {
		return err
	}
	if sc.User == nil {
		return unauthorized("Authentication required")
	}
	if !sc.Can.CanManageStore {
		return forbidden(msgManageStore)
	}
	return nil
}

func (s *Server) bindItem(c echo.Context) (itemRequest, error) {
	var req itemRequest
	if err := c.Bind(&req); err != nil {
		return req, badRequest("Invalid request body")
	}
	return req, nil
}

// saveItem is the one write of an item, for the API and the form.
func (s *Server) saveItem(c echo.Context, sc *Scope, itemID string, req itemRequest) (*store.ItemView, error) {
	in, err := req.validate()
	if err != nil {
		return nil, err
	}
	shop, err := s.store.ShopByID(c.Request().Context(), sc.App.Store.ID)
	if err != nil {
		return nil, err
	}
	it, err := s.store.SaveItem(c.Request().Context(), shop, itemID, in)
	if err != nil {
		return nil, wrapLoad(err, "Item not found")
	}
	return s.store.ItemView(c.Request().Context(), it)
}

// POST /api/store/:storeId/items
func (s *Server) apiCreateItem(c echo.Context) error {
	shop, err := s.store.ShopByID(c.Request().Context(), c.Param("storeId"))
	if err != nil {
		return wrapLoad(err, "Store not found")
	}
	sc, err := s.scopeOf(c, shop.AppID)
	if err != nil {
		return err
	}
	if err := sc.requireManage(); err != nil {
		return err
	}
	req, err := s.bindItem(c)
	if err != nil {
		return err
	}
	view, err := s.saveItem(c, sc, "", req)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusCreated, view, "Item created")
}

// scopeOfManagedItem loads an item for its manager; others get 403 (or 404
// for a deleted or unknown item).
func (s *Server) scopeOfManagedItem(c echo.Context) (*Scope, *store.StoreItem, error) {
	it, err := s.store.ItemByID(c.Request().Context(), c.Param("itemId"))
	if err != nil {
		return nil, nil, wrapLoad(err, "Item not found")
	}
	sc, err := s.scopeOf(c, it.AppID)
	if err != nil {
		return nil, nil, err
	}
	if err := sc.requireManage(); err != nil {
		return nil, nil, err
	}
	return sc, it, nil
}

// PUT /api/store/items/:itemId
func (s *Server) apiUpdateItem(c echo.Context) error {
	sc, it, err := s.scopeOfManagedItem(c)
	if err != nil {
		return err
	}
	req, err := s.bindItem(c)
	if err != nil {
		return err
	}
	view, err := s.saveItem(c, sc, it.ID, req)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusOK, view, "Item updated")
}

// DELETE /api/store/items/:itemId: the item leaves the store; carts flag
// it, orders keep their copy.
func (s *Server) apiDeleteItem(c echo.Context) error {
	_, it, err := s.scopeOfManagedItem(c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteItem(c.Request().Context(), it); err != nil {
		return err
	}
	return respondDone(c, "Item deleted")
}
