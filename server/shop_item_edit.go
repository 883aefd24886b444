package server

import (
	"sort"
	"strings"

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
	// Files are what a DIGITAL item delivers to its buyers (item_files.go),
	// with the upload form's outcome.
	Files       []store.ItemFile `json:"files"`
	FilesNotice string           `json:"filesNotice"`
	FilesError  string           `json:"filesError"`
	// FileTypes are the extensions the operator allows (DOWNLOAD_TYPES).
	FileTypes string `json:"fileTypes"`
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
	data := &ItemEditData{StoreID: sc.App.Store.ID, Types: store.ItemTypes, Events: events, Files: []store.ItemFile{},
		FilesNotice: notice(c, "notice"), FilesError: notice(c, "error")}
	if itemID != "" {
		view, err := s.loadItem(c, sc, itemID)
		if err != nil {
			return err
		}
		data.Item = view
		if data.Files, err = s.store.ItemFiles(c.Request().Context(), itemID); err != nil {
			return err
		}
	}
	exts := make([]string, 0)
	for ext := range s.cfg.downloadTypes() {
		exts = append(exts, ext)
	}
	sort.Strings(exts)
	data.FileTypes = strings.Join(exts, ",")
	if refused != nil {
		data.Error = refused.Message
		props.Status = refused.Status
	}
	props.Data = data
	return s.renderPage(c, "ItemEdit", props)
}
