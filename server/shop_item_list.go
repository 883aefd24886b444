package server

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// StoreData is what the store grid renders and what its JSON call answers:
// the page and GET /api/store/:storeId/items share loadStoreGrid.
type StoreData struct {
	// Access is "ok", "signin", "follow" or "disabled" (storeAccess).
	Access     string           `json:"access" tstype:"StoreAccess"`
	StoreID    string           `json:"storeId"`
	Items      []store.ItemView `json:"items"`
	Pagination store.Pagination `json:"pagination"`
	Filters    StoreFilters     `json:"filters"`
	CartCount  int64            `json:"cartCount"`
}

// StoreFilters echo the grid's form back as the visitor typed it; prices are
// dollars here, as the form shows them.
type StoreFilters struct {
	Type    string `json:"type"`
	Min     string `json:"min"`
	Max     string `json:"max"`
	InStock bool   `json:"inStock"`
	Search  string `json:"search"`
	Tags    string `json:"tags"`
}

// itemFilterOf reads the grid's query. The API takes minPrice and maxPrice
// in cents (SPEC.md section 9: money in cents); the page's GET form sends
// min and max in dollars, which a person types. Bad values are a 400.
func itemFilterOf(c echo.Context) (store.ItemFilter, StoreFilters, error) {
	var f store.ItemFilter
	var echoed StoreFilters
	page, limit, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return f, echoed, err
	}
	f.Page, f.Limit = page, limit
	if t := strings.TrimSpace(c.QueryParam("type")); t != "" {
		f.Type = strings.ToUpper(t)
		if !store.IsItemType(f.Type) {
			return f, echoed, badRequest("type must be one of " + strings.Join(store.ItemTypes, ", "))
		}
		echoed.Type = f.Type
	}
	for _, p := range []struct {
		cents, dollars string
		into           **int64
		echo           *string
	}{{"minPrice", "min", &f.MinPrice, &echoed.Min}, {"maxPrice", "max", &f.MaxPrice, &echoed.Max}} {
		if v := strings.TrimSpace(c.QueryParam(p.cents)); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return f, echoed, badRequest(p.cents + " must be a whole number of cents, 0 or more")
			}
			*p.into = &n
		}
		if v := strings.TrimSpace(c.QueryParam(p.dollars)); v != "" {
			d, err := strconv.ParseFloat(v, 64)
			if err != nil || d < 0 || d > 1e9 || math.IsNaN(d) {
				return f, echoed, badRequest("Prices must be amounts of 0 or more")
			}
			n := int64(math.Round(d * 100))
			*p.into, *p.echo = &n, v
		}
	}
	switch c.QueryParam("inStock") {
	case "", "false", "0":
	case "true", "1", "on":
		f.InStock, echoed.InStock = true, true
	default:
		return f, echoed, badRequest("inStock must be true or false")
	}
	f.Search = strings.TrimSpace(c.QueryParam("search"))
	if utf8.RuneCountInString(f.Search) > 200 {
		return f, echoed, badRequest("search is too long (200 characters at most)")
	}
	echoed.Search = f.Search
	for _, v := range c.QueryParams()["tags"] {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" && len(f.Tags) < 20 {
				f.Tags = append(f.Tags, t)
			}
		}
	}
	echoed.Tags = strings.Join(f.Tags, ",")
	return f, echoed, nil
}

// loadStoreGrid is the one loader of the grid: a filtered page of the
// scope's live items.
func (s *Server) loadStoreGrid(c echo.Context, sc *Scope) (*StoreData, error) {
	f, echoed, err := itemFilterOf(c)
	if err != nil {
		return nil, err
	}
	p, err := s.store.Items(c.Request().Context(), sc.App.Store.ID, f)
	if err != nil {
		return nil, err
	}
	return &StoreData{Access: "ok", StoreID: sc.App.Store.ID, Items: p.Items, Pagination: p.Pagination, Filters: echoed}, nil
}

// StoreOfApp is data of GET /api/store/apps/:appId/store.
type StoreOfApp struct {
	Store StoreInfo `json:"store"`
}

// StoreInfo is data.store of GET /api/store/apps/:appId/store.
type StoreInfo struct {
	ID       string `json:"id"`
	AppID    string `json:"appId"`
	Name     string `json:"name"`
	Currency string `json:"currency"`
}

// GET /api/store/apps/:appId/store
func (s *Server) apiStore(c echo.Context) error {
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	if err := sc.requireStore(); err != nil {
		return err
	}
	shop, err := s.store.ShopByID(c.Request().Context(), sc.App.Store.ID)
	if err != nil {
		return wrapLoad(err, "Store not found")
	}
	return respond(c, http.StatusOK, StoreOfApp{Store: StoreInfo{ID: shop.ID, AppID: shop.AppID, Name: shop.Name, Currency: shop.Currency}})
}

// GET /api/store/:storeId/items?page&limit&search&type&minPrice&maxPrice&tags&inStock
func (s *Server) apiStoreItems(c echo.Context) error {
	sc, err := s.scopeOfStore(c, c.Param("storeId"))
	if err != nil {
		return err
	}
	d, err := s.loadStoreGrid(c, sc)
	if err != nil {
		return err
	}
	return respondPage(c, ItemsPage{Items: d.Items, Pagination: d.Pagination}, d.Pagination)
}

// cartCount is the number shown on the cart button; a failure only hides it.
func (s *Server) cartCount(c echo.Context, sc *Scope) int64 {
	if sc.User == nil || !sc.Can.CanAccessStore {
		return 0
	}
	cart, err := s.store.Cart(c.Request().Context(), sc.shop(), sc.User.ID)
	if err != nil {
		s.logger.Error("cart count failed", "app", sc.App.Name, "err", err)
		return 0
	}
	return cart.Totals.ItemCount
}

// GET /apps/:app/store: the grid with its filters as a GET form, so it
// works without JavaScript. Visitors, non-followers and apps with the store
// off get a clear page instead.
func (s *Server) pageStore(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	data := &StoreData{Access: storeAccess(sc), Items: []store.ItemView{}}
	if data.Access != "ok" {
		props.Data = data
		return s.renderPage(c, "Store", props)
	}
	d, err := s.loadStoreGrid(c, sc)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Status == http.StatusBadRequest {
			props.Error, props.Status = e.Message, http.StatusBadRequest
		} else {
			s.logger.Error("store load failed", "app", sc.App.Name, "err", err)
			props.Error, props.Status = "Failed to fetch store items", http.StatusServiceUnavailable
		}
		data.StoreID = sc.App.Store.ID
		props.Data = data
		return s.renderPage(c, "Store", props)
	}
	d.CartCount = s.cartCount(c, sc)
	props.Data = d
	return s.renderPage(c, "Store", props)
}

// ItemsPage is data of GET /api/store/:storeId/items.
type ItemsPage struct {
	atTop
	Items      []store.ItemView `json:"items"`
	Pagination store.Pagination `json:"pagination"`
}
