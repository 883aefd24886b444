package store

import (
	"time"

	"github.com/uptrace/bun"
)

const (
	MediaImage = "IMAGE"
	MediaVideo = "VIDEO"
	MediaOther = "OTHER"

	MediaPending  = "PENDING"
	MediaUploaded = "UPLOADED"
)

// Media is an uploaded file. Path is the object key in storage; the bytes live
// in S3/MinIO or on local disk, never in the database.
type Media struct {
	bun.BaseModel `bun:"table:media"`

	ID          string    `bun:",pk" json:"id"`
	AppID       *string   `json:"appId"`
	OwnerID     string    `bun:",notnull" json:"-"`
	Name        string    `bun:",notnull,default:''" json:"name"`
	Type        string    `bun:",notnull" json:"type"`
	Size        int64     `bun:",notnull,default:0" json:"size"`
	MimeType    string    `bun:",notnull" json:"mimeType"`
	Path        string    `bun:",notnull,unique" json:"path"`
	Description string    `bun:",notnull,default:''" json:"description"`
	MediaKey    string    `bun:",notnull,default:''" json:"mediaKey"`
	Status      string    `bun:",notnull,default:'PENDING'" json:"status"`
	CreatedAt   time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}
