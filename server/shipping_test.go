package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// shippingOrder puts qty of a new PHYSICAL item at price in email's cart
// and checks out through the API with an address in country: the answer.
func (f *payFixture) shippingOrder(t *testing.T, email string, price, qty int64, country, zip string) response {
	t.Helper()
	ctx := context.Background()
	it := &store.StoreItem{ID: store.NewID(), AppID: f.shop.AppID, StoreID: f.shop.ID, Name: "Poster", Type: store.ItemPhysical,
		Price: price, Currency: "USD", Settings: "{}", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := f.ts.store.DB().NewInsert().Model(it).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// What a refused checkout left in the cart goes first.
	if err := f.ts.store.ClearCart(ctx, f.shop, f.userID(t, email)); err != nil {
		t.Fatal(err)
	}
	cart, err := f.ts.store.AddToCart(ctx, f.shop, f.userID(t, email), it.ID, nil, qty)
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]any{"cartId": cart.ID, "paymentMethod": "musepay"}
	if country != "" {
		req["shippingAddress"] = map[string]string{"firstName": "Ada", "lastName": "Lovelace", "address": "1 Main St", "city": "Town",
			"state": "ON", "zipCode": zip, "country": country}
	}
	return f.post(t, "/orders/checkout", commUser(t, f.ts, email), req)
}

func orderIDOf(t *testing.T, r response) string {
	t.Helper()
	a := decodePay(t, r)
	id, _ := a.Data["id"].(string)
	if r.Status != http.StatusCreated || id == "" {
		t.Fatalf("checkout: %d %s", r.Status, r.Body)
	}
	return id
}

// Issue 43 item 4: the order records the shipping of its address's zone
// (flat rate, per extra item, free over the threshold) in its total, and
// the wallet, a card and PayPal each take exactly that total.
func TestShippingOnEachPaymentPath(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPayFixture(t, db, nil)
		ctx := context.Background()
		const buyer = "follower@demo.test"
		as := commUser(t, f.ts, buyer)

		// No zones: shipping stays 0, any country ships (as SPEC has it).
		o := f.reload(t, orderIDOf(t, f.shippingOrder(t, buyer, 1000, 2, "FR", "75001")))
		if o.Shipping != 0 || o.Total != 2000 {
			t.Fatalf("without zones: shipping %d total %d", o.Shipping, o.Total)
		}
		if _, err := f.ts.store.TransitionOrder(ctx, f.shop.AppID, o.ID, store.OrderCancelled, store.TransitionOptions{}); err != nil {
			t.Fatal(err)
		}

		creator := f.userID(t, "creator@demo.test")
		if _, err := f.ts.store.SaveShippingZone(ctx, f.shop.AppID, creator, "", store.ShippingZoneInput{Name: "North America",
			Countries: []string{"CA", "us"}, FlatRate: 500, PerItem: 200, FreeOver: 10000}); err != nil {
			t.Fatal(err)
		}
		// A country no zone covers is refused, said clearly; a postal
		// code that is not the country's too.
		commExpect(t, "no zone", f.shippingOrder(t, buyer, 1000, 1, "FR", "75001"), 400, "This store does not ship to France")
		commExpect(t, "bad postal code", f.shippingOrder(t, buyer, 1000, 1, "CA", "12345"), 400, "12345 is not a postal code of Canada")
		// Over the threshold: free.
		free := f.reload(t, orderIDOf(t, f.shippingOrder(t, buyer, 5000, 2, "US", "94107")))
		if free.Shipping != 0 || free.Total != 10000 {
			t.Fatalf("free over $100: shipping %d total %d", free.Shipping, free.Total)
		}
		if _, err := f.ts.store.TransitionOrder(ctx, f.shop.AppID, free.ID, store.OrderCancelled, store.TransitionOptions{}); err != nil {
			t.Fatal(err)
		}

		// 3 posters at $10 to Canada: $30 + $5 + 2 × $2 = $39.
		const want, wantShipping = 3900, 900
		pay := map[string]func(id string){
			"wallet": func(id string) {
				if _, _, err := f.ts.store.CreditWallet(ctx, f.shop.AppID, f.userID(t, buyer), want, "test-shipping-"+id, "test"); err != nil {
					t.Fatal(err)
				}
				before, _ := f.ts.store.WalletBalance(ctx, f.shop.AppID, f.userID(t, buyer))
				r := f.post(t, "/musepay/process", as, map[string]any{"orderId": id})
				after, _ := f.ts.store.WalletBalance(ctx, f.shop.AppID, f.userID(t, buyer))
				if r.Status != 200 || before-after != want {
					t.Fatalf("wallet: %d %s, balance %d -> %d", r.Status, r.Body, before, after)
				}
			},
			"card": func(id string) {
				commExpect(t, "card without shipping", f.post(t, "/stripe-payments/create-intent", as, map[string]any{"amount": 3000, "orderId": id}), 400, msgAmountMismatch)
				a := decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"amount": want, "currency": "usd", "orderId": id}))
				pi, _ := a.Data["paymentIntentId"].(string)
				r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"})
				if a := decodePay(t, r); r.Status != 200 || a.Data["orderStatus"] != store.OrderPaid {
					t.Fatalf("card: %d %s", r.Status, r.Body)
				}
			},
			"paypal": func(id string) {
				r := f.post(t, "/paypal/create-order", as, map[string]any{"amount": want, "currency": "USD", "orderId": id})
				a := decodePay(t, r)
				ppid, _ := a.Data["paypalOrderId"].(string)
				if ppid == "" {
					var top struct {
						PaypalOrderID string `json:"paypalOrderId"`
						ApprovalURL   string `json:"approvalUrl"`
					}
					commJSON(t, r, &top)
					ppid = top.PaypalOrderID
					if page := f.paypalApprovalPage(t, top.ApprovalURL); !strings.Contains(page, "39.00 USD") {
						t.Fatalf("PayPal asks for: %s", page)
					}
				}
				f.approve(t, ppid)
				r = f.post(t, "/paypal/capture-order", as, map[string]any{"paypalOrderId": ppid})
				if a := decodePay(t, r); r.Status != 200 || a.Data["orderStatus"] != store.OrderPaid {
					t.Fatalf("paypal: %d %s", r.Status, r.Body)
				}
			},
		}
		for _, method := range []string{"wallet", "card", "paypal"} {
			id := orderIDOf(t, f.shippingOrder(t, buyer, 1000, 3, "CA", "K1A 0B1"))
			o := f.reload(t, id)
			if o.Shipping != wantShipping || o.Subtotal != 3000 || o.Total != want {
				t.Fatalf("%s: order subtotal %d shipping %d total %d", method, o.Subtotal, o.Shipping, o.Total)
			}
			pay[method](id)
			o = f.reload(t, id)
			if o.Status != store.OrderPaid || o.Shipping != wantShipping || o.Total != want {
				t.Fatalf("%s: paid order %s shipping %d total %d", method, o.Status, o.Shipping, o.Total)
			}
			// The order answers its shipping line (SPEC's summary).
			view := f.ts.do(t, "GET", "/api/store/"+f.shop.ID+"/orders/"+id, nil, as)
			if !strings.Contains(view.Body, `"shipping":900`) || !strings.Contains(view.Body, `"total":3900`) {
				t.Fatalf("%s: order view %s", method, view.Body)
			}
			page := f.ts.do(t, "GET", "/apps/demo/orders/"+id, nil, as)
			if !strings.Contains(page.Body, `<dd class="shipping-amount">$9.00</dd>`) {
				t.Fatalf("%s: order page has no $9.00 shipping line", method)
			}
		}
		// The card intent and the PayPal order were for the total with
		// shipping.
		if evs := f.stripe.Events(); len(evs) == 0 || !strings.Contains(string(evs[len(evs)-1].Payload), `"amount":3900`) {
			t.Fatalf("stripe intent amount: %v", evs)
		}
	})
}

// The shipping step without JavaScript: it lists each zone's rate for the
// order, offers only the zones' countries, comes back as typed when the
// postal code is refused, and the payment step's summary holds the rate.
func TestCheckoutShowsShippingRate(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	ctx := context.Background()
	creator := f.userID(t, "creator@demo.test")
	if _, err := f.ts.store.SaveShippingZone(ctx, f.shop.AppID, creator, "", store.ShippingZoneInput{Name: "Canada",
		Countries: []string{"CA"}, FlatRate: 1250, PerItem: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ts.store.SaveShippingZone(ctx, f.shop.AppID, creator, "", store.ShippingZoneInput{Name: "Europe",
		Countries: []string{"DE", "FR"}, FlatRate: 2000, FreeOver: 1000}); err != nil {
		t.Fatal(err)
	}
	const buyer = "follower@demo.test"
	o := f.reload(t, orderIDOf(t, f.shippingOrder(t, buyer, 800, 1, "", "")))
	if o.ShippingAddress != "" || o.Shipping != 0 || o.Total != 800 {
		t.Fatalf("before the shipping step: %+v", o)
	}
	h := form(withSession(sessionFor(t, f.ts, buyer)))
	step := f.ts.do(t, "GET", "/apps/demo/checkout?orderId="+o.ID+"&step=shipping", nil, h)
	for _, want := range []string{"Shipping for this order", "Canada: $12.50", "Europe: $20.00", "France, Germany",
		`<option value="CA" selected="">Canada</option>`, `<option value="DE">Germany</option>`} {
		if !strings.Contains(step.Body, want) {
			t.Errorf("shipping step lacks %q", want)
		}
	}
	if strings.Contains(step.Body, `<option value="US"`) {
		t.Error("the shipping step offers a country no zone covers")
	}
	typed := url.Values{"orderId": {o.ID}, "firstName": {"Ada"}, "lastName": {"L"}, "address": {"9 Rue X"}, "city": {"Paris"},
		"state": {"IDF"}, "zipCode": {"7500"}, "country": {"FR"}}
	r := f.ts.do(t, "POST", "/apps/demo/checkout/shipping", strings.NewReader(typed.Encode()), h)
	if r.Status != 400 || !strings.Contains(r.Body, "7500 is not a postal code of France") || !strings.Contains(r.Body, `value="9 Rue X"`) ||
		!strings.Contains(r.Body, `<option value="FR" selected="">France</option>`) {
		t.Fatalf("refused address: %d (as typed? %t)", r.Status, strings.Contains(r.Body, "9 Rue X"))
	}
	typed.Set("zipCode", "75001")
	r = f.ts.do(t, "POST", "/apps/demo/checkout/shipping", strings.NewReader(typed.Encode()), h)
	if r.Status != http.StatusSeeOther || !strings.HasSuffix(r.Header.Get("Location"), "&step=payment") {
		t.Fatalf("address: %d %s", r.Status, r.Header.Get("Location"))
	}
	got := f.reload(t, o.ID)
	if got.Shipping != 2000 || got.Total != 2800 {
		t.Fatalf("after the address: shipping %d total %d", got.Shipping, got.Total)
	}
	pay := f.ts.do(t, "GET", "/apps/demo/checkout?orderId="+o.ID+"&step=payment", nil, h)
	if !strings.Contains(pay.Body, `<dd class="shipping-amount">$20.00</dd>`) || !strings.Contains(pay.Body, "$28.00") {
		t.Fatal("the payment step does not show the $20.00 rate and the $28.00 total")
	}
}

// The studio's shipping screen, without JavaScript: add a zone, refuse a
// country another zone holds (the form comes back as typed), edit, delete;
// 60 concurrent adds of the same country make one zone; fans are refused.
func TestStudioShippingScreen(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	creator := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	page := ts.do(t, "GET", "/apps/demo/studio/shipping", nil, creator)
	if page.Status != 200 || !strings.Contains(page.Body, "No zones yet: shipping is free") || !strings.Contains(page.Body, `<option value="NZ">New Zealand</option>`) ||
		!strings.Contains(page.Body, `href="/apps/demo/studio/shipping"`) {
		t.Fatalf("empty screen: %d", page.Status)
	}
	add := url.Values{"name": {"Home"}, "countries": {"US", "CA"}, "flatRate": {"5"}, "perItem": {"1.50"}, "freeOver": {"75"}}
	r := ts.do(t, "POST", "/apps/demo/studio/shipping", strings.NewReader(add.Encode()), creator)
	if r.Status != http.StatusSeeOther || !strings.HasSuffix(r.Header.Get("Location"), "/studio/shipping?notice=zone-saved") {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	zones, _ := ts.store.ShippingZones(ctx, demo.ID)
	if len(zones) != 1 || zones[0].FlatRate != 500 || zones[0].PerItem != 150 || zones[0].FreeOver != 7500 || strings.Join(zones[0].Countries, ",") != "CA,US" {
		t.Fatalf("zones: %+v", zones)
	}
	page = ts.do(t, "GET", "/apps/demo/studio/shipping", nil, creator)
	if !strings.Contains(page.Body, "$5.00 per order, $1.50 per extra item, free over $75.00") || !strings.Contains(page.Body, "Canada, United States") {
		t.Fatal("the screen does not list the zone")
	}
	// Canada is taken: refused, the form as typed.
	taken := url.Values{"name": {"Far away"}, "countries": {"CA", "AU"}, "flatRate": {"20"}}
	r = ts.do(t, "POST", "/apps/demo/studio/shipping", strings.NewReader(taken.Encode()), creator)
	if r.Status != 400 || !strings.Contains(r.Body, "Canada is in the zone Home already") || !strings.Contains(r.Body, `value="Far away"`) {
		t.Fatalf("taken country: %d", r.Status)
	}
	bad := url.Values{"name": {"X"}, "countries": {"AU"}, "flatRate": {"five"}}
	if r = ts.do(t, "POST", "/apps/demo/studio/shipping", strings.NewReader(bad.Encode()), creator); r.Status != 400 || !strings.Contains(r.Body, "Enter dollars") {
		t.Fatalf("bad amount: %d", r.Status)
	}
	// Edit: the zone keeps its id, loses Canada.
	edit := url.Values{"name": {"USA"}, "countries": {"US"}, "flatRate": {"4"}}
	if r = ts.do(t, "POST", "/apps/demo/studio/shipping/"+zones[0].ID, strings.NewReader(edit.Encode()), creator); r.Status != http.StatusSeeOther {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	zones, _ = ts.store.ShippingZones(ctx, demo.ID)
	if len(zones) != 1 || zones[0].Name != "USA" || zones[0].FlatRate != 400 || zones[0].FreeOver != 0 || strings.Join(zones[0].Countries, ",") != "US" {
		t.Fatalf("edited: %+v", zones)
	}
	// 60 concurrent adds claiming Canada: one zone holds it.
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := url.Values{"name": {"Canada " + string(rune('A'+i%26))}, "countries": {"CA"}, "flatRate": {"9"}}
			r := ts.do(t, "POST", "/apps/demo/studio/shipping", strings.NewReader(v.Encode()), creator)
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	zones, _ = ts.store.ShippingZones(ctx, demo.ID)
	if statuses[http.StatusSeeOther] != 1 || statuses[400] != 59 || len(zones) != 2 {
		t.Fatalf("60 adds of Canada: %v, %d zones", statuses, len(zones))
	}
	// Delete.
	if r = ts.do(t, "POST", "/apps/demo/studio/shipping/"+zones[0].ID+"/delete", strings.NewReader(""), creator); r.Status != http.StatusSeeOther {
		t.Fatalf("delete: %d", r.Status)
	}
	if zones, _ = ts.store.ShippingZones(ctx, demo.ID); len(zones) != 1 {
		t.Fatalf("after delete: %d zones", len(zones))
	}
	n, _ := ts.store.DB().NewSelect().Model((*store.ModerationEntry)(nil)).Where("app_id = ? AND action = ?", demo.ID, store.ActionShippingSettings).Count(ctx)
	if n != 4 {
		t.Fatalf("%d audit lines, want 4 (add, edit, add, delete)", n)
	}
	// A fan may neither see nor change the zones.
	fan := form(withSession(sessionFor(t, ts, "follower@demo.test")))
	if r = ts.do(t, "GET", "/apps/demo/studio/shipping", nil, fan); r.Status != 403 {
		t.Fatalf("fan sees the screen: %d", r.Status)
	}
	if r = ts.do(t, "POST", "/apps/demo/studio/shipping", strings.NewReader(add.Encode()), fan); r.Status != 403 {
		t.Fatalf("fan adds a zone: %d", r.Status)
	}
	// The JSON calls.
	api := commUser(t, ts, "creator@demo.test")
	r = ts.do(t, "POST", "/api/studio/apps/"+demo.ID+"/shipping-zones", body(map[string]any{"name": "Oceania", "countries": []string{"AU", "NZ"}, "flatRate": 1500}), api)
	if r.Status != 201 || !strings.Contains(r.Body, `"countries":["AU","NZ"]`) {
		t.Fatalf("api add: %d %s", r.Status, r.Body)
	}
	r = ts.do(t, "POST", "/api/studio/apps/"+demo.ID+"/shipping-zones", body(map[string]any{"name": "X", "countries": []string{"NZ"}}), api)
	commExpect(t, "api taken", r, 400, "New Zealand is in the zone Oceania already")
	r = ts.do(t, "GET", "/api/studio/apps/"+demo.ID+"/shipping-zones", nil, api)
	if r.Status != 200 || !strings.Contains(r.Body, "Oceania") {
		t.Fatalf("api list: %d %s", r.Status, r.Body)
	}
	if r = ts.do(t, "GET", "/api/studio/apps/"+demo.ID+"/shipping-zones", nil, commUser(t, ts, "follower@demo.test")); r.Status != 403 {
		t.Fatalf("fan lists zones: %d", r.Status)
	}
}
