package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/uptrace/bun"
	"testing"

	"marquee/store"
)

const (
	follower   = "follower@demo.test"
	subscriber = "subscriber@demo.test"
	outsider   = "member@demo.test"
)

// shopIDs are the demo's store rows the store tests address.
type shopIDs struct {
	demo, acme string
	items      map[string]string // SKU -> item id
	variants   map[string]string // SKU/value -> variant id
	acmeItem   string
}

func loadShop(t *testing.T, ts *testServer) shopIDs {
	t.Helper()
	ctx := context.Background()
	ids := shopIDs{items: map[string]string{}, variants: map[string]string{}}
	for name, into := range map[string]*string{"demo": &ids.demo, "acme": &ids.acme} {
		app, err := ts.store.AppByIDOrName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		shop, err := ts.store.ShopOfApp(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		*into = shop.ID
	}
	var items []store.StoreItem
	if err := ts.store.DB().NewSelect().Model(&items).Where("store_id = ?", ids.demo).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		ids.items[it.SKU] = it.ID
		var vs []store.Variant
		if err := ts.store.DB().NewSelect().Model(&vs).Where("store_item_id = ?", it.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			ids.variants[it.SKU+"/"+v.Value] = v.ID
		}
	}
	// acme's store is off; give it an item so cross-app calls have a target.
	acme, _ := ts.store.AppByIDOrName(ctx, "acme")
	it := &store.StoreItem{ID: store.NewID(), AppID: acme.ID, StoreID: ids.acme, Name: "Walnut box", Type: store.ItemPhysical, Price: 500, Currency: "USD"}
	if _, err := ts.store.DB().NewInsert().Model(it).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ids.acmeItem = it.ID
	return ids
}

func addBody(item, variant string, qty int) string {
	v := "null"
	if variant != "" {
		v = `"` + variant + `"`
	}
	return fmt.Sprintf(`{"storeItemId":%q,"variantId":%s,"quantity":%d}`, item, v, qty)
}

func TestStoreAccessAndFilters(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testStoreAccessAndFilters(t, newTestServer(t, db)) })
}

func testStoreAccessAndFilters(t *testing.T, ts *testServer) {
	ids := loadShop(t, ts)
	items := "/api/store/" + ids.demo + "/items"
	ts.run(t, []scenario{
		{name: "visitor", path: items, status: 401, json: map[string]any{"message": "Authentication required"}},
		{name: "signed-in non-member", path: items, as: outsider, status: 403, json: map[string]any{"message": msgFollowForStore}},
		{name: "follower", path: items, as: follower, status: 200, json: map[string]any{
			// 11: membership tiers are not store items (issue 40).
			"data.items": arrayLen(11), "pagination.total": 11, "pagination.hasPrev": false, "pagination.hasNext": false,
			"data.pagination.limit": 20}},
		{name: "store of the app", path: "/api/store/apps/demo/store", as: follower, status: 200, json: map[string]any{"data.store.id": ids.demo}},
		{name: "store of the app, visitor", path: "/api/store/apps/demo/store", status: 401},
		{name: "store off", path: "/api/store/apps/acme/store", as: "admin@demo.test", status: 404},
		{name: "items of a store that is off", path: "/api/store/" + ids.acme + "/items", as: "admin@demo.test", status: 404},
		{name: "item of a store that is off", path: "/api/store/items/" + ids.acmeItem, as: "admin@demo.test", status: 404},
		{name: "unknown store", path: "/api/store/" + store.NewID() + "/items", as: follower, status: 404, json: map[string]any{"message": "Store not found"}},
		{name: "unknown item", path: "/api/store/items/" + store.NewID(), as: follower, status: 404, json: map[string]any{"message": "Item not found"}},
		{name: "one item", path: "/api/store/items/" + ids.items["TEE-NS-01"], as: follower, status: 200,
			json: map[string]any{"data.name": "Night Shift Tour Tee", "data.variants": arrayLen(3), "data.variants.2.price": 2700}},
		{name: "type", path: items + "?type=physical", as: follower, json: map[string]any{"data.items": arrayLen(5)}},
		{name: "type digital", path: items + "?type=DIGITAL", as: follower, json: map[string]any{"data.items": arrayLen(3)}},
		{name: "bad type", path: items + "?type=FOOD", as: follower, status: 400},
		{name: "in stock: the sold-out print goes, untracked stays", path: items + "?inStock=true", as: follower, json: map[string]any{"data.items": arrayLen(10)}},
		{name: "price range in cents", path: items + "?minPrice=2000&maxPrice=3000", as: follower, json: map[string]any{"data.items": arrayLen(2)}},
		{name: "price range in dollars (the page form)", path: items + "?min=20&max=30", as: follower, json: map[string]any{"data.items": arrayLen(2)}},
		{name: "bad price", path: items + "?minPrice=-1", as: follower, status: 400},
		{name: "bad price text", path: items + "?maxPrice=ten", as: follower, status: 400},
		{name: "search", path: items + "?search=HOODIE", as: follower, json: map[string]any{"data.items": arrayLen(1), "data.items.0.sku": "HOOD-LH-01"}},
		{name: "search with a wildcard is literal", path: items + "?search=%25", as: follower, json: map[string]any{"data.items": arrayLen(0)}},
		{name: "tags", path: items + "?tags=art", as: follower, json: map[string]any{"data.items": arrayLen(3)}},
		{name: "two tags", path: items + "?tags=art,tour", as: follower, json: map[string]any{"data.items": arrayLen(4)}},
		{name: "limit capped", path: items + "?limit=5000", as: follower, json: map[string]any{"pagination.limit": 100}},
		{name: "page not a number", path: items + "?page=two", as: follower, status: 400},
		{name: "inStock not a boolean", path: items + "?inStock=maybe", as: follower, status: 400},
		{name: "last page", path: items + "?limit=5&page=3", as: follower, json: map[string]any{
			"data.items": arrayLen(1), "pagination.hasPrev": true, "pagination.hasNext": false, "pagination.totalPages": 3}},
		{name: "a tier is not a store item", path: "/api/store/items/" + ids.items["SUB-SC-01"], as: follower, status: 404},
	})

	// Paging through with a small limit returns every item exactly once.
	seen := map[string]bool{}
	for page := 1; page <= 4; page++ {
		res := ts.do(t, "GET", fmt.Sprintf("%s?limit=5&page=%d", items, page), nil, commUser(t, ts, follower))
		var body struct {
			Data struct{ Items []store.ItemView }
		}
		commJSON(t, res, &body)
		for _, it := range body.Data.Items {
			if seen[it.ID] {
				t.Fatalf("item %s on two pages", it.Name)
			}
			seen[it.ID] = true
		}
	}
	if len(seen) != 11 {
		t.Fatalf("paging saw %d items, want 11", len(seen))
	}
}

func TestCartRules(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testCartRules(t, newTestServer(t, db)) })
}

func testCartRules(t *testing.T, ts *testServer) {
	ids := loadShop(t, ts)
	cart := "/api/store/" + ids.demo + "/cart"
	add := cart + "/items"
	tee, teeS, teeM, teeL := ids.items["TEE-NS-01"], ids.variants["TEE-NS-01/S"], ids.variants["TEE-NS-01/M"], ids.variants["TEE-NS-01/L"]
	vinyl, sub := ids.items["VNL-MB-01"], ids.items["SUB-SC-01"]
	ts.run(t, []scenario{
		{name: "no cart yet", path: cart, as: follower, status: 404, json: map[string]any{"message": "Cart not found"}},
		{name: "visitor adds", method: "POST", path: add, body: addBody(tee, teeS, 1), status: 401},
		{name: "non-member adds", method: "POST", path: add, as: outsider, body: addBody(tee, teeS, 1), status: 403},
		{name: "add", method: "POST", path: add, as: follower, body: addBody(tee, teeS, 2), status: 200,
			json: map[string]any{"data.items": arrayLen(1), "data.totals.subtotal": 5000, "data.items.0.selectedVariants.0.value": "S"}},
		{name: "same item and variant merges", method: "POST", path: add, as: follower, body: addBody(tee, teeS, 1), status: 200,
			json: map[string]any{"data.items": arrayLen(1), "data.items.0.quantity": 3, "data.totals.subtotal": 7500}},
		{name: "tampered price is ignored", method: "POST", path: add, as: follower, status: 200,
			body: `{"storeItemId":"` + tee + `","variantId":"` + teeL + `","quantity":1,"price":1,"totals":{"subtotal":1}}`,
			json: map[string]any{"data.items": arrayLen(2), "data.items.1.price": 2700, "data.totals.subtotal": 10200}},
		{name: "sold-out variant", method: "POST", path: add, as: follower, body: addBody(tee, teeM, 1), status: 400,
			json: map[string]any{"message": "This item is out of stock"}},
		{name: "more than the variant's stock", method: "POST", path: add, as: follower, body: addBody(tee, teeL, 4), status: 400,
			json: map[string]any{"message": "Only 3 available"}},
		{name: "more than the item's stock", method: "POST", path: add, as: follower, body: addBody(vinyl, "", 4), status: 400},
		{name: "quantity 0", method: "POST", path: add, as: follower, body: addBody(vinyl, "", 0), status: 400},
		{name: "negative quantity", method: "POST", path: add, as: follower, body: addBody(vinyl, "", -2), status: 400},
		{name: "quantity as text", method: "POST", path: add, as: follower, body: `{"storeItemId":"` + vinyl + `","quantity":"9"}`, status: 400},
		// Tiers are joined on the membership page, never through a cart.
		{name: "subscription twice", method: "POST", path: add, as: follower, body: addBody(sub, "", 2), status: 400},
		{name: "subscription once", method: "POST", path: add, as: follower, body: addBody(sub, "", 1), status: 400,
			json: map[string]any{"message": "Memberships are joined on the membership page, not through the cart"}},
		{name: "vinyl once", method: "POST", path: add, as: follower, body: addBody(vinyl, "", 1), status: 200},
		{name: "another item's variant", method: "POST", path: add, as: follower, body: addBody(vinyl, teeS, 1), status: 400,
			json: map[string]any{"message": "Variant not found"}},
		{name: "another app's item", method: "POST", path: add, as: follower, body: addBody(ids.acmeItem, "", 1), status: 400,
			json: map[string]any{"message": "Item not found"}},
		{name: "no item", method: "POST", path: add, as: follower, body: `{}`, status: 400},
		{name: "untracked stock", method: "POST", path: add, as: follower, body: addBody(ids.items["DIG-MB-01"], "", 50), status: 200},
	})

	// Another member cannot see or change the follower's lines.
	var got struct{ Data store.CartView }
	commJSON(t, ts.do(t, "GET", cart, nil, commUser(t, ts, follower)), &got)
	line := got.Data.Items[0].ID
	if got.Data.Totals.ItemCount != 55 {
		t.Fatalf("item count %d", got.Data.Totals.ItemCount)
	}
	ts.run(t, []scenario{
		{name: "someone else's line", method: "PUT", path: add + "/" + line, as: subscriber, body: `{"quantity":1}`, status: 404},
		{name: "someone else's line, delete", method: "DELETE", path: add + "/" + line, as: subscriber, status: 404},
		{name: "subscriber has no cart", path: cart, as: subscriber, status: 404, json: map[string]any{"message": "Cart not found"}},
		{name: "raise past the variant's stock", method: "PUT", path: add + "/" + line, as: follower, body: `{"quantity":11}`, status: 400,
			json: map[string]any{"message": "Only 10 available"}},
		{name: "update", method: "PUT", path: add + "/" + line, as: follower, body: `{"quantity":1}`, status: 200,
			json: map[string]any{"data.items.0.quantity": 1}},
		{name: "no quantity", method: "PUT", path: add + "/" + line, as: follower, body: `{}`, status: 400},
		{name: "0 removes", method: "PUT", path: add + "/" + line, as: follower, body: `{"quantity":0}`, status: 200,
			json: map[string]any{"data.items": arrayLen(3)}},
		{name: "removed line is gone", method: "DELETE", path: add + "/" + line, as: follower, status: 404},
	})

	// A deleted item stays in the cart, flagged, and out of the subtotal.
	ts.run(t, []scenario{
		{name: "follower cannot delete items", method: "DELETE", path: "/api/store/items/" + vinyl, as: follower, status: 403},
		{name: "creator deletes the vinyl", method: "DELETE", path: "/api/store/items/" + vinyl, as: "creator@demo.test", status: 200},
		{name: "flagged, not dropped", path: cart, as: follower, json: map[string]any{
			"data.items": arrayLen(3), "data.items.1.issue": "DELETED", "data.items.1.available": false,
			"data.totals.subtotal": 2700 + 50*999}},
		{name: "deleted item is gone from the grid", path: "/api/store/" + ids.demo + "/items", as: follower, json: map[string]any{"data.items": arrayLen(10)}},
		{name: "clear", method: "DELETE", path: cart, as: follower, status: 200},
		{name: "cleared", path: cart, as: follower, json: map[string]any{"data.items": arrayLen(0)}},
	})
}

// TestCartConcurrentAdds: 50 adds at once of an item with 3 in stock leave
// exactly 3 in the cart and one cart.
func TestCartConcurrentAdds(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := loadShop(t, ts)
	headers := commUser(t, ts, follower)
	add := "/api/store/" + ids.demo + "/cart/items"
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := ts.do(t, "POST", add, body(map[string]any{"storeItemId": ids.items["VNL-MB-01"], "quantity": 1}), headers)
			mu.Lock()
			codes[res.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[200] != 3 || codes[400] != 47 {
		t.Fatalf("answers %v, want 3 x 200 and 47 x 400", codes)
	}
	n, err := ts.store.DB().NewSelect().Model((*store.Cart)(nil)).Where("store_id = ?", ids.demo).Count(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("%d carts (%v)", n, err)
	}
	var got struct{ Data store.CartView }
	commJSON(t, ts.do(t, "GET", "/api/store/"+ids.demo+"/cart", nil, headers), &got)
	if len(got.Data.Items) != 1 || got.Data.Items[0].Quantity != 3 {
		t.Fatalf("cart %+v", got.Data.Items)
	}
}

func TestItemManagement(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := loadShop(t, ts)
	create := "/api/store/" + ids.demo + "/items"
	good := `{"name":"Poster","description":"A2","type":"physical","price":1500,"comparePrice":2000,"stock":7,"sku":"P-1",
		"isFeatured":true,"tags":["Art","new"],"variants":[{"name":"Finish","value":"Matte","priceAdjustment":0,"stock":3},
		{"name":"Finish","value":"Gloss","priceAdjustment":250,"stock":null}]}`
	ts.run(t, []scenario{
		{name: "visitor", method: "POST", path: create, body: good, status: 401},
		{name: "follower", method: "POST", path: create, as: follower, body: good, status: 403, json: map[string]any{"message": msgManageStore}},
		{name: "moderator", method: "POST", path: create, as: "moderator@demo.test", body: good, status: 403},
		{name: "acme's store is off", method: "POST", path: "/api/store/" + ids.acme + "/items", as: "admin@demo.test", body: good, status: 404},
		{name: "no name", method: "POST", path: create, as: "creator@demo.test", body: `{"name":" ","type":"DIGITAL","price":100}`, status: 400,
			json: map[string]any{"message": "Please enter an item name"}},
		{name: "no price", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL"}`, status: 400},
		{name: "negative price", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL","price":-1}`, status: 400},
		{name: "fractional price", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL","price":1.5}`, status: 400},
		{name: "compare below price", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL","price":100,"comparePrice":100}`, status: 400,
			json: map[string]any{"message": "Compare price must be higher than the price"}},
		{name: "bad type", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"CAR","price":100}`, status: 400},
		{name: "negative stock", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL","price":100,"stock":-1}`, status: 400},
		{name: "variant without value", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL","price":100,"variants":[{"name":"Size"}]}`, status: 400},
		{name: "variant below zero", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL","price":100,"variants":[{"name":"a","value":"b","priceAdjustment":-200}]}`, status: 400},
		{name: "someone's media", method: "POST", path: create, as: "creator@demo.test", body: `{"name":"x","type":"DIGITAL","price":100,"mediaIds":["` + store.NewID() + `"]}`, status: 400},
		{name: "admin creates", method: "POST", path: create, as: "admin@demo.test", body: good, status: 201, json: map[string]any{
			"data.name": "Poster", "data.type": "PHYSICAL", "data.variants": arrayLen(2), "data.variants.1.price": 1750,
			"data.tags": arrayLen(2), "data.stock": 7}},
		{name: "in the grid", path: create + "?search=poster", as: follower, json: map[string]any{"data.items": arrayLen(1)}},
		{name: "tag filter finds it", path: create + "?tags=new", as: follower, json: map[string]any{"data.items": arrayLen(1)}},
	})
	var created struct{ Data store.ItemView }
	res := ts.do(t, "GET", create+"?search=poster", nil, commUser(t, ts, follower))
	var page struct {
		Data struct{ Items []store.ItemView }
	}
	commJSON(t, res, &page)
	created.Data = page.Data.Items[0]
	item := "/api/store/items/" + created.Data.ID
	keep := created.Data.Variants[0].ID
	edit, _ := json.Marshal(map[string]any{"name": "Poster v2", "type": "PHYSICAL", "price": 1600, "stock": nil,
		"variants": []map[string]any{{"id": keep, "name": "Finish", "value": "Matte", "stock": 1}}})
	gloss := created.Data.Variants[1].ID
	cart := "/api/store/" + ids.demo + "/cart"
	ts.run(t, []scenario{
		{name: "follower adds the Gloss finish", method: "POST", path: cart + "/items", as: follower, body: addBody(created.Data.ID, gloss, 2), status: 200},
		{name: "follower edits", method: "PUT", path: item, as: follower, body: string(edit), status: 403},
		{name: "creator edits", method: "PUT", path: item, as: "creator@demo.test", body: string(edit), status: 200, json: map[string]any{
			"data.name": "Poster v2", "data.stock": nil, "data.variants": arrayLen(1), "data.variants.0.id": keep, "data.tags": arrayLen(0)}},
		{name: "the removed finish stays in the cart, flagged", path: cart, as: follower, json: map[string]any{
			"data.items": arrayLen(1), "data.items.0.issue": "VARIANT_UNAVAILABLE", "data.items.0.selectedVariants.0.value": "Gloss",
			"data.totals.subtotal": 0}},
		{name: "a removed finish cannot be added", method: "POST", path: cart + "/items", as: follower, body: addBody(created.Data.ID, gloss, 1), status: 400},
		{name: "foreign variant id", method: "PUT", path: item, as: "creator@demo.test", status: 400,
			body: `{"name":"x","type":"DIGITAL","price":100,"variants":[{"id":"` + ids.variants["TEE-NS-01/S"] + `","name":"a","value":"b"}]}`},
		{name: "delete", method: "DELETE", path: item, as: "creator@demo.test", status: 200},
		{name: "gone", path: item, as: follower, status: 404},
		{name: "delete twice", method: "DELETE", path: item, as: "creator@demo.test", status: 404},
	})
}

// TestStorePages: the store, item and cart pages render their content in
// the HTML, and the plain forms write and redirect back (JavaScript off).
func TestStorePages(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := loadShop(t, ts)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	tee := ids.items["TEE-NS-01"]
	ts.run(t, []scenario{
		{name: "visitor", path: "/apps/demo/store", status: 200, contains: []string{"Store Access Required", "Sign In", "Sign Up"}},
		{name: "non-follower", path: "/apps/demo/store", as: outsider, status: 200,
			contains: []string{"Follow App to Access Store", `action="/apps/demo/follow"`}},
		{name: "follower", path: "/apps/demo/store?limit=5", as: follower, status: 200,
			contains: []string{"page 1 of 3", "Next", `href="/apps/demo/cart"`, "/apps/demo/orders"}, absent: []string{"New Item"}},
		{name: "filters", path: "/apps/demo/store?type=DIGITAL&min=10&max=20&inStock=true", as: follower, status: 200,
			contains: []string{"Night Shift Sample Pack", "Gouache Brush Set"}, absent: []string{"Night Shift Tour Tee", "Midnight Bloom: Digital Album"}},
		{name: "nothing found", path: "/apps/demo/store?search=zzz", as: follower, contains: []string{"No items found"}},
		{name: "bad filter", path: "/apps/demo/store?min=abc", as: follower, status: 400},
		{name: "creator sees New Item", path: "/apps/demo/store", as: "creator@demo.test", contains: []string{"New Item"}},
		{name: "store off", path: "/apps/acme/store", as: "admin@demo.test", status: 200, contains: []string{"doesn&#x27;t have a store enabled"}},
		{name: "item", path: "/apps/demo/store/items/" + tee, as: follower, status: 200,
			contains: []string{"Night Shift Tour Tee", `"@type":"Product"`, `"@type":"Offer"`, `"price":"25.00"`, "Add to Cart", `name="variantId"`}},
		{name: "item for a visitor is indexable", path: "/apps/demo/store/items/" + ids.items["VNL-MB-01"], status: 200,
			contains: []string{"Midnight Bloom: Vinyl LP", "14% off", "Only 3 left", "Store Access Required"}},
		{name: "sold out", path: "/apps/demo/store/items/" + ids.items["PRT-A3-01"], as: follower, contains: []string{"Out of stock"}},
		{name: "unknown item", path: "/apps/demo/store/items/" + store.NewID(), as: follower, status: 404,
			contains: []string{"Item Not Found", "This item could not be loaded."}},
		{name: "another app's item", path: "/apps/demo/store/items/" + ids.acmeItem, as: follower, status: 404},
		{name: "empty cart", path: "/apps/demo/cart", as: follower, status: 200, contains: []string{"Your cart is empty"}},
		{name: "add by form", method: "POST", path: "/apps/demo/cart/items", as: follower, headers: form,
			body: "storeItemId=" + tee + "&variantId=" + ids.variants["TEE-NS-01/L"] + "&quantity=2", status: 303},
		{name: "refused add by form goes to the cart with the reason", method: "POST", path: "/apps/demo/cart/items", as: follower, headers: form,
			body: "storeItemId=" + ids.items["PRT-A3-01"] + "&quantity=1", status: 303},
		{name: "cart", path: "/apps/demo/cart", as: follower, status: 200,
			contains: []string{"Night Shift Tour Tee", "Size: L", "$54.00", "Checkout", `href="/apps/demo/checkout"`}},
		{name: "visitor form post", method: "POST", path: "/apps/demo/cart/items", headers: form, body: "storeItemId=" + tee, status: 303},
		{name: "follow by form", method: "POST", path: "/apps/demo/follow", as: outsider, headers: form, status: 303},
		{name: "now a follower", path: "/apps/demo/store", as: outsider, status: 200, absent: []string{"Follow App to Access Store"}},
		{name: "item form is for managers", path: "/apps/demo/store/items/new", as: follower, status: 403},
		{name: "new item form", path: "/apps/demo/store/items/new", as: "admin@demo.test", status: 200, contains: []string{"New Item"}},
		{name: "edit item form", path: "/apps/demo/store/items/" + tee + "/edit", as: "creator@demo.test", status: 200, contains: []string{"Edit Item", "Night Shift Tour Tee"}},
	})
	// The quantity and clear forms.
	var got struct{ Data store.CartView }
	commJSON(t, ts.do(t, "GET", "/api/store/"+ids.demo+"/cart", nil, commUser(t, ts, follower)), &got)
	line := got.Data.Items[0].ID
	ts.run(t, []scenario{
		{name: "plus by form", method: "POST", path: "/apps/demo/cart/items/" + line, as: follower, headers: form, body: "quantity=3", status: 303},
		{name: "past stock by form", method: "POST", path: "/apps/demo/cart/items/" + line, as: follower, headers: form, body: "quantity=9", status: 303},
		{name: "quantity now", path: "/api/store/" + ids.demo + "/cart", as: follower, json: map[string]any{"data.items.0.quantity": 3}},
		{name: "remove by form", method: "POST", path: "/apps/demo/cart/items/" + line, as: follower, headers: form, body: "remove=1", status: 303},
		{name: "clear by form", method: "POST", path: "/apps/demo/cart/clear", as: follower, headers: form, status: 303},
		{name: "empty again", path: "/apps/demo/cart", as: follower, contains: []string{"Your cart is empty"}},
	})
}
