package store

import (
	"slices"
	"strconv"
	"strings"
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
	// Width and Height are the original's intrinsic size (0 until known);
	// Variants lists the widths of the resized copies stored beside it
	// ("96,192,384"), all of VariantType (image/jpeg or image/png).
	Width       int    `bun:",notnull,default:0" json:"width"`
	Height      int    `bun:",notnull,default:0" json:"height"`
	Variants    string `bun:",notnull,default:''" json:"-"`
	VariantType string `bun:",notnull,default:''" json:"-"`
}

// VariantWidths parses Variants.
func (m *Media) VariantWidths() []int {
	var out []int
	for _, p := range strings.Split(m.Variants, ",") {
		if w, err := strconv.Atoi(p); err == nil && w > 0 {
			out = append(out, w)
		}
	}
	return out
}

// HasVariant reports whether a copy w pixels wide is stored.
func (m *Media) HasVariant(w int) bool {
	return slices.Contains(m.VariantWidths(), w)
}

// JoinWidths is the Variants text of a list of widths.
func JoinWidths(widths []int) string {
	parts := make([]string, len(widths))
	for i, w := range widths {
		parts[i] = strconv.Itoa(w)
	}
	return strings.Join(parts, ",")
}
