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
}

// GET /apps/:app/store/items/new and /apps/:app/store/items/:itemId/edit:
// creators and admins only (access.Flags.CanManageStore).
func (s *Server) pageItemEdit(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireManage(); err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	events, err := s.store.EventOptions(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	data := &ItemEditData{StoreID: sc.App.Store.ID, Types: store.ItemTypes, Events: events}
	if id := c.Param("itemId"); id != "" {
		view, err := s.loadItem(c, sc, id)
		if err != nil {
			return err
		}
		data.Item = view
	}
	props.Data = data
	return s.renderPage(c, "ItemEdit", props)
}
