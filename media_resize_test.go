package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"marquee/assemble"
	"marquee/store"
)

// Images stored before copies were made at upload get them from
// `marquee media resize`: here the demo's images with their sizes forgotten.
func TestMediaResize(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DATABASE_URL", filepath.Join(dir, "m.db"))
	t.Setenv("MEDIA_DIR", filepath.Join(dir, "media"))
	t.Setenv("REDIS_URL", "")
	t.Setenv("S3_ENDPOINT", "")
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := seedDemo(ctx, logger); err != nil {
		t.Fatal(err)
	}
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var banner store.Media
	if err := a.DB.NewSelect().Model(&banner).Where("media_key = 'banner'").Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DB.NewUpdate().Model((*store.Media)(nil)).Set("width = 0, height = 0, variants = '', variant_type = ''").
		Where("type = ?", store.MediaImage).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"media", "resize"}, logger); err != nil {
		t.Fatal(err)
	}
	left, err := a.Storage.UnsizedImages(ctx)
	if err != nil || len(left) != 0 {
		t.Fatalf("%d images left without copies: %v", len(left), err)
	}
	var got store.Media
	if err := a.DB.NewSelect().Model(&got).Where("id = ?", banner.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if got.Width != banner.Width || got.Height != banner.Height || got.Variants != banner.Variants || got.VariantType != banner.VariantType {
		t.Errorf("banner after resize: %dx%d %q %q, want %dx%d %q %q", got.Width, got.Height, got.Variants, got.VariantType,
			banner.Width, banner.Height, banner.Variants, banner.VariantType)
	}
}
