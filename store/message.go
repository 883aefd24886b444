package store

import (
	"time"

	"github.com/uptrace/bun"
)

const (
	MessagePost  = "POST"
	MessageStory = "STORY"
	MessageReply = "REPLY"
)

// Message is a post, a story or a reply (a reply has ParentMessageID).
type Message struct {
	bun.BaseModel `bun:"table:messages"`

	ID              string  `bun:",pk" json:"id"`
	AppID           string  `bun:",notnull" json:"appId"`
	CommunityID     string  `bun:",notnull" json:"communityId"`
	SenderID        string  `bun:",notnull" json:"senderId"`
	Type            string  `bun:",notnull" json:"type"`
	Content         string  `bun:",notnull,default:''" json:"content"`
	ParentMessageID *string `json:"parentMessageId"`
	IsFeatured      bool    `bun:",notnull,default:false" json:"isFeatured"`
	// Hidden says why the message is hidden (store.Hidden*), "" when shown.
	Hidden string `bun:",notnull,default:''" json:"hidden"`
	// PublishAt is when a scheduled post (Hidden HiddenScheduled) goes out.
	PublishAt *time.Time `json:"publishAt"`
	// Newsletter: the post is mailed to the app's members when published.
	Newsletter bool `bun:",notnull,default:false" json:"newsletter"`
	// AccessAudience and AccessMinTierID say who may read it
	// (message_access.go); Teaser is what the others see.
	AccessAudience  string    `bun:",notnull,default:'PUBLIC'" json:"accessAudience"`
	AccessMinTierID *string   `json:"accessMinTierId"`
	Teaser          string    `bun:",notnull,default:''" json:"teaser"`
	CreatedAt       time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt       time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

// MessageAttachment orders the media of a message.
type MessageAttachment struct {
	bun.BaseModel `bun:"table:message_attachments"`

	MessageID string `bun:",pk"`
	MediaID   string `bun:",pk"`
	AppID     string `bun:",notnull"`
	Position  int    `bun:",notnull,default:0"`
}

type Reaction struct {
	bun.BaseModel `bun:"table:reactions"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull" json:"-"`
	MessageID string    `bun:",notnull,unique:reaction_once" json:"messageId"`
	SenderID  string    `bun:",notnull,unique:reaction_once" json:"-"`
	Reaction  string    `bun:",notnull,unique:reaction_once" json:"reaction"`
	MediaID   *string   `json:"mediaId"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

type Tag struct {
	bun.BaseModel `bun:"table:tags"`

	ID    string `bun:",pk" json:"id"`
	AppID string `bun:",notnull,unique:tag_app_name" json:"-"`
	Name  string `bun:",notnull,unique:tag_app_name" json:"name"`
}

type MessageTag struct {
	bun.BaseModel `bun:"table:message_tags"`

	MessageID string `bun:",pk"`
	TagID     string `bun:",pk"`
	AppID     string `bun:",notnull"`
}
