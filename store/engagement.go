package store

import (
	"time"

	"github.com/uptrace/bun"
)

type Notification struct {
	bun.BaseModel `bun:"table:notifications"`

	ID        string     `bun:",pk" json:"id"`
	AppID     string     `bun:",notnull" json:"appId"`
	UserID    string     `bun:",notnull" json:"-"`
	SenderID  *string    `json:"-"`
	Content   string     `bun:",notnull" json:"content"`
	Kind      string     `bun:",notnull,default:'SYSTEM'" json:"kind"`
	Link      string     `bun:",notnull,default:''" json:"link"`
	Source    string     `bun:",notnull,default:''" json:"-"`
	ReadAt    *time.Time `json:"readAt"`
	CreatedAt time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

type PushSubscription struct {
	bun.BaseModel `bun:"table:push_subscriptions"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull,unique:push_app_endpoint" json:"appId"`
	UserID    string    `bun:",notnull" json:"-"`
	Endpoint  string    `bun:",notnull,unique:push_app_endpoint" json:"endpoint"`
	P256dh    string    `bun:"p256dh,notnull" json:"p256dh"`
	Auth      string    `bun:",notnull" json:"auth"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

type Donation struct {
	bun.BaseModel `bun:"table:donations"`

	ID          string     `bun:",pk" json:"id"`
	AppID       string     `bun:",notnull" json:"appId"`
	UserID      string     `bun:",notnull" json:"-"`
	Amount      int64      `bun:",notnull" json:"amount"`
	Currency    string     `bun:",notnull,default:'USD'" json:"currency"`
	Message     string     `bun:",notnull,default:''" json:"message"`
	Status      string     `bun:",notnull,default:'PENDING'" json:"status"`
	CreatedAt   time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	ProcessedAt *time.Time `json:"processedAt"`
	// PaymentMethod and PaymentRef: how the donation was paid (migration
	// 20261123120001); empty until it is.
	PaymentMethod string `bun:",notnull,default:''" json:"paymentMethod"`
	PaymentRef    string `bun:",notnull,default:''" json:"-"`
}

type DonationTier struct {
	bun.BaseModel `bun:"table:donation_tiers"`

	ID             string `bun:",pk" json:"id"`
	AppID          string `bun:",notnull" json:"-"`
	Name           string `bun:",notnull" json:"name"`
	RequiredAmount int64  `bun:",notnull" json:"requiredAmount"`
	Description    string `bun:",notnull,default:''" json:"description"`
	Position       int    `bun:",notnull,default:0" json:"-"`
}

// Link is one entry of the link-in-bio block.
type Link struct {
	bun.BaseModel `bun:"table:links"`

	ID       string `bun:",pk" json:"id"`
	AppID    string `bun:",notnull" json:"-"`
	Title    string `bun:",notnull" json:"title"`
	URL      string `bun:"url,notnull" json:"url"`
	Icon     string `bun:",notnull,default:''" json:"icon"`
	Enabled  bool   `bun:",notnull" json:"enabled"`
	Position int    `bun:",notnull,default:0" json:"-"`
}

// Secret holds values the server generates once and keeps (signing keys,
// VAPID keys), so restarts and several processes agree on them.
type Secret struct {
	bun.BaseModel `bun:"table:secrets"`

	Name      string    `bun:",pk"`
	Value     string    `bun:",notnull"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
}
