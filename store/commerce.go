package store

import (
	"time"

	"github.com/uptrace/bun"
)

const (
	ItemPhysical     = "PHYSICAL"
	ItemDigital      = "DIGITAL"
	ItemService      = "SERVICE"
	ItemSubscription = "SUBSCRIPTION"
	ItemEventTicket  = "EVENT_TICKET"
)

type Store struct {
	bun.BaseModel `bun:"table:stores"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull,unique" json:"appId"`
	Name      string    `bun:",notnull,default:''" json:"name"`
	Currency  string    `bun:",notnull,default:'USD'" json:"currency"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// StoreItem prices are integer cents. Stock nil means untracked.
type StoreItem struct {
	bun.BaseModel `bun:"table:store_items"`

	ID           string `bun:",pk" json:"id"`
	AppID        string `bun:",notnull" json:"appId"`
	StoreID      string `bun:",notnull" json:"storeId"`
	Name         string `bun:",notnull" json:"name"`
	Description  string `bun:",notnull,default:''" json:"description"`
	Type         string `bun:",notnull" json:"type"`
	Price        int64  `bun:",notnull" json:"price"`
	ComparePrice *int64 `json:"comparePrice"`
	Currency     string `bun:",notnull,default:'USD'" json:"currency"`
	Stock        *int64 `json:"stock"`
	SKU          string `bun:"sku,notnull,default:''" json:"sku"`
	IsFeatured   bool   `bun:",notnull,default:false" json:"isFeatured"`
	Settings     string `bun:",notnull,default:'{}'" json:"-"`
	// EventID is the event an EVENT_TICKET admits to (nil for other types;
	// migration 20261123130001).
	EventID   *string   `json:"eventId"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
	// DeletedAt is set instead of deleting the row, so carts and orders
	// that hold the item keep it (migration 20261123000001).
	DeletedAt *time.Time `json:"-"`
}

type StoreItemMedia struct {
	bun.BaseModel `bun:"table:store_item_media"`

	StoreItemID string `bun:",pk"`
	MediaID     string `bun:",pk"`
	AppID       string `bun:",notnull"`
	Position    int    `bun:",notnull,default:0"`
}

type StoreItemTag struct {
	bun.BaseModel `bun:"table:store_item_tags"`

	StoreItemID string `bun:",pk"`
	TagID       string `bun:",pk"`
	AppID       string `bun:",notnull"`
}

type Variant struct {
	bun.BaseModel `bun:"table:variants"`

	ID              string `bun:",pk" json:"id"`
	AppID           string `bun:",notnull" json:"-"`
	StoreItemID     string `bun:",notnull" json:"storeItemId"`
	Name            string `bun:",notnull" json:"name"`
	Value           string `bun:",notnull" json:"value"`
	PriceAdjustment int64  `bun:",notnull,default:0" json:"priceAdjustment"`
	Stock           *int64 `json:"stock"`
	Position        int    `bun:",notnull,default:0" json:"-"`
	// DeletedAt: removed from the item, kept for the cart lines that hold
	// it (migration 20261123000002).
	DeletedAt *time.Time `json:"-"`
}

type SubscriptionPlan struct {
	bun.BaseModel `bun:"table:subscription_plans"`

	ID           string `bun:",pk" json:"id"`
	AppID        string `bun:",notnull" json:"-"`
	StoreItemID  string `bun:",notnull,unique" json:"storeItemId"`
	BillingCycle string `bun:",notnull" json:"billingCycle"`
}

// Subscription is a member's paid membership of one app (one row per member
// and app; migration 20261123120001). Status is ACTIVE, PAST_DUE (a renewal
// failed; access lasts until GraceUntil), CANCELED (ended at a period end the
// member chose) or EXPIRED (grace ran out, refunded, or the provider ended it).
type Subscription struct {
	bun.BaseModel `bun:"table:subscriptions"`

	ID                string     `bun:",pk" json:"id"`
	AppID             string     `bun:",notnull" json:"appId"`
	UserID            string     `bun:",notnull" json:"userId"`
	PlanID            string     `bun:",notnull" json:"planId"`
	Status            string     `bun:",notnull" json:"status"`
	CurrentPeriodEnd  time.Time  `bun:",notnull" json:"currentPeriodEnd"`
	CreatedAt         time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	Amount            int64      `bun:",notnull,default:0" json:"amount"`
	Currency          string     `bun:",notnull,default:'USD'" json:"currency"`
	Provider          string     `bun:",notnull,default:''" json:"provider"`
	ProviderRef       string     `bun:",notnull,default:''" json:"-"`
	OrderID           *string    `json:"orderId"`
	CancelAtPeriodEnd bool       `bun:",notnull,default:false" json:"cancelAtPeriodEnd"`
	GraceUntil        *time.Time `json:"graceUntil"`
	EndedAt           *time.Time `json:"endedAt"`
	Renewals          int64      `bun:",notnull,default:0" json:"renewals"`
}

type Cart struct {
	bun.BaseModel `bun:"table:carts"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull" json:"-"`
	StoreID   string    `bun:",notnull" json:"storeId"`
	UserID    string    `bun:",notnull" json:"-"`
	Status    string    `bun:",notnull,default:'ACTIVE'" json:"status"`
	ExpiresAt time.Time `bun:",notnull" json:"expiresAt"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

type CartItem struct {
	bun.BaseModel `bun:"table:cart_items"`

	ID          string    `bun:",pk" json:"id"`
	AppID       string    `bun:",notnull" json:"-"`
	CartID      string    `bun:",notnull" json:"cartId"`
	StoreItemID string    `bun:",notnull" json:"itemId"`
	VariantID   *string   `json:"variantId"`
	Quantity    int64     `bun:",notnull" json:"quantity"`
	CreatedAt   time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

type Order struct {
	bun.BaseModel `bun:"table:orders"`

	ID            string `bun:",pk" json:"id"`
	AppID         string `bun:",notnull" json:"appId"`
	StoreID       string `bun:",notnull" json:"storeId"`
	UserID        string `bun:",notnull" json:"userId"`
	OrderNumber   string `bun:",notnull,unique" json:"orderNumber"`
	Status        string `bun:",notnull" json:"status"`
	Subtotal      int64  `bun:",notnull" json:"subtotal"`
	PlatformFee   int64  `bun:",notnull,default:0" json:"platformFee"`
	Total         int64  `bun:",notnull" json:"total"`
	Currency      string `bun:",notnull,default:'USD'" json:"currency"`
	PaymentMethod string `bun:",notnull,default:''" json:"paymentMethod"`
	PaymentRef    string `bun:",notnull,default:''" json:"-"`
	// CartID is unique: the cart an order was made from is its idempotency
	// key (migration 20261123110001).
	CartID          *string    `json:"-"`
	ShippingAddress string     `bun:",notnull,default:''" json:"shippingAddress"`
	Notes           string     `bun:",notnull,default:''" json:"notes"`
	TrackingNumber  string     `bun:",notnull,default:''" json:"trackingNumber"`
	RefundReason    string     `bun:",notnull,default:''" json:"refundReason"`
	CreatedAt       time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt       time.Time  `bun:",notnull,default:current_timestamp" json:"updatedAt"`
	ShippedAt       *time.Time `json:"shippedAt"`
	DeliveredAt     *time.Time `json:"deliveredAt"`
	CancelledAt     *time.Time `json:"cancelledAt"`
	RefundedAt      *time.Time `json:"refundedAt"`
	PaidAt          *time.Time `json:"paidAt"`
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
