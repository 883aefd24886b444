package store

import (
	"time"

	"github.com/uptrace/bun"
)

type User struct {
	bun.BaseModel `bun:"table:users,alias:u"`

	ID             string    `bun:",pk" json:"id"`
	Username       string    `bun:",unique,notnull" json:"username"`
	Email          string    `bun:",unique,notnull" json:"-"`
	EmailVerified  bool      `bun:",notnull,default:false" json:"emailVerified"`
	PasswordHash   string    `bun:",notnull" json:"-"`
	ProfileMediaID *string   `json:"-"`
	CreatedAt      time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt      time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
	// DeletedAt: the member deleted the account; the row stays, anonymised,
	// so orders and payments keep a buyer for the creator's accounting.
	DeletedAt *time.Time `json:"-"`
	// DisabledAt: an operator disabled the account (`marquee user
	// disable`); it cannot sign in and its sessions ended.
	DisabledAt *time.Time `json:"-"`
}

// Session is a signed-in browser. ID is the SHA-256 of the cookie token, so a
// leaked database does not leak usable tokens.
type Session struct {
	bun.BaseModel `bun:"table:sessions"`

	ID        string    `bun:",pk"`
	UserID    string    `bun:",notnull"`
	UserAgent string    `bun:",notnull,default:''"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
	ExpiresAt time.Time `bun:",notnull"`
	// LastUsedAt is updated at most every few minutes (account settings
	// list the sessions with it).
	LastUsedAt *time.Time
	// LinkedID is the session this one was made from: a custom domain's
	// session is made from the auth host's (store.ExchangeDomainSignIn),
	// and ending either ends both.
	LinkedID string `bun:",nullzero"`
}

// Membership gives a user a role in one app.
type Membership struct {
	bun.BaseModel `bun:"table:memberships"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull,unique:membership_app_user" json:"appId"`
	UserID    string    `bun:",notnull,unique:membership_app_user" json:"userId"`
	Role      string    `bun:",notnull" json:"role"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}
