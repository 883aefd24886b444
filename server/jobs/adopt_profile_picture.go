package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"marquee/server/media"
	"marquee/store"
)

// AdoptProfilePictureArgs: a profile picture was created for upload
// straight to S3. SPEC.md's flow is create then upload, with no call after
// the upload, so the server watches for the file and makes it the owner's
// picture once it is there and checks out.
type AdoptProfilePictureArgs struct {
	MediaID string `json:"mediaId"`
}

func (AdoptProfilePictureArgs) Kind() string { return "adopt_profile_picture" }

// How often the bucket is checked, and for how long: a presigned upload
// URL lives 15 minutes (uploadURLTTL), so half an hour is ample.
const (
	profilePollEvery = 3 * time.Second
	profilePollFor   = 30 * time.Minute
)

type AdoptProfilePictureWorker struct {
	river.WorkerDefaults[AdoptProfilePictureArgs]
	Store  *store.Storage
	Files  media.Storage
	Logger *slog.Logger
}

func (w *AdoptProfilePictureWorker) Work(ctx context.Context, job *river.Job[AdoptProfilePictureArgs]) error {
	m, err := w.Store.MediaRecord(ctx, job.Args.MediaID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("load profile media: %w", err)
	}
	if m.Status != store.MediaUploaded {
		switch err := media.Verify(ctx, w.Files, m.Path, m.Size, m.MimeType); {
		case errors.Is(err, media.ErrIncomplete):
			if time.Since(m.CreatedAt) < profilePollFor {
				return river.JobSnooze(profilePollEvery)
			}
			return nil // never uploaded
		case errors.Is(err, media.ErrSizeMismatch), errors.Is(err, media.ErrTypeMismatch):
			if derr := w.Files.Delete(ctx, m.Path); derr != nil {
				w.Logger.Warn("discard rejected profile upload", "media", m.ID, "err", derr)
			}
			return nil
		case err != nil:
			return err
		}
		if err := w.Store.MarkMediaUploaded(ctx, m.ID, func(ctx context.Context, tx bun.IDB) error {
			return Enqueue(ctx, tx, MediaVariantsArgs{MediaID: m.ID})
		}); err != nil {
			return err
		}
	}
	return w.Store.SetProfilePicture(ctx, m.OwnerID, m.ID)
}
