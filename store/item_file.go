package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// ItemFile is a file a DIGITAL item delivers (an album's FLAC, a PDF). It
// is private: stored under its own key, never listed as item media, and
// served only through a buyer's signed download link.
type ItemFile struct {
	bun.BaseModel `bun:"table:item_files"`

	ID          string    `bun:",pk" json:"id"`
	AppID       string    `bun:",notnull" json:"-"`
	StoreItemID string    `bun:",notnull" json:"storeItemId"`
	Name        string    `bun:",notnull" json:"name"`
	MimeType    string    `bun:",notnull" json:"mimeType"`
	Size        int64     `bun:",notnull" json:"size"`
	Path        string    `bun:",notnull,unique" json:"-"`
	CreatedAt   time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// DownloadView is one file of a paid DIGITAL order line: URL is a
// short-lived link signed for the buyer (the server fills it in), Count how
// often the buyer downloaded the item's files.
type DownloadView struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	URL      string `json:"url"`
	Count    int64  `json:"count"`
}

// ErrDownloadRevoked: the link was right, but the order no longer grants
// the file (refunded, or never paid).
var ErrDownloadRevoked = errors.New("download no longer granted")

// AddItemFile records a stored file of an item.
func (s *Storage) AddItemFile(ctx context.Context, f *ItemFile) error {
	if _, err := s.db.NewInsert().Model(f).Exec(ctx); err != nil {
		return fmt.Errorf("add item file: %w", err)
	}
	return nil
}

// ItemFiles lists an item's files, oldest first.
func (s *Storage) ItemFiles(ctx context.Context, itemID string) ([]ItemFile, error) {
	files := []ItemFile{}
	if err := s.db.NewSelect().Model(&files).Where("store_item_id = ?", itemID).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("item files: %w", err)
	}
	return files, nil
}

// ItemFileByID loads one file.
func (s *Storage) ItemFileByID(ctx context.Context, id string) (*ItemFile, error) {
	f := new(ItemFile)
	if err := selectOne(ctx, s.db.NewSelect().Model(f).Where("id = ?", id), "item file "+id); err != nil {
		return nil, err
	}
	return f, nil
}

// CountDownload counts one download of file by the buyer of order, in one
// conditional update: only a standing grant (paid, not refunded) of the
// file's item to that buyer counts; otherwise ErrDownloadRevoked.
func (s *Storage) CountDownload(ctx context.Context, orderID, userID string, f *ItemFile) error {
	res, err := s.db.NewUpdate().Model((*Entitlement)(nil)).Set("downloads = downloads + 1").
		Where("order_id = ? AND user_id = ? AND store_item_id = ? AND kind = ? AND revoked_at IS NULL",
			orderID, userID, f.StoreItemID, EntitlementDownload).Exec(ctx)
	if err != nil {
		return fmt.Errorf("count download: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrDownloadRevoked
	}
	return nil
}

// downloadsOf returns the files of the granted lines, keyed like granted
// (order/item), with each grant's count.
func downloadsOf(ctx context.Context, db bun.IDB, ents []Entitlement) (map[string][]DownloadView, error) {
	out := map[string][]DownloadView{}
	if len(ents) == 0 {
		return out, nil
	}
	itemIDs := make([]string, 0, len(ents))
	for _, e := range ents {
		itemIDs = append(itemIDs, e.StoreItemID)
	}
	var files []ItemFile
	if err := db.NewSelect().Model(&files).Where("store_item_id IN (?)", bun.List(uniq(itemIDs))).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load item files: %w", err)
	}
	for _, e := range ents {
		for _, f := range files {
			if f.StoreItemID == e.StoreItemID {
				k := e.OrderID + "/" + e.StoreItemID
				out[k] = append(out[k], DownloadView{ID: f.ID, Name: f.Name, MimeType: f.MimeType, Size: f.Size, Count: e.Downloads})
			}
		}
	}
	return out, nil
}
