package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"

	// Decoders of the image types uploads may have (api mediaTypes); AVIF
	// has no Go decoder, so AVIF uploads get no variants.
	_ "image/gif"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// VariantWidths are the widths resized copies are made at: thumbnails, cards,
// a phone's screen at 1x/2x and a desktop column. Pages list the ones that
// exist in srcset and the browser picks.
var VariantWidths = []int{96, 192, 384, 768, 1200}

// maxDecodePixels bounds what is decoded: a small file can declare a huge
// canvas (a decompression bomb), and decoding costs 4 bytes per pixel.
const maxDecodePixels = 50_000_000

// Variants is what MakeVariants made: the original's size and the widths
// stored beside it, all in one format.
type Variants struct {
	Width, Height int
	Widths        []int
	MimeType      string // of the variants: image/jpeg, or image/png for images with transparency
}

// ErrNotImage means the stored bytes are not an image this server can resize.
var ErrNotImage = errors.New("media: not a decodable image")

// MakeVariants reads the image at key, stores its resized copies (Resize)
// at variantKey(width, type) and reports what it made.
func MakeVariants(ctx context.Context, files Storage, key string, variantKey func(w int, mimeType string) string) (Variants, error) {
	f, _, err := files.Open(ctx, key)
	if err != nil {
		return Variants{}, fmt.Errorf("open %s: %w", key, err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return Variants{}, fmt.Errorf("read %s: %w", key, err)
	}
	v, copies, err := Resize(buf.Bytes())
	if err != nil {
		return Variants{}, fmt.Errorf("%s: %w", key, err)
	}
	for i, w := range v.Widths {
		vk := variantKey(w, v.MimeType)
		if err := files.Put(ctx, vk, bytes.NewReader(copies[i]), int64(len(copies[i])), v.MimeType); err != nil {
			return Variants{}, fmt.Errorf("store %s: %w", vk, err)
		}
	}
	return v, nil
}

// Resize decodes an image and encodes a copy at each of VariantWidths
// narrower than the original (never upscaled, aspect ratio kept), in the
// order of v.Widths. An animated GIF keeps its animation only in the
// original, and an image too large to decode safely is not resized: both
// get their intrinsic size and no copies.
func Resize(data []byte) (v Variants, copies [][]byte, err error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Variants{}, nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	v = Variants{Width: cfg.Width, Height: cfg.Height}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxDecodePixels || format == "gif" {
		return v, nil, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Variants{}, nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	opaque := true
	if o, ok := src.(interface{ Opaque() bool }); ok {
		opaque = o.Opaque()
	}
	v.MimeType = "image/jpeg"
	if !opaque {
		v.MimeType = "image/png"
	}

	// Largest first, each made from the previous one: every step shrinks by
	// at most about 2x, which keeps Catmull-Rom sharp and costs far less
	// than scaling the full-size original five times.
	prev := src
	for i := len(VariantWidths) - 1; i >= 0; i-- {
		w := VariantWidths[i]
		if w >= cfg.Width {
			continue
		}
		h := max(1, (cfg.Height*w+cfg.Width/2)/cfg.Width)
		dst := image.NewNRGBA(image.Rect(0, 0, w, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), prev, prev.Bounds(), draw.Src, nil)
		var enc bytes.Buffer
		if opaque {
			err = jpeg.Encode(&enc, dst, &jpeg.Options{Quality: 82})
		} else {
			err = png.Encode(&enc, dst)
		}
		if err != nil {
			return Variants{}, nil, fmt.Errorf("encode %dw: %w", w, err)
		}
		v.Widths = append([]int{w}, v.Widths...)
		copies = append([][]byte{enc.Bytes()}, copies...)
		prev = dst
	}
	return v, copies, nil
}
