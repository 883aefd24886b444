package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// CreateMedia inserts a PENDING media record; the server chose its Path.
func (s *Storage) CreateMedia(ctx context.Context, m *Media) (MediaView, error) {
	m.Status = MediaPending
	if _, err := s.db.NewInsert().Model(m).Exec(ctx); err != nil {
		return MediaView{}, fmt.Errorf("insert media: %w", err)
	}
	return s.mediaView(ctx, m, false, false)
}

// MediaRecord loads the raw media row (with owner and status), by id.
func (s *Storage) MediaRecord(ctx context.Context, id string) (*Media, error) {
	return s.mediaWhere(ctx, "id = ?", id)
}

// MediaByPath loads the media row stored under an object key.
func (s *Storage) MediaByPath(ctx context.Context, key string) (*Media, error) {
	return s.mediaWhere(ctx, "path = ?", key)
}

func (s *Storage) mediaWhere(ctx context.Context, where string, arg string) (*Media, error) {
	m := new(Media)
	if err := selectOne(ctx, s.db.NewSelect().Model(m).Where(where, arg), "media"); err != nil {
		return nil, err
	}
	return m, nil
}

// MarkMediaUploaded records that the bytes were received and checked; then,
// when given, runs in the same transaction (to enqueue the job that makes
// the image's resized copies, so the job exists exactly when the upload
// counts).
func (s *Storage) MarkMediaUploaded(ctx context.Context, id string, then ...func(ctx context.Context, tx bun.IDB) error) error {
	if len(then) > 0 {
		return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if err := markUploaded(ctx, tx, id); err != nil {
				return err
			}
			for _, fn := range then {
				if err := fn(ctx, tx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return markUploaded(ctx, s.db, id)
}

func markUploaded(ctx context.Context, db bun.IDB, id string) error {
	if _, err := db.NewUpdate().Model((*Media)(nil)).Set("status = ?", MediaUploaded).Where("id = ?", id).Exec(ctx); err != nil {
		return fmt.Errorf("mark media %s uploaded: %w", id, err)
	}
	return nil
}

// SetProfilePicture points the user's profile at an uploaded image.
func (s *Storage) SetProfilePicture(ctx context.Context, userID, mediaID string) error {
	if _, err := s.db.NewUpdate().Model((*User)(nil)).Set("profile_media_id = ?", mediaID).
		Set("updated_at = current_timestamp").Where("id = ?", userID).Exec(ctx); err != nil {
		return fmt.Errorf("set profile picture of %s: %w", userID, err)
	}
	s.sessions.forgetUser(userID)
	// Posts and attendee lists show the picture.
	s.InvalidateUser(ctx, userID)
	return nil
}

// MediaViewOf signs a raw media row for a response. Only account media is
// known to be public without looking at its app.
func (s *Storage) MediaViewOf(ctx context.Context, m *Media) (MediaView, error) {
	return s.mediaView(ctx, m, m.AppID == nil, false)
}

// SetMediaVariants records an image's intrinsic size and the resized copies
// stored beside it.
func (s *Storage) SetMediaVariants(ctx context.Context, id string, width, height int, widths []int, variantType string) error {
	if _, err := s.db.NewUpdate().Model((*Media)(nil)).Set("width = ?", width).Set("height = ?", height).
		Set("variants = ?", JoinWidths(widths)).Set("variant_type = ?", variantType).Where("id = ?", id).Exec(ctx); err != nil {
		return fmt.Errorf("record variants of media %s: %w", id, err)
	}
	return nil
}

// UnsizedImages lists the uploaded images whose size and copies are not
// recorded (uploaded before copies were made).
func (s *Storage) UnsizedImages(ctx context.Context) ([]Media, error) {
	var rows []Media
	if err := s.db.NewSelect().Model(&rows).Where("type = ? AND status = ? AND width = 0", MediaImage, MediaUploaded).
		Order("created_at").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load unsized images: %w", err)
	}
	return rows, nil
}
