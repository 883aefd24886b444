package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// ItemUpload is a resumable upload of a DIGITAL item's file in progress:
// the file arrives in parts of PartSize bytes (the last one shorter), each
// stored as it comes; once all are there it completes into an ItemFile with
// the same id and Path.
type ItemUpload struct {
	bun.BaseModel `bun:"table:item_uploads"`

	ID          string `bun:",pk" json:"id"`
	AppID       string `bun:",notnull" json:"-"`
	StoreItemID string `bun:",notnull" json:"storeItemId"`
	UserID      string `bun:",notnull" json:"-"`
	Name        string `bun:",notnull" json:"name"`
	MimeType    string `bun:",notnull" json:"mimeType"`
	Size        int64  `bun:",notnull" json:"size"`
	PartSize    int64  `bun:",notnull" json:"partSize"`
	Path        string `bun:",notnull,unique" json:"-"`
	// StorageUploadID is the storage's own id of the upload (S3's UploadId).
	StorageUploadID string    `bun:",notnull" json:"-"`
	CreatedAt       time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`

	// Parts are the parts stored so far, by number.
	Parts []ItemUploadPart `bun:"-" json:"parts"`
}

// ItemUploadPart is one stored part of an upload.
type ItemUploadPart struct {
	bun.BaseModel `bun:"table:item_upload_parts"`

	UploadID string `bun:",pk" json:"-"`
	Number   int    `bun:",pk,type:integer" json:"number"`
	Size     int64  `bun:",notnull" json:"size"`
	ETag     string `bun:"etag,notnull" json:"-"`
}

// PartCount is how many parts the upload's file is cut into.
func (u *ItemUpload) PartCount() int {
	return int((u.Size + u.PartSize - 1) / u.PartSize)
}

// PartBytes is the size part number (from 1) must have.
func (u *ItemUpload) PartBytes(number int) int64 {
	if number < 1 || number > u.PartCount() {
		return 0
	}
	if number == u.PartCount() {
		return u.Size - int64(number-1)*u.PartSize
	}
	return u.PartSize
}

// AddItemUpload records an upload the storage has started.
func (s *Storage) AddItemUpload(ctx context.Context, u *ItemUpload) error {
	if _, err := s.db.NewInsert().Model(u).Exec(ctx); err != nil {
		return fmt.Errorf("add item upload: %w", err)
	}
	u.Parts = []ItemUploadPart{}
	return nil
}

// ItemUploadByID loads an upload with the parts stored so far.
func (s *Storage) ItemUploadByID(ctx context.Context, id string) (*ItemUpload, error) {
	return itemUpload(ctx, s.db, id)
}

func itemUpload(ctx context.Context, db bun.IDB, id string) (*ItemUpload, error) {
	u := new(ItemUpload)
	if err := selectOne(ctx, db.NewSelect().Model(u).Where("id = ?", id), "item upload "+id); err != nil {
		return nil, err
	}
	u.Parts = []ItemUploadPart{}
	if err := db.NewSelect().Model(&u.Parts).Where("upload_id = ?", id).Order("number").Scan(ctx); err != nil {
		return nil, fmt.Errorf("item upload parts: %w", err)
	}
	return u, nil
}

// SaveUploadPart records a stored part; a part sent again replaces the
// earlier record, as the storage replaced its bytes. An upload that is gone
// (completed or aborted meanwhile) is ErrNotFound.
func (s *Storage) SaveUploadPart(ctx context.Context, p *ItemUploadPart) error {
	_, err := s.db.NewInsert().Model(p).
		On("CONFLICT (upload_id, number) DO UPDATE").Set("size = EXCLUDED.size").Set("etag = EXCLUDED.etag").Exec(ctx)
	if err != nil {
		if _, gone := s.ItemUploadByID(ctx, p.UploadID); errors.Is(gone, ErrNotFound) {
			return ErrNotFound
		}
		return fmt.Errorf("save upload part: %w", err)
	}
	return nil
}

// FinishItemUpload ends an upload once, in one transaction: it reads the
// upload and its parts, removes the record (a second call, racing or late,
// gets ErrNotFound) and runs finish with them. finish's error undoes the
// removal, so the upload may be tried again; a file it answers is recorded.
func (s *Storage) FinishItemUpload(ctx context.Context, id string, finish func(u *ItemUpload) (*ItemFile, error)) (*ItemFile, error) {
	var file *ItemFile
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		u, err := itemUpload(ctx, tx, id)
		if err != nil {
			return err
		}
		res, err := tx.NewDelete().Model((*ItemUpload)(nil)).Where("id = ?", id).Exec(ctx)
		if err != nil {
			return fmt.Errorf("remove item upload: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if file, err = finish(u); err != nil {
			return err
		}
		if file != nil {
			if _, err := tx.NewInsert().Model(file).Exec(ctx); err != nil {
				return fmt.Errorf("add item file: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return file, nil
}
