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

	"github.com/rwcarlsen/goexif/exif"
	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
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
	// A phone stores a portrait photo as landscape pixels plus an EXIF
	// orientation, which browsers apply to the original: the copies and
	// the recorded size must be upright the same way.
	orientation := 1
	if format == "jpeg" {
		orientation = exifOrientation(data)
	}
	v = Variants{Width: cfg.Width, Height: cfg.Height}
	if orientation >= 5 {
		v.Width, v.Height = cfg.Height, cfg.Width
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxDecodePixels || format == "gif" {
		return v, nil, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Variants{}, nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	src = upright(src, orientation)
	cfg.Width, cfg.Height = v.Width, v.Height
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

func exifOrientation(data []byte) int {
	x, err := exif.Decode(bytes.NewReader(data))
	if err != nil {
		return 1
	}
	tag, err := x.Get(exif.Orientation)
	if err != nil {
		return 1
	}
	o, err := tag.Int(0)
	if err != nil || o < 1 || o > 8 {
		return 1
	}
	return o
}

// upright applies an EXIF orientation (1 to 8): the affine map of each
// takes the stored pixels to where a viewer sees them. Whole-pixel flips
// and quarter turns, so nearest-neighbour is exact.
func upright(src image.Image, orientation int) image.Image {
	if orientation <= 1 {
		return src
	}
	b := src.Bounds()
	w, h := float64(b.Dx()), float64(b.Dy())
	m := map[int]f64.Aff3{
		2: {-1, 0, w, 0, 1, 0},
		3: {-1, 0, w, 0, -1, h},
		4: {1, 0, 0, 0, -1, h},
		5: {0, 1, 0, 1, 0, 0},
		6: {0, -1, h, 1, 0, 0},
		7: {0, -1, h, -1, 0, w},
		8: {0, 1, 0, -1, 0, w},
	}[orientation]
	dw, dh := b.Dx(), b.Dy()
	if orientation >= 5 {
		dw, dh = dh, dw
	}
	// Translate the source to the origin first: the maps assume it.
	m[2] -= m[0]*float64(b.Min.X) + m[1]*float64(b.Min.Y)
	m[5] -= m[3]*float64(b.Min.X) + m[4]*float64(b.Min.Y)
	dst := image.NewNRGBA(image.Rect(0, 0, dw, dh))
	draw.NearestNeighbor.Transform(dst, m, src, b, draw.Src, nil)
	return dst
}
