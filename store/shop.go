package store

import (
	"time"

	"github.com/uptrace/bun"
)

// Shop is an app's store (the shop members buy from).
type Shop struct {
	bun.BaseModel `bun:"table:stores"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull,unique" json:"appId"`
	Name      string    `bun:",notnull,default:''" json:"name"`
	Currency  string    `bun:",notnull,default:'USD'" json:"currency"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}
