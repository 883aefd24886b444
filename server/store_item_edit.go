package server

import (
	"github.com/labstack/echo/v4"

	"marquee/store"
)

// ItemEditData is what the New/Edit Item screen renders: the item (nil for
// a new one) and the store it belongs to.
type ItemEditData struct {
	StoreID string          `json:"storeId"`
	Item    *store.ItemView `json:"item"`
	Types   []string        `json:"types"`
	// Events are what an EVENT_TICKET can be linked to.
	Events []store.EventOption `json:"events"`
	// Error is why the form without JavaScript was refused.
	Error string `json:"error"`
}

// GET /apps/:app/store/items/new and /apps/:app/store/items/:itemId/edit:
// creators and admins only (access.Flags.CanManageStore).
func (s *Server) pageItemEdit(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireManage(); err != nil {
		return err
	}
	return s.renderItemEdit(c, sc, c.Param("itemId"), nil)
}

// renderItemEdit renders the New/Edit Item screen, with the refusal of a
// form post when there was one.
func (s *Server) renderItemEdit(c echo.Context, sc *Scope, itemID string, refused *Error) error {
	props := s.pageProps(c, sc)
	events, err := s.store.EventOptions(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	data := &ItemEditData{StoreID: sc.App.Store.ID, Types: store.ItemTypes, Events: events}
	if itemID != "" {
		view, err := s.loadItem(c, sc, itemID)
		if err != nil {
			return err
		}
		data.Item = view
	}
	if refused != nil {
		data.Error = refused.Message
		props.Status = refused.Status
	}
	props.Data = data
	return s.renderPage(c, "ItemEdit", props)
}
