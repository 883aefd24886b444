package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

type shopFixture struct {
	s    *store.Storage
	db   *bun.DB
	shop *store.Shop
}

func newShop(t *testing.T, db *bun.DB) *shopFixture {
	t.Helper()
	s := seeded(t, db, store.NewMemoryCache())
	ctx := context.Background()
	app, err := s.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	shop := new(store.Shop)
	if err := db.NewSelect().Model(shop).Where("app_id = ?", app.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	return &shopFixture{s: s, db: db, shop: shop}
}

func (f *shopFixture) item(t *testing.T, typ string, price int64, stock *int64) *store.StoreItem {
	t.Helper()
	it := &store.StoreItem{ID: store.NewID(), AppID: f.shop.AppID, StoreID: f.shop.ID, Name: "Test " + typ, Type: typ,
		Price: price, Currency: "USD", Stock: stock, Settings: "{}", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := f.db.NewInsert().Model(it).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return it
}

func (f *shopFixture) variant(t *testing.T, it *store.StoreItem, adjust int64, stock *int64) *store.Variant {
	t.Helper()
	v := &store.Variant{ID: store.NewID(), AppID: f.shop.AppID, StoreItemID: it.ID, Name: "Size", Value: "L", PriceAdjustment: adjust, Stock: stock}
	if _, err := f.db.NewInsert().Model(v).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return v
}

func (f *shopFixture) user(t *testing.T, n int) string {
	t.Helper()
	id := store.NewID()
	u := &store.User{ID: id, Username: fmt.Sprintf("buyer%d_%s", n, id[:6]), Email: fmt.Sprintf("buyer%d_%s@test", n, id[:6]), PasswordHash: "x",
		CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := f.db.NewInsert().Model(u).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return id
}

// cart fills the user's cart and answers its id.
func (f *shopFixture) cart(t *testing.T, userID string, it *store.StoreItem, variantID *string, qty int64) string {
	t.Helper()
	c, err := f.s.AddToCart(context.Background(), f.shop, userID, it.ID, variantID, qty)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

var addr = &store.ShippingAddress{FirstName: "Ada", LastName: "Lovelace", Address: "1 Main St", City: "Portland", State: "OR", ZipCode: "97201"}

func stockOf(t *testing.T, db *bun.DB, model any, id string) int64 {
	t.Helper()
	var n int64
	if err := db.NewSelect().Model(model).Column("stock").Where("id = ?", id).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func ptrInt(n int64) *int64 { return &n }

// 200 members check out the last 10 of an item at once: exactly 10 orders,
// stock ends at 0 and never below.
func TestCheckoutNeverOversells(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	db.SetMaxOpenConns(20)
	f := newShop(t, db)
	ctx := context.Background()
	it := f.item(t, store.ItemPhysical, 1500, ptrInt(10))
	const buyers = 200
	carts := make([]string, buyers)
	users := make([]string, buyers)
	for i := range buyers {
		users[i] = f.user(t, i)
		carts[i] = f.cart(t, users[i], it, nil, 1)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	made, refused := 0, 0
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, created, err := f.s.CreateOrder(ctx, f.shop, users[i], store.CheckoutInput{CartID: carts[i], Shipping: addr, PaymentMethod: "musepay"})
			mu.Lock()
			defer mu.Unlock()
			var inv *store.ErrInvalid
			switch {
			case err == nil && created:
				made++
			case errors.As(err, &inv):
				refused++
			default:
				t.Errorf("checkout %d: created=%v err=%v", i, created, err)
			}
		}()
	}
	wg.Wait()
	if made != 10 || refused != buyers-10 {
		t.Fatalf("made %d orders, refused %d; want 10 and %d", made, refused, buyers-10)
	}
	if got := stockOf(t, db, (*store.StoreItem)(nil), it.ID); got != 0 {
		t.Fatalf("stock %d, want 0", got)
	}
	n, err := db.NewSelect().Model((*store.OrderItem)(nil)).Where("store_item_id = ?", it.ID).Count(ctx)
	if err != nil || n != 10 {
		t.Fatalf("order items %d (%v), want 10", n, err)
	}
}

// A double click, a retry, 20 of them at once: one order for the cart.
func TestCheckoutOneOrderPerCart(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		it := f.item(t, store.ItemPhysical, 1500, ptrInt(5))
		u := f.user(t, 1)
		cartID := f.cart(t, u, it, nil, 2)
		ids := make([]string, 20)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: cartID, Shipping: addr})
				if err != nil {
					t.Errorf("checkout: %v", err)
					return
				}
				ids[i] = o.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("different orders for one cart: %v", ids)
			}
		}
		n, _ := db.NewSelect().Model((*store.Order)(nil)).Where("user_id = ?", u).Count(ctx)
		if n != 1 {
			t.Fatalf("%d orders, want 1", n)
		}
		if got := stockOf(t, db, (*store.StoreItem)(nil), it.ID); got != 3 {
			t.Fatalf("stock %d, want 3 (taken once)", got)
		}
	})
}

// Totals come from stored prices: the item's price plus the variant's
// adjustment at the time of the order, whatever the cart showed before.
func TestCheckoutPricesFromStore(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		shirt := f.item(t, store.ItemPhysical, 2000, ptrInt(10))
		large := f.variant(t, shirt, 300, ptrInt(4))
		album := f.item(t, store.ItemDigital, 999, nil)
		u := f.user(t, 1)
		f.cart(t, u, shirt, &large.ID, 2)
		cartID := f.cart(t, u, album, nil, 1)
		// The creator changes the price after the member filled the cart.
		if _, err := db.NewUpdate().Model((*store.StoreItem)(nil)).Set("price = 2100").Where("id = ?", shirt.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		o, created, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: cartID, Shipping: addr, Notes: "gift"})
		if err != nil || !created {
			t.Fatalf("checkout: %v %v", created, err)
		}
		if want := int64(2*(2100+300) + 999); o.Subtotal != want || o.Total != want {
			t.Fatalf("subtotal %d total %d, want %d", o.Subtotal, o.Total, want)
		}
		if o.Status != store.OrderPending || o.OrderNumber == "" || o.ShippingAddress == "" {
			t.Fatalf("order %+v", o)
		}
		if stockOf(t, db, (*store.Variant)(nil), large.ID) != 2 || stockOf(t, db, (*store.StoreItem)(nil), shirt.ID) != 8 {
			t.Fatal("stock not taken from item and variant")
		}
		// The cart is closed: the member's cart is empty again.
		c, err := f.s.Cart(ctx, f.shop, u)
		if err != nil || len(c.Items) != 0 {
			t.Fatalf("cart after checkout: %+v %v", c, err)
		}
		// A physical order without an address is made (the shipping step
		// comes after the first), but cannot be paid until it has one.
		u2 := f.user(t, 2)
		// An item without variants: one with them is never added without one.
		plain := f.item(t, store.ItemPhysical, 2100, ptrInt(5))
		cart2 := f.cart(t, u2, plain, nil, 1)
		o2, _, err := f.s.CreateOrder(ctx, f.shop, u2, store.CheckoutInput{CartID: cart2})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.s.CreditWallet(ctx, f.shop.AppID, u2, 10000, "t:u2", ""); err != nil {
			t.Fatal(err)
		}
		var inv *store.ErrInvalid
		if _, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u2, o2.ID); !errors.As(err, &inv) {
			t.Fatalf("paid without address: %v", err)
		}
		bad := *addr
		bad.ZipCode = " "
		if _, err := f.s.SetOrderShipping(ctx, f.shop.ID, u2, o2.ID, &bad); !errors.As(err, &inv) {
			t.Fatalf("address without ZIP: %v", err)
		}
		if _, err := f.s.SetOrderShipping(ctx, f.shop.ID, u, o2.ID, addr); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("address on another member's order: %v", err)
		}
		good := *addr
		if _, err := f.s.SetOrderShipping(ctx, f.shop.ID, u2, o2.ID, &good); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u2, o2.ID); err != nil {
			t.Fatalf("pay with address: %v", err)
		}
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u2); bal != 10000-2100 {
			t.Fatalf("balance %d", bal)
		}
		// Another member's cart is not found.
		if _, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: cart2, Shipping: addr}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("foreign cart: %v", err)
		}
	})
}

// An unpaid order expires and gives back its stock, once; a paid one is
// left alone.
func TestExpireGivesStockBack(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		it := f.item(t, store.ItemPhysical, 1000, ptrInt(5))
		v := f.variant(t, it, 0, ptrInt(3))
		// The fresh order takes an untracked variant: only the item's stock.
		other := f.variant(t, it, 0, nil)
		u1, u2 := f.user(t, 1), f.user(t, 2)
		stale, _, err := f.s.CreateOrder(ctx, f.shop, u1, store.CheckoutInput{CartID: f.cart(t, u1, it, &v.ID, 2), Shipping: addr})
		if err != nil {
			t.Fatal(err)
		}
		fresh, _, err := f.s.CreateOrder(ctx, f.shop, u2, store.CheckoutInput{CartID: f.cart(t, u2, it, &other.ID, 1), Shipping: addr})
		if err != nil {
			t.Fatal(err)
		}
		if stockOf(t, db, (*store.StoreItem)(nil), it.ID) != 2 || stockOf(t, db, (*store.Variant)(nil), v.ID) != 1 {
			t.Fatal("stock not taken")
		}
		if _, err := db.NewUpdate().Model((*store.Order)(nil)).Set("created_at = ?", time.Now().Add(-31*time.Minute)).Where("id = ?", stale.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := f.s.ExpirePendingOrders(ctx, 30*time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if stockOf(t, db, (*store.StoreItem)(nil), it.ID) != 4 || stockOf(t, db, (*store.Variant)(nil), v.ID) != 3 {
			t.Fatalf("stock after expiry: item %d variant %d, want 4 and 3",
				stockOf(t, db, (*store.StoreItem)(nil), it.ID), stockOf(t, db, (*store.Variant)(nil), v.ID))
		}
		got, err := f.s.OrderOf(ctx, f.shop.ID, u1, stale.ID)
		if err != nil || got.Status != store.OrderCancelled || got.CancelledAt == nil {
			t.Fatalf("stale order: %+v %v", got, err)
		}
		got, _ = f.s.OrderOf(ctx, f.shop.ID, u2, fresh.ID)
		if got.Status != store.OrderPending {
			t.Fatalf("fresh order %s", got.Status)
		}
		// Paying an expired order is refused.
		if _, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u1, stale.ID); !errors.Is(err, store.ErrIllegalTransition) {
			t.Fatalf("pay expired: %v", err)
		}
	})
}

// Every pair of statuses: legal moves apply and set their timestamp,
// illegal ones are ErrIllegalTransition and change nothing.
func TestOrderStatusMachine(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	f := newShop(t, db)
	ctx := context.Background()
	it := f.item(t, store.ItemDigital, 500, nil)
	// path reaches each status from PENDING through legal moves.
	path := map[string][]string{
		store.OrderPending:    {},
		store.OrderPaid:       {store.OrderPaid},
		store.OrderProcessing: {store.OrderPaid, store.OrderProcessing},
		store.OrderShipped:    {store.OrderPaid, store.OrderProcessing, store.OrderShipped},
		store.OrderDelivered:  {store.OrderPaid, store.OrderProcessing, store.OrderShipped, store.OrderDelivered},
		store.OrderCancelled:  {store.OrderCancelled},
		store.OrderRefunded:   {store.OrderPaid, store.OrderRefunded},
	}
	legal := map[string]bool{
		"PENDING>PAID": true, "PENDING>CANCELLED": true, "PAID>PROCESSING": true, "PROCESSING>SHIPPED": true,
		"SHIPPED>DELIVERED": true, "PAID>REFUNDED": true, "PROCESSING>REFUNDED": true, "SHIPPED>REFUNDED": true,
		"DELIVERED>REFUNDED": true,
	}
	n := 0
	for _, from := range store.OrderStatuses {
		for _, to := range store.OrderStatuses {
			n++
			u := f.user(t, n)
			o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: f.cart(t, u, it, nil, 1)})
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range path[from] {
				if _, err := f.s.TransitionOrder(ctx, f.shop.AppID, o.ID, st, store.TransitionOptions{TrackingNumber: "1Z999"}); err != nil {
					t.Fatalf("reach %s via %s: %v", from, st, err)
				}
			}
			got, err := f.s.TransitionOrder(ctx, f.shop.AppID, o.ID, to, store.TransitionOptions{TrackingNumber: "1Z999", RefundReason: "damaged"})
			key := from + ">" + to
			if legal[key] != store.CanTransition(from, to) {
				t.Fatalf("%s: machine says %v", key, store.CanTransition(from, to))
			}
			if !legal[key] {
				if !errors.Is(err, store.ErrIllegalTransition) {
					t.Fatalf("%s: want ErrIllegalTransition, got %v", key, err)
				}
				now, _ := f.s.OrderOf(ctx, f.shop.ID, "", o.ID)
				if now.Status != from {
					t.Fatalf("%s: status changed to %s", key, now.Status)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			stamp := map[string]*time.Time{store.OrderPaid: got.PaidAt, store.OrderShipped: got.ShippedAt,
				store.OrderDelivered: got.DeliveredAt, store.OrderCancelled: got.CancelledAt, store.OrderRefunded: got.RefundedAt}
			if ts, ok := stamp[to]; ok && ts == nil {
				t.Fatalf("%s: timestamp not set", key)
			}
			stored, _ := f.s.OrderOf(ctx, f.shop.ID, "", o.ID)
			if stored.Status != to {
				t.Fatalf("%s: stored %s", key, stored.Status)
			}
			if to == store.OrderShipped && stored.TrackingNumber != "1Z999" {
				t.Fatalf("tracking number %q", stored.TrackingNumber)
			}
			if to == store.OrderRefunded && stored.RefundReason != "damaged" {
				t.Fatalf("refund reason %q", stored.RefundReason)
			}
		}
	}
}

// 50 concurrent payments from one wallet holding enough for 7: exactly 7
// orders are paid, the balance ends at 0 and never went below.
func TestWalletNeverBelowZero(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	db.SetMaxOpenConns(20)
	f := newShop(t, db)
	ctx := context.Background()
	it := f.item(t, store.ItemDigital, 300, nil)
	u := f.user(t, 1)
	if _, _, err := f.s.CreditWallet(ctx, f.shop.AppID, u, 2100, "test:credit", "top-up"); err != nil {
		t.Fatal(err)
	}
	orders := make([]string, 50)
	for i := range orders {
		o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: f.cart(t, u, it, nil, 1)})
		if err != nil {
			t.Fatal(err)
		}
		orders[i] = o.ID
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	paid, declined := 0, 0
	for _, id := range orders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u, id)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				paid++
			case errors.Is(err, store.ErrInsufficientFunds):
				declined++
			default:
				t.Errorf("pay: %v", err)
			}
		}()
	}
	wg.Wait()
	if paid != 7 || declined != 43 {
		t.Fatalf("paid %d declined %d, want 7 and 43", paid, declined)
	}
	bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u)
	if bal != 0 {
		t.Fatalf("balance %d", bal)
	}
	var negative int
	if err := db.NewSelect().Model((*store.WalletEntry)(nil)).ColumnExpr("count(*)").Where("balance_after < 0 AND account_id IN (SELECT id FROM wallet_accounts WHERE kind <> 'EXTERNAL')").Scan(ctx, &negative); err != nil || negative != 0 {
		t.Fatalf("negative balances recorded: %d %v", negative, err)
	}
	// Double entry: the app's revenue is what the member paid.
	var sum int64
	if err := db.NewSelect().Model((*store.WalletEntry)(nil)).ColumnExpr("coalesce(sum(amount), 0)").Where("app_id = ?", f.shop.AppID).Scan(ctx, &sum); err != nil || sum != 0 {
		t.Fatalf("entries sum to %d (%v), want 0", sum, err)
	}
	var paidOrders int64
	paidOrders, _ = db.NewSelect().Model((*store.Order)(nil)).Where("user_id = ? AND status = ?", u, store.OrderPaid).Count(ctx)
	if paidOrders != 7 {
		t.Fatalf("%d paid orders", paidOrders)
	}
}

// Credits are idempotent by reference; paying twice charges once; a refund
// puts the money back; a DIGITAL item grants its download on PAID and loses
// it on REFUNDED.
func TestWalletLedger(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		u := f.user(t, 1)
		for range 3 {
			if _, _, err := f.s.CreditWallet(ctx, f.shop.AppID, u, 5000, "seed:1", "welcome"); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := f.s.CreditWallet(ctx, f.shop.AppID, u, 1, "seed:1", "other"); !errors.Is(err, store.ErrReferenceReused) {
			t.Fatalf("reused reference: %v", err)
		}
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != 5000 {
			t.Fatalf("balance %d after repeated credit", bal)
		}
		album := f.item(t, store.ItemDigital, 999, nil)
		o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: f.cart(t, u, album, nil, 1)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); ok {
			t.Fatal("download before paying")
		}
		for range 2 {
			if _, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u, o.ID); err != nil {
				t.Fatal(err)
			}
		}
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != 5000-999 {
			t.Fatalf("balance %d after paying twice", bal)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); !ok {
			t.Fatal("no download after paying")
		}
		view, err := f.s.OrderOf(ctx, f.shop.ID, u, o.ID)
		if err != nil || view.Status != store.OrderPaid || view.PaymentMethod != "musepay" {
			t.Fatalf("paid order %+v %v", view, err)
		}
		if _, err := f.s.RefundOrder(ctx, f.shop.AppID, o.ID, "changed mind"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.RefundOrder(ctx, f.shop.AppID, o.ID, "again"); !errors.Is(err, store.ErrIllegalTransition) {
			t.Fatalf("second refund: %v", err)
		}
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != 5000 {
			t.Fatalf("balance %d after refund", bal)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); ok {
			t.Fatal("download kept after refund")
		}
		w, _, err := f.s.Wallet(ctx, f.shop.AppID, u, 1, 20)
		if err != nil || len(w.Movements) != 3 || w.Movements[0].Kind != store.TransferRefund || w.Movements[0].Amount != 999 ||
			w.Movements[1].Amount != -999 || w.Movements[2].BalanceAfter != 5000 {
			t.Fatalf("movements %+v %v", w, err)
		}
	})
}

// Paid effects run inside the PAID transition: when one fails (here the
// download grant, its table gone), the order stays PENDING and the wallet is
// not charged; once it can succeed, paying grants the download.
func TestOrderEffectFailureKeepsOrderPending(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	f := newShop(t, db)
	ctx := context.Background()
	album := f.item(t, store.ItemDigital, 0, nil)
	u := f.user(t, 1)
	o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: f.cart(t, u, album, nil, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ALTER TABLE entitlements RENAME TO entitlements_away"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u, o.ID); err == nil {
		t.Fatal("a failing effect did not stop the payment")
	}
	if _, err := db.ExecContext(ctx, "ALTER TABLE entitlements_away RENAME TO entitlements"); err != nil {
		t.Fatal(err)
	}
	if v, err := f.s.OrderOf(ctx, f.shop.ID, u, o.ID); err != nil || v.Status != store.OrderPending {
		t.Fatalf("order after a failed effect: %+v %v", v, err)
	}
	if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); ok {
		t.Fatal("download granted before the order was paid")
	}
	if _, err := f.s.PayOrderFromWallet(ctx, f.shop.AppID, u, o.ID); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); !ok {
		t.Fatal("no download after paying")
	}
}

// MarkOrderPaid is how card and PayPal providers (and their webhooks)
// report money: only the exact total pays a PENDING order, and the same
// report again changes nothing.
func TestMarkOrderPaidFromProvider(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newShop(t, db)
		ctx := context.Background()
		album := f.item(t, store.ItemDigital, 999, nil)
		u := f.user(t, 1)
		o, _, err := f.s.CreateOrder(ctx, f.shop, u, store.CheckoutInput{CartID: f.cart(t, u, album, nil, 1), PaymentMethod: "stripe"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.MarkOrderPaid(ctx, o.ID, "stripe", "pi_1", 1); !errors.Is(err, store.ErrAmountMismatch) {
			t.Fatalf("wrong amount: %v", err)
		}
		for range 3 { // the confirm call, then the webhook twice
			got, err := f.s.MarkOrderPaid(ctx, o.ID, "stripe", "pi_1", 999)
			if err != nil || got.Status != store.OrderPaid || got.PaymentRef != "pi_1" {
				t.Fatalf("paid: %+v %v", got, err)
			}
		}
		if _, err := f.s.MarkOrderPaid(ctx, o.ID, "stripe", "pi_2", 999); !errors.Is(err, store.ErrIllegalTransition) {
			t.Fatalf("a second, different payment: %v", err)
		}
		if ok, _ := f.s.HasDownload(ctx, f.shop.AppID, u, album.ID); !ok {
			t.Fatal("no download after a provider payment")
		}
		// A refund of a non-wallet order moves no wallet money.
		if _, err := f.s.RefundOrder(ctx, f.shop.AppID, o.ID, "duplicate"); err != nil {
			t.Fatal(err)
		}
		if bal, _ := f.s.WalletBalance(ctx, f.shop.AppID, u); bal != 0 {
			t.Fatalf("wallet %d after a card refund", bal)
		}
	})
}
