package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"

	"marquee/server/media"
	"marquee/store"
)

// MediaVariantsArgs: an image upload to S3 was checked; its resized copies
// are made in the background (the bytes are in the bucket, not here, and
// resizing takes a good fraction of a second of CPU). Local uploads are
// resized in their PUT instead, by the same ResizeImage.
type MediaVariantsArgs struct {
	MediaID string `json:"mediaId"`
}

func (MediaVariantsArgs) Kind() string { return "media_variants" }

type MediaVariantsWorker struct {
	river.WorkerDefaults[MediaVariantsArgs]
	Store  *store.Storage
	Files  media.Storage
	Logger *slog.Logger
}

func (w *MediaVariantsWorker) Work(ctx context.Context, job *river.Job[MediaVariantsArgs]) error {
	m, err := w.Store.MediaRecord(ctx, job.Args.MediaID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("load media: %w", err)
	}
	if m.Width > 0 {
		return nil // done by an earlier run
	}
	if err := ResizeImage(ctx, w.Store, w.Files, m, w.Logger); err != nil {
		return err
	}
	// Pages already showing the image were rendered without its sizes.
	if m.AppID != nil {
		w.Store.InvalidateLanding(ctx, *m.AppID)
	} else {
		w.Store.InvalidateUser(ctx, m.OwnerID) // a profile picture
	}
	return nil
}

// ResizeImage makes the resized copies of an uploaded image and records
// them with its intrinsic size. A file that cannot be decoded (AVIF, a
// corrupt image) keeps no copies and is shown as uploaded.
func ResizeImage(ctx context.Context, st *store.Storage, files media.Storage, m *store.Media, logger *slog.Logger) error {
	if m.Type != store.MediaImage || m.Status != store.MediaUploaded {
		return nil
	}
	v, err := media.MakeVariants(ctx, files, m.Path, func(w int, mimeType string) string {
		return store.VariantKey(m.Path, w, mimeType)
	})
	if errors.Is(err, media.ErrNotImage) {
		logger.Info("image not resized", "media", m.ID, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("resize media %s: %w", m.ID, err)
	}
	if err := st.SetMediaVariants(ctx, m.ID, v.Width, v.Height, v.Widths, v.MimeType); err != nil {
		return err
	}
	m.Width, m.Height, m.Variants, m.VariantType = v.Width, v.Height, store.JoinWidths(v.Widths), v.MimeType
	return nil
}
