package store

import (
	"time"

	"github.com/uptrace/bun"
)

type Event struct {
	bun.BaseModel `bun:"table:events"`

	ID            string    `bun:",pk" json:"id"`
	AppID         string    `bun:",notnull" json:"appId"`
	CreatorID     string    `bun:",notnull" json:"creatorId"`
	Name          string    `bun:",notnull" json:"name"`
	Description   string    `bun:",notnull,default:''" json:"description"`
	Location      string    `bun:",notnull,default:''" json:"location"`
	StartDate     time.Time `bun:",notnull" json:"startDate"`
	EndDate       time.Time `bun:",notnull" json:"endDate"`
	Type          string    `bun:",notnull,default:'MEETUP'" json:"type"`
	IsFeatured    bool      `bun:",notnull,default:false" json:"isFeatured"`
	IsOfficial    bool      `bun:",notnull,default:false" json:"isOfficial"`
	BannerMediaID *string   `json:"-"`
	Settings      string    `bun:",notnull,default:'{}'" json:"-"`
	// Who may read the event's details (store/message_access.go): its
	// name, time and banner are for everyone who sees the app's events.
	AccessAudience  string  `bun:",notnull,default:'PUBLIC'" json:"-"`
	AccessMinTierID *string `json:"-"`
	// Hidden says why the event is hidden (store.Hidden*), "" when shown.
	Hidden    string    `bun:",notnull,default:''" json:"-"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

type EventMedia struct {
	bun.BaseModel `bun:"table:event_media"`

	EventID  string `bun:",pk"`
	MediaID  string `bun:",pk"`
	AppID    string `bun:",notnull"`
	Position int    `bun:",notnull,default:0"`
}

type Attendee struct {
	bun.BaseModel `bun:"table:attendees"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull" json:"-"`
	EventID   string    `bun:",notnull,unique:attendee_event_user" json:"eventId"`
	UserID    string    `bun:",notnull,unique:attendee_event_user" json:"userId"`
	Role      string    `bun:",notnull" json:"role"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}
