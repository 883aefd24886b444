package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// MediaView is a media record as the API returns it, with a URL to load it.
type MediaView struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Size        int64     `json:"size"`
	MimeType    string    `json:"mimeType"`
	Path        string    `json:"path"`
	Description string    `json:"description"`
	MediaKey    string    `json:"mediaKey"`
	AppID       *string   `json:"appId"`
	SignedURL   string    `json:"signedUrl"`
	CreatedAt   time.Time `json:"createdAt"`
}

func (s *Storage) mediaView(ctx context.Context, m *Media) (MediaView, error) {
	url, err := s.Media.SignedURL(ctx, m.Path)
	if err != nil {
		return MediaView{}, fmt.Errorf("sign media %s: %w", m.ID, err)
	}
	return MediaView{
		ID: m.ID, Name: m.Name, Type: m.Type, Size: m.Size, MimeType: m.MimeType,
		Path: m.Path, Description: m.Description, MediaKey: m.MediaKey, AppID: m.AppID,
		SignedURL: url, CreatedAt: m.CreatedAt,
	}, nil
}

// mediaViews loads and signs media by id, in one query.
func (s *Storage) mediaViews(ctx context.Context, db bun.IDB, ids []string) (map[string]MediaView, error) {
	out := make(map[string]MediaView, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []Media
	if err := db.NewSelect().Model(&rows).Where("id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load media: %w", err)
	}
	for i := range rows {
		v, err := s.mediaView(ctx, &rows[i])
		if err != nil {
			return nil, err
		}
		out[v.ID] = v
	}
	return out, nil
}

// MediaByID loads one media view, or ErrNotFound.
func (s *Storage) MediaByID(ctx context.Context, id string) (MediaView, error) {
	views, err := s.mediaViews(ctx, s.DB, []string{id})
	if err != nil {
		return MediaView{}, err
	}
	v, ok := views[id]
	if !ok {
		return MediaView{}, ErrNotFound
	}
	return v, nil
}

func derefIDs(ptrs ...*string) []string {
	var ids []string
	for _, p := range ptrs {
		if p != nil && *p != "" {
			ids = append(ids, *p)
		}
	}
	return ids
}

func pick(views map[string]MediaView, id *string) *MediaView {
	if id == nil {
		return nil
	}
	if v, ok := views[*id]; ok {
		return &v
	}
	return nil
}
