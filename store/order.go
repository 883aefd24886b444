package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

type Order struct {
	bun.BaseModel `bun:"table:orders"`

	ID          string `bun:",pk" json:"id"`
	AppID       string `bun:",notnull" json:"appId"`
	StoreID     string `bun:",notnull" json:"storeId"`
	UserID      string `bun:",notnull" json:"userId"`
	OrderNumber string `bun:",notnull,unique" json:"orderNumber"`
	Status      string `bun:",notnull" json:"status" tstype:"OrderStatus"`
	Subtotal    int64  `bun:",notnull" json:"subtotal"`
	PlatformFee int64  `bun:",notnull,default:0" json:"platformFee"`
	// Shipping is what the order pays to ship its physical items to its
	// address (the app's shipping zones, shipping.go); part of Total.
	Shipping      int64  `bun:",notnull,default:0" json:"shipping"`
	Total         int64  `bun:",notnull" json:"total"`
	Currency      string `bun:",notnull,default:'USD'" json:"currency"`
	PaymentMethod string `bun:",notnull,default:''" json:"paymentMethod"`
	PaymentRef    string `bun:",notnull,default:''" json:"-"`
	// CartID is unique: the cart an order was made from is its idempotency
	// key (migration 20261123110001).
	CartID          *string `json:"-"`
	ShippingAddress string  `bun:",notnull,default:''" json:"shippingAddress"`
	Notes           string  `bun:",notnull,default:''" json:"notes"`
	TrackingNumber  string  `bun:",notnull,default:''" json:"trackingNumber"`
	RefundReason    string  `bun:",notnull,default:''" json:"refundReason"`
	// RefundedAmount is the money given back so far (order_refund.go): less
	// than the total leaves the status as it was, the total is REFUNDED.
	RefundedAmount int64      `bun:",notnull,default:0" json:"refundedAmount"`
	CreatedAt      time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt      time.Time  `bun:",notnull,default:current_timestamp" json:"updatedAt"`
	ShippedAt      *time.Time `json:"shippedAt"`
	DeliveredAt    *time.Time `json:"deliveredAt"`
	CancelledAt    *time.Time `json:"cancelledAt"`
	RefundedAt     *time.Time `json:"refundedAt"`
	PaidAt         *time.Time `json:"paidAt"`
}

type OrderItem struct {
	bun.BaseModel `bun:"table:order_items"`

	ID            string  `bun:",pk" json:"id"`
	AppID         string  `bun:",notnull" json:"-"`
	OrderID       string  `bun:",notnull" json:"orderId"`
	StoreItemID   string  `bun:",notnull" json:"storeItemId"`
	VariantID     *string `json:"variantId"`
	Name          string  `bun:",notnull" json:"name"`
	Type          string  `bun:",notnull" json:"type"`
	Quantity      int64   `bun:",notnull" json:"quantity"`
	Price         int64   `bun:",notnull" json:"price"`
	Currency      string  `bun:",notnull,default:'USD'" json:"currency"`
	CustomOptions string  `bun:",notnull,default:'{}'" json:"customOptions"`
	// Whether checkout took stock from the item and the variant: a cancel
	// gives back exactly that.
	ItemStockTaken    bool `bun:",notnull,default:false" json:"-"`
	VariantStockTaken bool `bun:",notnull,default:false" json:"-"`
}

// Order statuses (SPEC.md section 4).
const (
	OrderPending    = "PENDING"
	OrderPaid       = "PAID"
	OrderProcessing = "PROCESSING"
	OrderShipped    = "SHIPPED"
	OrderDelivered  = "DELIVERED"
	OrderCancelled  = "CANCELLED"
	OrderRefunded   = "REFUNDED"

	// CartCheckedOut: the cart became an order and is no longer the member's
	// active cart; the order's cart_id points back at it.
	CartCheckedOut = "CHECKED_OUT"

	// DefaultOrderExpiry is how long an unpaid order holds its stock.
	DefaultOrderExpiry = 30 * time.Minute
)

// OrderStatuses in the order of the machine, for filters and labels.
var OrderStatuses = []string{OrderPending, OrderPaid, OrderProcessing, OrderShipped, OrderDelivered, OrderCancelled, OrderRefunded}

// orderMachine is the one place the legal transitions are written down:
// PENDING -> PAID -> PROCESSING -> SHIPPED -> DELIVERED; PENDING ->
// CANCELLED; PAID, PROCESSING, SHIPPED and DELIVERED -> REFUNDED.
var orderMachine = map[string][]string{
	OrderPending:    {OrderPaid, OrderCancelled},
	OrderPaid:       {OrderProcessing, OrderRefunded},
	OrderProcessing: {OrderShipped, OrderRefunded},
	OrderShipped:    {OrderDelivered, OrderRefunded},
	OrderDelivered:  {OrderRefunded},
}

// ErrIllegalTransition: the order is not in a status the requested one may
// follow (the server answers 409).
var ErrIllegalTransition = errors.New("illegal order status transition")

// CanTransition reports whether to may follow from.
func CanTransition(from, to string) bool {
	for _, t := range orderMachine[from] {
		if t == to {
			return true
		}
	}
	return false
}

// NextStatuses lists what may follow from, for the fulfilment screen.
func NextStatuses(from string) []string {
	return append([]string{}, orderMachine[from]...)
}

// FulfilmentMoves is NextStatuses for an order with (shipped) or without
// physical items: one without never goes to PROCESSING, SHIPPED or
// DELIVERED.
func FulfilmentMoves(from string, shipped bool) []string {
	next := NextStatuses(from)
	if shipped {
		return next
	}
	out := next[:0]
	for _, to := range next {
		if to != OrderProcessing && to != OrderShipped && to != OrderDelivered {
			out = append(out, to)
		}
	}
	return out
}

// ShippingAddress is the shipping step of checkout (SPEC.md section 5). It
// is stored on the order as JSON text.
type ShippingAddress struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Address   string `json:"address"`
	City      string `json:"city"`
	State     string `json:"state"`
	ZipCode   string `json:"zipCode"`
	Country   string `json:"country"`
	Phone     string `json:"phone,omitempty"`
}

// Normalize trims every field, upper-cases the country and defaults it to
// US; "UK", which the shipping step offered before the full list, is GB.
func (a *ShippingAddress) Normalize() {
	for _, f := range []*string{&a.FirstName, &a.LastName, &a.Address, &a.City, &a.State, &a.ZipCode, &a.Country, &a.Phone} {
		*f = strings.TrimSpace(*f)
	}
	a.Country = strings.ToUpper(a.Country)
	if a.Country == "" {
		a.Country = "US"
	}
	if a.Country == "UK" {
		a.Country = "GB"
	}
	if HasPostcodes(a.Country) {
		a.ZipCode = strings.ToUpper(a.ZipCode)
	}
}

// Validate answers the first rule of SPEC.md section 5 the address breaks.
// The country is any of ISO 3166-1 (Countries); the postal code must fit
// the country's pattern where the validator knows one (HasPostcodes), and
// may be left out elsewhere (many of those countries have none).
func (a *ShippingAddress) Validate() error {
	required := []struct{ v, name, field string }{
		{a.FirstName, "First name", "firstName"}, {a.LastName, "Last name", "lastName"}, {a.Address, "Address", "address"},
		{a.City, "City", "city"}, {a.State, "State", "state"}, {a.ZipCode, "ZIP code", "zipCode"},
	}
	for _, r := range required {
		if r.v == "" && (r.field != "zipCode" || HasPostcodes(a.Country)) {
			return &ErrInvalid{Msg: r.name + " is required", Field: r.field}
		}
		if len(r.v) > 200 {
			return &ErrInvalid{Msg: r.name + " is too long", Field: r.field}
		}
	}
	name := CountryName(a.Country)
	if name == "" {
		return &ErrInvalid{Msg: "Choose a country from the list", Field: "country"}
	}
	if !ValidPostcode(a.Country, a.ZipCode) {
		return &ErrInvalid{Msg: a.ZipCode + " is not a postal code of " + name, Field: "zipCode"}
	}
	if len(a.Phone) > 40 {
		return &ErrInvalid{Msg: "Phone is too long", Field: "phone"}
	}
	return nil
}

// CheckoutInput is what POST .../orders/checkout sends besides the cart.
// Amounts are never part of it: totals come from stored prices.
type CheckoutInput struct {
	CartID        string
	Shipping      *ShippingAddress
	Notes         string
	PaymentMethod string
}

// newOrderNumber is short enough to read out on the phone and random enough
// (32^8) that the unique index practically never refuses one.
func newOrderNumber(now time.Time) string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "ORD-" + now.Format("060102") + "-" + string(b[:])
}

// CreateOrder turns the member's cart into a PENDING order in one
// transaction: prices are copied from the stored items and variants, stock is
// taken with conditional updates (never below zero), and the cart is closed.
// The cart is the idempotency key: a second call for the same cart (double
// click, retry after a lost answer) returns the order the first one made,
// with created false.
func (s *Storage) CreateOrder(ctx context.Context, shop *Shop, userID string, in CheckoutInput) (*Order, bool, error) {
	var order *Order
	created := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		created = false
		if tx.Dialect().Name() == dialect.SQLite {
			if _, err := tx.ExecContext(ctx, "UPDATE carts SET status = status WHERE 0"); err != nil {
				return fmt.Errorf("lock cart: %w", err)
			}
		}
		cart := new(Cart)
		q := tx.NewSelect().Model(cart).Where("id = ? AND store_id = ? AND user_id = ?", in.CartID, shop.ID, userID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "cart"); err != nil {
			return err
		}
		if cart.Status != CartActive {
			existing := new(Order)
			err := selectOne(ctx, tx.NewSelect().Model(existing).Where("cart_id = ? AND user_id = ?", cart.ID, userID), "order")
			if errors.Is(err, ErrNotFound) {
				return invalid("Your cart is empty")
			}
			order = existing
			return err
		}
		var lines []CartItem
		if err := tx.NewSelect().Model(&lines).Where("cart_id = ?", cart.ID).Order("created_at ASC", "id ASC").Scan(ctx); err != nil {
			return fmt.Errorf("load cart lines: %w", err)
		}
		if len(lines) == 0 {
			return invalid("Your cart is empty")
		}
		sort.SliceStable(lines, func(i, j int) bool {
			a, b := lines[i], lines[j]
			if a.StoreItemID != b.StoreItemID {
				return a.StoreItemID < b.StoreItemID
			}
			return derefOr(a.VariantID) < derefOr(b.VariantID)
		})
		now := time.Now().UTC()
		order = &Order{ID: NewID(), AppID: shop.AppID, StoreID: shop.ID, UserID: userID, OrderNumber: newOrderNumber(now),
			Status: OrderPending, Currency: shop.Currency, PaymentMethod: in.PaymentMethod, Notes: in.Notes,
			CartID: &cart.ID, CreatedAt: now, UpdatedAt: now}
		if order.Currency == "" {
			order.Currency = "USD"
		}
		items := make([]OrderItem, 0, len(lines))
		physical := false
		for _, l := range lines {
			oi, err := takeLine(ctx, tx, shop, order, l)
			if err != nil {
				return err
			}
			physical = physical || oi.Type == ItemPhysical
			order.Subtotal += oi.Price * oi.Quantity
			items = append(items, *oi)
		}
		// The address may come now or in the shipping step that follows
		// (SetOrderShipping); paying needs it (ReadyToPay).
		if physical && in.Shipping != nil {
			in.Shipping.Normalize()
			if err := in.Shipping.Validate(); err != nil {
				return err
			}
			b, _ := json.Marshal(in.Shipping)
			order.ShippingAddress = string(b)
			rate, err := shippingFor(ctx, tx, shop.AppID, in.Shipping.Country, physicalOf(items), order.Subtotal)
			if err != nil {
				return err
			}
			order.Shipping = rate
		}
		order.Total = order.Subtotal + order.Shipping + order.PlatformFee
		if _, err := tx.NewInsert().Model(order).Exec(ctx); err != nil {
			return fmt.Errorf("create order: %w", err)
		}
		if _, err := tx.NewInsert().Model(&items).Exec(ctx); err != nil {
			return fmt.Errorf("create order items: %w", err)
		}
		res, err := tx.NewUpdate().Model((*Cart)(nil)).Set("status = ?", CartCheckedOut).Set("updated_at = ?", now).
			Where("id = ? AND status = ?", cart.ID, CartActive).Exec(ctx)
		if err != nil {
			return fmt.Errorf("close cart: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("close cart: %w", errCartRace)
		}
		created = true
		return nil
	})
	if errors.Is(err, errCartRace) || isUniqueViolation(err) {
		// Another request closed this cart first (SQLite without row
		// locks, or the unique index on orders.cart_id): answer its order.
		existing := new(Order)
		if e := selectOne(ctx, s.db.NewSelect().Model(existing).Where("cart_id = ? AND user_id = ?", in.CartID, userID), "order"); e == nil {
			return existing, false, nil
		}
	}
	if err != nil {
		return nil, false, err
	}
	if created {
		// The checkout took stock: the store's cached pages show it.
		s.InvalidateApp(ctx, shop.AppID)
	}
	return order, created, nil
}

func derefOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

var errCartRace = errors.New("cart closed by another request")

// isUniqueViolation recognises PostgreSQL's 23505 and SQLite's UNIQUE
// constraint failure without importing either driver's error type.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "23505") || strings.Contains(msg, "UNIQUE constraint failed")
}

// takeLine prices one cart line from the stored item and variant and takes
// its stock. The stock updates are conditional: of many concurrent
// checkouts only those that find enough stock succeed.
func takeLine(ctx context.Context, tx bun.Tx, shop *Shop, order *Order, l CartItem) (*OrderItem, error) {
	it := new(StoreItem)
	err := selectOne(ctx, tx.NewSelect().Model(it).Where("id = ? AND store_id = ?", l.StoreItemID, shop.ID), "item")
	if errors.Is(err, ErrNotFound) || (err == nil && it.DeletedAt != nil) {
		return nil, invalid("An item in your cart is no longer available")
	}
	if err != nil {
		return nil, err
	}
	if it.Type == ItemSubscription && l.Quantity > 1 {
		return nil, invalid("Subscriptions can only be added once")
	}
	if it.Type == ItemSubscription {
		// A tier gone to draft (or archived) since it was put in the cart.
		if _, err := tierOnSale(ctx, tx, shop.AppID, it.ID); errors.Is(err, ErrNotFound) {
			return nil, invalid("An item in your cart is no longer available")
		} else if err != nil {
			return nil, err
		}
	}
	oi := &OrderItem{ID: NewID(), AppID: shop.AppID, OrderID: order.ID, StoreItemID: it.ID, VariantID: l.VariantID,
		Name: it.Name, Type: it.Type, Quantity: l.Quantity, Price: it.Price, Currency: it.Currency, CustomOptions: "{}"}
	variantTracked := false
	if l.VariantID != nil {
		v := new(Variant)
		err := selectOne(ctx, tx.NewSelect().Model(v).Where("id = ? AND store_item_id = ?", *l.VariantID, it.ID), "variant")
		if errors.Is(err, ErrNotFound) || (err == nil && v.DeletedAt != nil) {
			return nil, invalid("An option of " + it.Name + " is no longer available")
		}
		if err != nil {
			return nil, err
		}
		oi.Price += v.PriceAdjustment
		b, _ := json.Marshal(map[string]string{v.Name: v.Value})
		oi.CustomOptions = string(b)
		variantTracked = v.Stock != nil
	} else if err := requireNoVariants(ctx, tx, it); err != nil {
		// A line added before variants were required (or before the item
		// got them) does not become an order without its size.
		return nil, err
	}
	if oi.Price < 0 {
		oi.Price = 0
	}
	if it.Stock != nil {
		res, err := tx.NewUpdate().Model((*StoreItem)(nil)).Set("stock = stock - ?", l.Quantity).
			Where("id = ? AND stock IS NOT NULL AND stock >= ?", it.ID, l.Quantity).Exec(ctx)
		if err != nil {
			return nil, fmt.Errorf("take item stock: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil, outOfStock(it.Name)
		}
		oi.ItemStockTaken = true
	}
	// The item's row before the variant's, and lines sorted by item and
	// variant: every checkout locks rows in the same order, so two never
	// wait on each other.
	if variantTracked {
		res, err := tx.NewUpdate().Model((*Variant)(nil)).Set("stock = stock - ?", l.Quantity).
			Where("id = ? AND stock IS NOT NULL AND stock >= ?", *l.VariantID, l.Quantity).Exec(ctx)
		if err != nil {
			return nil, fmt.Errorf("take variant stock: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil, outOfStock(it.Name)
		}
		oi.VariantStockTaken = true
	}
	return oi, nil
}

func outOfStock(name string) error {
	return invalid("Not enough stock left for " + name)
}

// giveStockBack returns what the order's checkout took, once: it runs only
// inside the transition that leaves PENDING for CANCELLED.
func giveStockBack(ctx context.Context, tx bun.Tx, orderID string) error {
	var items []OrderItem
	if err := tx.NewSelect().Model(&items).Where("order_id = ?", orderID).Scan(ctx); err != nil {
		return fmt.Errorf("load order items: %w", err)
	}
	for _, oi := range items {
		if oi.ItemStockTaken {
			if _, err := tx.NewUpdate().Model((*StoreItem)(nil)).Set("stock = stock + ?", oi.Quantity).
				Where("id = ? AND stock IS NOT NULL", oi.StoreItemID).Exec(ctx); err != nil {
				return fmt.Errorf("return item stock: %w", err)
			}
		}
		if oi.VariantStockTaken && oi.VariantID != nil {
			if _, err := tx.NewUpdate().Model((*Variant)(nil)).Set("stock = stock + ?", oi.Quantity).
				Where("id = ? AND stock IS NOT NULL", *oi.VariantID).Exec(ctx); err != nil {
				return fmt.Errorf("return variant stock: %w", err)
			}
		}
	}
	return nil
}

// JobCancelPayment is the job (server/jobs) that cancels a card payment
// that must no longer take money: the order, top-up or donation it was
// started for was cancelled, expired, or paid another way.
const JobCancelPayment = "cancel_payment"

// CancelPaymentArgs name the payment to cancel (and, for the logs, what it
// was started for).
type CancelPaymentArgs struct {
	Provider   string `json:"provider"`
	Ref        string `json:"ref"`
	OrderID    string `json:"orderId"`
	TopupID    string `json:"topupId,omitempty"`
	DonationID string `json:"donationId,omitempty"`
}

// cancelOpenPayment writes, in the caller's transaction, the job that
// cancels payment a (a PaymentIntent or a Checkout Session) at the card
// provider, so a payment form left open can no longer pay it. Every path
// that leaves a payment behind calls it: a cancel or an expiry, a switch to
// another method, a payment by another method. A payment that lands anyway
// is refunded (strayPayment). A PayPal order needs nothing: only our capture
// takes its money, and what is not PENDING is never captured; the wallet
// moves money in the paying transaction only.
func cancelOpenPayment(ctx context.Context, tx bun.IDB, a CancelPaymentArgs) error {
	if a.Provider != "stripe" || !(strings.HasPrefix(a.Ref, "pi_") || strings.HasPrefix(a.Ref, "cs_")) {
		return nil
	}
	return enqueue(ctx, tx, JobCancelPayment, a)
}

// cancelPayment: a cancelled (or expired) order's open payment is cancelled.
func cancelPayment(ctx context.Context, tx bun.Tx, o *Order) error {
	return cancelOpenPayment(ctx, tx, CancelPaymentArgs{Provider: o.PaymentMethod, Ref: o.PaymentRef, OrderID: o.ID})
}

// TransitionOptions carry what some transitions record.
type TransitionOptions struct {
	TrackingNumber string
	RefundReason   string
	// PaymentMethod and PaymentRef are recorded on PAID.
	PaymentMethod string
	PaymentRef    string
	// From, when set, is the status the caller saw; the transition is
	// refused unless the order is still in it.
	From string
}

// TransitionOrder moves an order of app to status to. It is a conditional
// update on the status the order is in, so two concurrent transitions never
// both apply; an illegal move is ErrIllegalTransition.
func (s *Storage) TransitionOrder(ctx context.Context, appID, orderID, to string, opts TransitionOptions) (*Order, error) {
	var order *Order
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		o, err := orderForUpdate(ctx, tx, appID, orderID)
		if err != nil {
			return err
		}
		if err := s.transition(ctx, tx, o, to, opts); err != nil {
			return err
		}
		order = o
		return nil
	})
	return order, err
}

func orderForUpdate(ctx context.Context, tx bun.Tx, appID, orderID string) (*Order, error) {
	o := new(Order)
	q := tx.NewSelect().Model(o).Where("id = ? AND app_id = ?", orderID, appID)
	if err := selectOne(ctx, q, "order"); err != nil {
		return nil, err
	}
	return o, nil
}

// transition applies one legal move to o inside tx, with its side effects:
// CANCELLED gives the stock back, PAID runs the paid effects (orderEffects), REFUNDED the
// refund effects. o is updated in place.
func (s *Storage) transition(ctx context.Context, tx bun.Tx, o *Order, to string, opts TransitionOptions) error {
	from := o.Status
	if opts.From != "" && opts.From != from {
		return ErrIllegalTransition
	}
	if !CanTransition(from, to) {
		return ErrIllegalTransition
	}
	now := time.Now().UTC()
	q := tx.NewUpdate().Model((*Order)(nil)).Set("status = ?", to).Set("updated_at = ?", now).
		Where("id = ? AND status = ?", o.ID, from)
	switch to {
	case OrderPaid:
		q = q.Set("paid_at = ?", now)
		o.PaidAt = &now
		if opts.PaymentMethod != "" {
			q = q.Set("payment_method = ?", opts.PaymentMethod)
			o.PaymentMethod = opts.PaymentMethod
		}
		if opts.PaymentRef != "" {
			q = q.Set("payment_ref = ?", opts.PaymentRef)
			o.PaymentRef = opts.PaymentRef
		}
	case OrderShipped:
		q = q.Set("shipped_at = ?", now).Set("tracking_number = ?", opts.TrackingNumber)
		o.ShippedAt, o.TrackingNumber = &now, opts.TrackingNumber
	case OrderDelivered:
		q = q.Set("delivered_at = ?", now)
		o.DeliveredAt = &now
	case OrderCancelled:
		q = q.Set("cancelled_at = ?", now)
		o.CancelledAt = &now
	case OrderRefunded:
		q = q.Set("refunded_at = ?", now).Set("refund_reason = ?", opts.RefundReason)
		o.RefundedAt, o.RefundReason = &now, opts.RefundReason
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return fmt.Errorf("order %s -> %s: %w", from, to, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		// Someone else moved it between our read and this update.
		return ErrIllegalTransition
	}
	o.Status, o.UpdatedAt = to, now
	switch to {
	case OrderCancelled, OrderPaid, OrderRefunded:
		// Stock given back, a ticket's attendance, a membership, a
		// donor's badge: the app's pages show them, bumped with this commit.
		changePages(ctx, o.AppID)
	}
	switch to {
	case OrderCancelled:
		if err := cancelPayment(ctx, tx, o); err != nil {
			return err
		}
		if err := giveStockBack(ctx, tx, o.ID); err != nil {
			return err
		}
	case OrderPaid:
		if err := runOrderEffects(ctx, tx, o, orderWasPaid); err != nil {
			return err
		}
	case OrderRefunded:
		if err := runOrderEffects(ctx, tx, o, orderWasRefunded); err != nil {
			return err
		}
	}
	// The buyer (and the staff, for a paid order) hear of it in the same
	// transaction (order_messages.go).
	return orderMessages(ctx, tx, o, to)
}

// ErrAmountMismatch: a provider reported a payment that is not the order's
// total; the order stays PENDING.
var ErrAmountMismatch = errors.New("payment amount does not match the order total")

// MarkOrderPaid is how a payment provider reports that money arrived: only a
// PENDING order of exactly this amount becomes PAID. A second report of the
// same payment (a repeated webhook) finds the order PAID with the same
// reference and changes nothing.
func (s *Storage) MarkOrderPaid(ctx context.Context, orderID, method, ref string, amount int64) (*Order, error) {
	var order *Order
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		o := new(Order)
		if err := selectOne(ctx, tx.NewSelect().Model(o).Where("id = ?", orderID), "order"); err != nil {
			return err
		}
		order = o
		if o.Status != OrderPending && o.PaymentRef == ref && ref != "" {
			return nil
		}
		if amount != o.Total {
			return ErrAmountMismatch
		}
		return s.MarkPaidTx(ctx, tx, o, method, ref)
	})
	return order, err
}

// MarkPaidTx is MarkOrderPaid inside a caller's transaction, for providers
// whose money moves in the same database (the wallet).
// The payment is booked in the app's ledger in the same transaction
// (payout.go): the gross, unless the wallet moved it already, and the fee.
func (s *Storage) MarkPaidTx(ctx context.Context, tx bun.Tx, o *Order, method, ref string) error {
	started := CancelPaymentArgs{Provider: o.PaymentMethod, Ref: o.PaymentRef, OrderID: o.ID}
	if err := s.transition(ctx, tx, o, OrderPaid, TransitionOptions{From: OrderPending, PaymentMethod: method, PaymentRef: ref}); err != nil {
		return err
	}
	if started.Provider != method || started.Ref != ref {
		// Paid another way (the wallet) while a card form was open: that
		// payment must not take money too.
		if err := cancelOpenPayment(ctx, tx, started); err != nil {
			return err
		}
	}
	return s.bookEarningTx(ctx, tx, Earning{AppID: o.AppID, Ref: "order:" + o.ID, OrderID: &o.ID, Amount: o.Total,
		InLedger: method == WalletMethod, Currency: o.Currency, Memo: "Order " + o.OrderNumber})
}

// ExpirePendingOrders cancels orders still PENDING olderThan after they were
// made, giving their stock back. Each is its own conditional transition, so
// a payment that lands at the same moment either wins (the order is PAID
// and stays) or loses (the wallet is not charged). It answers how many
// expired.
func (s *Storage) ExpirePendingOrders(ctx context.Context, olderThan time.Duration) (int, error) {
	if olderThan <= 0 {
		olderThan = DefaultOrderExpiry
	}
	cutoff := time.Now().UTC().Add(-olderThan)
	var stale []Order
	if err := s.db.NewSelect().Model(&stale).Column("id", "app_id").
		Where("status = ? AND created_at < ?", OrderPending, cutoff).Order("created_at ASC").Limit(500).Scan(ctx); err != nil {
		return 0, fmt.Errorf("find expired orders: %w", err)
	}
	n := 0
	for _, o := range stale {
		_, err := s.TransitionOrder(ctx, o.AppID, o.ID, OrderCancelled, TransitionOptions{From: OrderPending})
		if errors.Is(err, ErrIllegalTransition) || errors.Is(err, ErrNotFound) {
			continue // paid or cancelled meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("expire order %s: %w", o.ID, err)
		}
		n++
	}
	return n, nil
}

// OrderItemView is an order line in the shape of SPEC.md section 3.
type OrderItemView struct {
	ID            string            `json:"id"`
	StoreItemID   string            `json:"storeItemId"`
	VariantID     *string           `json:"variantId"`
	StoreItem     OrderItemSnapshot `json:"storeItem"`
	Quantity      int64             `json:"quantity"`
	Price         int64             `json:"price"`
	Currency      string            `json:"currency"`
	CustomOptions map[string]string `json:"customOptions"`
	// Downloads are the files a DIGITAL item delivers (never its public
	// media), present while the order grants them (paid, not refunded).
	Downloads []DownloadView `json:"downloads,omitempty"`
}

// OrderItemSnapshot names the item as it was bought; media comes from the
// item now (it may have been edited since).
type OrderItemSnapshot struct {
	Name  string      `json:"name"`
	Type  string      `json:"type"`
	Media []MediaView `json:"media"`
}

// OrderView is an order in the shape of SPEC.md section 3.
type OrderView struct {
	Order
	Items []OrderItemView `json:"items"`
	Buyer *OrderBuyer     `json:"buyer,omitempty"`
	// NeedsShipping: some item is PHYSICAL (the checkout's shipping step).
	NeedsShipping bool `json:"needsShipping"`
	// Next lists the statuses the order may move to, for fulfilment.
	Next []string `json:"next" tstype:"OrderStatus[]"`
}

// OrderBuyer is who placed the order, for the fulfilment screen.
type OrderBuyer struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Email    string `json:"email"`
}

// OrderFilter selects orders of a store: a member's own (UserID set) or
// every order (fulfilment), optionally by status.
type OrderFilter struct {
	StoreID string
	UserID  string
	Status  string
	Page    int
	Limit   int
}

func (f OrderFilter) apply(q *bun.SelectQuery) *bun.SelectQuery {
	q = q.Where("store_id = ?", f.StoreID)
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	return q
}

// Orders lists orders newest first.
func (s *Storage) Orders(ctx context.Context, f OrderFilter) ([]OrderView, Pagination, error) {
	page, limit := ClampPage(f.Page, f.Limit)
	var rows []Order
	total, err := s.db.NewSelect().Model(&rows).Apply(f.apply).Order("created_at DESC", "id DESC").
		Limit(int64(limit)).Offset(int64((page - 1) * limit)).ScanAndCount(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, Pagination{}, fmt.Errorf("list orders: %w", err)
	}
	views, err := s.orderViews(ctx, s.db, rows, f.UserID == "")
	if err != nil {
		return nil, Pagination{}, err
	}
	return views, NewPagination(page, limit, int(total)), nil
}

// OrderOf loads one order of store; with userID set, only that member's
// (another member's order is ErrNotFound, not a refusal that would confirm
// it exists).
func (s *Storage) OrderOf(ctx context.Context, storeID, userID, orderID string) (*OrderView, error) {
	o := new(Order)
	q := s.db.NewSelect().Model(o).Where("id = ? AND store_id = ?", orderID, storeID)
	if userID != "" {
		q = q.Where("user_id = ?", userID)
	}
	if err := selectOne(ctx, q, "order"); err != nil {
		return nil, err
	}
	views, err := s.orderViews(ctx, s.db, []Order{*o}, userID == "")
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

func (s *Storage) orderViews(ctx context.Context, db bun.IDB, orders []Order, withBuyer bool) ([]OrderView, error) {
	views := make([]OrderView, len(orders))
	if len(orders) == 0 {
		return views, nil
	}
	ids := make([]string, len(orders))
	userIDs := make([]string, len(orders))
	for i, o := range orders {
		ids[i], userIDs[i] = o.ID, o.UserID
		views[i] = OrderView{Order: o, Items: []OrderItemView{}, Next: NextStatuses(o.Status)}
	}
	var items []OrderItem
	if err := db.NewSelect().Model(&items).Where("order_id IN (?)", bun.List(ids)).Order("name ASC", "id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load order items: %w", err)
	}
	itemIDs := make([]string, len(items))
	for i, it := range items {
		itemIDs[i] = it.StoreItemID
	}
	media := map[string][]MediaView{}
	if len(itemIDs) > 0 {
		var links []StoreItemMedia
		if err := db.NewSelect().Model(&links).Where("store_item_id IN (?)", bun.List(uniq(itemIDs))).Order("position ASC").Scan(ctx); err != nil {
			return nil, fmt.Errorf("load order item media: %w", err)
		}
		mediaIDs := make([]string, len(links))
		for i, l := range links {
			mediaIDs[i] = l.MediaID
		}
		mv, err := s.mediaViews(ctx, db, mediaIDs)
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			if m, ok := mv[l.MediaID]; ok {
				media[l.StoreItemID] = append(media[l.StoreItemID], m)
			}
		}
	}
	var ents []Entitlement
	if err := db.NewSelect().Model(&ents).Where("order_id IN (?) AND kind = ? AND revoked_at IS NULL", bun.List(ids), EntitlementDownload).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load entitlements: %w", err)
	}
	granted, err := downloadsOf(ctx, db, ents)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, o := range orders {
		index[o.ID] = i
	}
	for _, it := range items {
		opts := map[string]string{}
		_ = json.Unmarshal([]byte(it.CustomOptions), &opts)
		m := media[it.StoreItemID]
		if m == nil {
			m = []MediaView{}
		}
		line := OrderItemView{ID: it.ID, StoreItemID: it.StoreItemID, VariantID: it.VariantID,
			StoreItem: OrderItemSnapshot{Name: it.Name, Type: it.Type, Media: m}, Quantity: it.Quantity,
			Price: it.Price, Currency: it.Currency, CustomOptions: opts}
		if d := granted[it.OrderID+"/"+it.StoreItemID]; len(d) > 0 {
			line.Downloads = d
		}
		v := &views[index[it.OrderID]]
		v.Items = append(v.Items, line)
		v.NeedsShipping = v.NeedsShipping || it.Type == ItemPhysical
	}
	// Only physical goods are processed and shipped: a membership, ticket
	// or download is done when paid, and may only be refunded.
	for i := range views {
		if !views[i].NeedsShipping {
			views[i].Next = FulfilmentMoves(views[i].Status, false)
		}
	}
	if withBuyer {
		var users []User
		if err := db.NewSelect().Model(&users).Column("id", "username", "email").Where("id IN (?)", bun.List(uniq(userIDs))).Scan(ctx); err != nil {
			return nil, fmt.Errorf("load buyers: %w", err)
		}
		byID := map[string]*OrderBuyer{}
		for _, u := range users {
			byID[u.ID] = &OrderBuyer{ID: u.ID, Username: u.Username, Email: u.Email}
		}
		for i := range views {
			views[i].Buyer = byID[views[i].UserID]
		}
	}
	return views, nil
}

// ErrPlanOffSale: the order buys a membership tier that is archived, gone,
// or a draft (tiers.go: tierOnSaleSQL).
var ErrPlanOffSale = errors.New("membership plan is not on sale")

// plansOnSale refuses an order holding a SUBSCRIPTION line whose plan can
// no longer be bought: its item archived or deleted, or no plan with a
// billing cycle behind it.
func plansOnSale(ctx context.Context, db bun.IDB, orderID string) error {
	var names []string
	err := db.NewSelect().TableExpr("order_items AS oi").ColumnExpr("oi.name").
		Join("LEFT JOIN store_items AS i ON i.id = oi.store_item_id").
		Join("LEFT JOIN subscription_plans AS p ON p.store_item_id = oi.store_item_id").
		Where("oi.order_id = ? AND oi.type = ?", orderID, ItemSubscription).
		Where("(i.id IS NULL OR p.id IS NULL OR p.billing_cycle NOT IN (?) OR NOT "+tierOnSaleSQL+")",
			bun.List([]string{CycleMonthly, CycleYearly})).
		Scan(ctx, &names)
	if err != nil {
		return fmt.Errorf("check plans on sale: %w", err)
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: %s", ErrPlanOffSale, names[0])
	}
	return nil
}

// needsShipping reports whether the order holds a PHYSICAL item.
func needsShipping(ctx context.Context, db bun.IDB, orderID string) (bool, error) {
	n, err := db.NewSelect().Model((*OrderItem)(nil)).Where("order_id = ? AND type = ?", orderID, ItemPhysical).Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check order items: %w", err)
	}
	return n > 0, nil
}

// ReadyToPay refuses to take money for an order that cannot be fulfilled as
// it stands: not PENDING, a membership plan that is off sale, or physical
// without a shipping address.
func ReadyToPay(ctx context.Context, db bun.IDB, o *Order) error {
	if o.Status != OrderPending {
		return ErrIllegalTransition
	}
	if err := plansOnSale(ctx, db, o.ID); err != nil {
		return err
	}
	if o.ShippingAddress != "" {
		return nil
	}
	physical, err := needsShipping(ctx, db, o.ID)
	if err != nil {
		return err
	}
	if physical {
		return invalid("Shipping address is required")
	}
	return nil
}

// ReadyToPay is the check above on the storage's own database, for
// providers that start a payment elsewhere (card, PayPal).
func (s *Storage) ReadyToPay(ctx context.Context, o *Order) error { return ReadyToPay(ctx, s.db, o) }

// SetOrderShipping records the shipping step on the member's own PENDING
// order with what shipping to that address costs (the app's zones), and
// the total that follows. It is a conditional update: a paid order's
// address and total no longer change.
func (s *Storage) SetOrderShipping(ctx context.Context, storeID, userID, orderID string, a *ShippingAddress) (*Order, error) {
	a.Normalize()
	if err := a.Validate(); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(a)
	o := new(Order)
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		// Locked as the wallet locks it (PayOrderFromWallet): a payment
		// takes the total before or after this, never a mix.
		if tx.Dialect().Name() == dialect.SQLite {
			if _, err := tx.ExecContext(ctx, "UPDATE orders SET status = status WHERE 0"); err != nil {
				return fmt.Errorf("lock order: %w", err)
			}
		}
		q := tx.NewSelect().Model(o).Where("id = ? AND store_id = ? AND user_id = ?", orderID, storeID, userID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "order"); err != nil {
			return err
		}
		if o.Status != OrderPending {
			return ErrIllegalTransition
		}
		var items []OrderItem
		if err := tx.NewSelect().Model(&items).Where("order_id = ?", o.ID).Scan(ctx); err != nil {
			return fmt.Errorf("load order items: %w", err)
		}
		rate, err := shippingFor(ctx, tx, o.AppID, a.Country, physicalOf(items), o.Subtotal)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		total := o.Subtotal + rate + o.PlatformFee
		res, err := tx.NewUpdate().Model((*Order)(nil)).Set("shipping_address = ?", string(b)).
			Set("shipping = ?", rate).Set("total = ?", total).Set("updated_at = ?", now).
			Where("id = ? AND status = ?", o.ID, OrderPending).Exec(ctx)
		if err != nil {
			return fmt.Errorf("save shipping address: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrIllegalTransition
		}
		o.ShippingAddress, o.Shipping, o.Total, o.UpdatedAt = string(b), rate, total, now
		return nil
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}
