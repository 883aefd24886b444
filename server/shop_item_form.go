package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// POST /apps/:app/store/items/new and /apps/:app/store/items/:itemId/edit:
// the New/Edit Item form without JavaScript (multipart: the chosen images
// come with it, field images). It fills the API's itemRequest and saves
// through saveItem; a refusal shows the form again with the message.
func (s *Server) formSaveItem(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	itemID := ""
	if c.Param("itemId") != "" {
		msc, it, err := s.scopeOfManagedItem(c)
		if err != nil {
			return err
		}
		if msc.App.ID != sc.App.ID {
			return notFound("Item not found")
		}
		itemID = it.ID
	} else if err := sc.requireManage(); err != nil {
		return err
	}
	// The chosen images are kept even when a field is refused: the form
	// comes back with them, and a browser cannot fill a file input again.
	req, err := itemFromForm(c)
	for _, fh := range formFiles(c, "images") {
		m, ferr := s.saveFormFileHeader(c, fh, "store-item", &sc.App.ID, sc.User.ID)
		if ferr != nil {
			if err == nil {
				err = ferr
			}
			break
		}
		req.MediaIDs = append(req.MediaIDs, m.ID)
	}
	var saved string
	if err == nil {
		view, serr := s.saveItem(c, sc, itemID, req)
		if serr == nil {
			saved = view.ID
		}
		err = serr
	}
	if e, ok := err.(*Error); ok && e.Status < 500 && e.Status != http.StatusTooManyRequests {
		return s.renderItemEdit(c, sc, itemID, e, s.itemDraft(c, sc, req.MediaIDs))
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/store/items/"+saved)
}

// itemFromForm reads the form's fields into the API's request: amounts in
// dollars as typed, stock only when tracked, variants as parallel lists
// (rows left blank are skipped).
func itemFromForm(c echo.Context) (itemRequest, error) {
	f, err := c.FormParams()
	if err != nil {
		return itemRequest{}, badRequest("Malformed form body")
	}
	req := itemRequest{Name: f.Get("name"), Description: f.Get("description"), Type: f.Get("type"), SKU: f.Get("sku"),
		IsFeatured: f.Get("isFeatured") != "", EventID: f.Get("eventId"), MediaIDs: f["mediaIds"]}
	if req.Price, err = formCents(f.Get("price"), "Please enter a price"); err != nil {
		return req, err
	}
	if req.Price == nil {
		return req, badRequest("Please enter a price")
	}
	if req.ComparePrice, err = formCents(f.Get("comparePrice"), "Compare price must be an amount"); err != nil {
		return req, err
	}
	// A blank stock is untracked (the form says so), tracked or not: a
	// download or a service left at its defaults is never out of stock.
	if f.Get("tracked") != "" {
		if req.Stock, err = formCount(f.Get("stock"), "Stock must be 0 or more, or untracked"); err != nil {
			return req, err
		}
	}
	for _, t := range strings.Split(f.Get("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			req.Tags = append(req.Tags, t)
		}
	}
	names, values := f["variantName"], f["variantValue"]
	at := func(list []string, i int) string {
		if i < len(list) {
			return list[i]
		}
		return ""
	}
	for i := range max(len(names), len(values)) {
		v := struct {
			ID              string `json:"id"`
			Name            string `json:"name"`
			Value           string `json:"value"`
			PriceAdjustment int64  `json:"priceAdjustment"`
			Stock           *int64 `json:"stock"`
		}{ID: at(f["variantId"], i), Name: at(names, i), Value: at(values, i)}
		if strings.TrimSpace(v.Name) == "" && strings.TrimSpace(v.Value) == "" {
			continue
		}
		adj := strings.TrimSpace(at(f["variantAdjust"], i))
		if adj != "" {
			neg := strings.HasPrefix(adj, "-")
			cents, err := formCents(strings.TrimPrefix(adj, "-"), "A variant's price adjustment must be an amount")
			if err != nil {
				return req, err
			}
			if cents != nil {
				v.PriceAdjustment = *cents
				if neg {
					v.PriceAdjustment = -v.PriceAdjustment
				}
			}
		}
		if v.Stock, err = formCount(at(f["variantStock"], i), "Variant stock must be 0 or more, or untracked"); err != nil {
			return req, err
		}
		req.Variants = append(req.Variants, v)
	}
	return req, nil
}

// formCents reads a typed dollar amount ("12.50", "$12.50", "0"); blank is nil.
func formCents(v, msg string) (*int64, error) {
	v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "$"))
	if v == "" {
		return nil, nil
	}
	if v == "0" || v == "0.0" || v == "0.00" {
		zero := int64(0)
		return &zero, nil
	}
	cents, ok := parseDollars(v)
	if !ok {
		return nil, badRequest(msg)
	}
	return &cents, nil
}

// formCount reads a whole number; blank is nil.
func formCount(v, msg string) (*int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, badRequest(msg)
	}
	return &n, nil
}
