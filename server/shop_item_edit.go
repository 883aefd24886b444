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
	// Error is why the form without JavaScript was refused; Draft is what
	// was typed into it, shown again so nothing is lost.
	Error string     `json:"error"`
	Draft *ItemDraft `json:"draft,omitempty"`
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
	return s.renderItemEdit(c, sc, c.Param("itemId"), nil, nil)
}

// ItemDraft is the New/Edit Item form as it was posted, every field as
// typed (amounts as text, so a refused "12,50" comes back as it was).
type ItemDraft struct {
	Name         string            `json:"name"`
	Description  string            `json:"description"`
	Type         string            `json:"type"`
	Price        string            `json:"price"`
	ComparePrice string            `json:"comparePrice"`
	Tracked      bool              `json:"tracked"`
	Stock        string            `json:"stock"`
	SKU          string            `json:"sku"`
	IsFeatured   bool              `json:"isFeatured"`
	Tags         string            `json:"tags"`
	EventID      string            `json:"eventId"`
	Media        []store.MediaView `json:"media"`
	Variants     []DraftVariant    `json:"variants"`
}

// DraftVariant is one variant row as typed.
type DraftVariant struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	Adjust string `json:"adjust"`
	Stock  string `json:"stock"`
}

// itemDraft reads the posted form back into a draft; mediaIDs are the
// images it names (kept and newly uploaded), shown if they are this app's.
func (s *Server) itemDraft(c echo.Context, sc *Scope, mediaIDs []string) *ItemDraft {
	f, _ := c.FormParams()
	d := &ItemDraft{Name: f.Get("name"), Description: f.Get("description"), Type: f.Get("type"), Price: f.Get("price"),
		ComparePrice: f.Get("comparePrice"), Tracked: f.Get("tracked") != "", Stock: f.Get("stock"), SKU: f.Get("sku"),
		IsFeatured: f.Get("isFeatured") != "", Tags: f.Get("tags"), EventID: f.Get("eventId"), Media: []store.MediaView{}, Variants: []DraftVariant{}}
	for _, id := range mediaIDs {
		m, err := s.store.MediaByID(c.Request().Context(), id)
		if err == nil && m.AppID != nil && *m.AppID == sc.App.ID {
			d.Media = append(d.Media, m)
		}
	}
	at := func(name string, i int) string {
		if l := f[name]; i < len(l) {
			return l[i]
		}
		return ""
	}
	for i := range max(len(f["variantName"]), len(f["variantValue"])) {
		v := DraftVariant{ID: at("variantId", i), Name: at("variantName", i), Value: at("variantValue", i), Adjust: at("variantAdjust", i), Stock: at("variantStock", i)}
		if strings.TrimSpace(v.Name+v.Value+v.Adjust+v.Stock) != "" {
			d.Variants = append(d.Variants, v)
		}
	}
	return d
}

// renderItemEdit renders the New/Edit Item screen, with the refusal of a
// form post when there was one.
func (s *Server) renderItemEdit(c echo.Context, sc *Scope, itemID string, refused *Error, draft *ItemDraft) error {
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
		data.Draft = draft
		props.Status = refused.Status
	}
	props.Data = data
	return s.renderPage(c, "ItemEdit", props)
}
