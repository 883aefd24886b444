package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// Messages of the store's access rule (SPEC.md section 6: FOLLOWER and up).
const (
	msgFollowForStore = "Follow this app to access its store"
	msgManageStore    = "Only the app's creator or an admin can manage store items"
)

// requireStore answers 404 when the store is off, 401 to visitors and 403
// to signed-in viewers who do not follow the app. The rule itself is
// access.Flags.CanAccessStore.
func (sc *Scope) requireStore() error {
	if err := sc.requireFeature(featureStore); err != nil {
		return err
	}
	if sc.Can.CanAccessStore {
		return nil
	}
	if sc.User == nil {
		return unauthorized("Authentication required")
	}
	return forbidden(msgFollowForStore)
}

// shop is the scope's store row as the landing data holds it (no query).
func (sc *Scope) shop() *store.Shop {
	return &store.Shop{ID: sc.App.Store.ID, AppID: sc.App.ID, Currency: sc.App.Store.Currency}
}

// scopeOfStore resolves a store id to its app's scope and checks access. An
// unknown store is 404 'Store not found'.
func (s *Server) scopeOfStore(c echo.Context, storeID string) (*Scope, error) {
	shop, err := s.store.ShopByID(c.Request().Context(), storeID)
	if err != nil {
		return nil, wrapLoad(err, "Store not found")
	}
	sc, err := s.scopeOf(c, shop.AppID)
	if err != nil {
		return nil, err
	}
	if err := sc.requireStore(); err != nil {
		return nil, err
	}
	return sc, nil
}

// scopeOfItem resolves an item id to its app's scope and checks access; a
// deleted or unknown item is 404 'Item not found'.
func (s *Server) scopeOfItem(c echo.Context, itemID string) (*Scope, *store.StoreItem, error) {
	it, err := s.store.ItemByID(c.Request().Context(), itemID)
	if err != nil {
		return nil, nil, wrapLoad(err, "Item not found")
	}
	sc, err := s.scopeOf(c, it.AppID)
	if err != nil {
		return nil, nil, err
	}
	if err := sc.requireStore(); err != nil {
		return nil, nil, err
	}
	return sc, it, nil
}

// storeAccess names what a store page shows instead of its content, so the
// page component never re-derives the rule.
// accessStatus is the status of a personal store page (cart, checkout,
// orders, wallet) shown to a viewer storeAccess turns away: the page still
// renders its sign-in or follow prompt, but says with its status that the
// viewer may not use it (401 to visitors, 403 to non-followers), as the JSON
// calls behind it do.
func accessStatus(access string) int {
	switch access {
	case "signin":
		return http.StatusUnauthorized
	case "follow":
		return http.StatusForbidden
	case "disabled":
		return http.StatusNotFound
	}
	return http.StatusOK
}

// StoreAccessValues are what storeAccess answers; the TypeScript union
// StoreAccess is generated from this list (scripts/build/types.go).
var StoreAccessValues = []string{"ok", "signin", "follow", "disabled"}

func storeAccess(sc *Scope) string {
	switch {
	case sc.requireFeature(featureStore) != nil:
		return "disabled"
	case sc.Can.CanAccessStore:
		return "ok"
	case sc.User == nil:
		return "signin"
	default:
		return "follow"
	}
}
