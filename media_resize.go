package main

import (
	"context"
	"fmt"
	"log/slog"

	"marquee/assemble"
	"marquee/server/jobs"
)

// resizeMedia makes the resized copies of uploaded images that have none:
// the images uploaded before copies were made at upload. Safe to repeat; an
// image that cannot be decoded (AVIF) is left as it is.
func resizeMedia(ctx context.Context, logger *slog.Logger) error {
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	images, err := a.Storage.UnsizedImages(ctx)
	if err != nil {
		return err
	}
	done, failed := 0, 0
	for i := range images {
		if err := jobs.ResizeImage(ctx, a.Storage, a.Files, &images[i], logger); err != nil {
			logger.Warn("resize image", "media", images[i].ID, "err", err)
			failed++
			continue
		}
		if images[i].Width > 0 {
			done++
		}
	}
	if done > 0 {
		// Pages already cached show these images without their copies.
		a.Storage.InvalidateAllApps(ctx)
	}
	fmt.Printf("resized %d of %d images without copies (%d failed)\n", done, len(images), failed)
	if failed > 0 {
		return fmt.Errorf("%d images could not be resized", failed)
	}
	return nil
}
