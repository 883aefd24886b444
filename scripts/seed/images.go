package seed

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"sync"

	"marquee/server/media"
	"marquee/store"
)

// imageKind fixes the size, format, storage folder and mediaKey of a picture.
type imageKind struct {
	w, h        int
	png         bool // PNG with a transparent background (title/logo)
	folder, key string
}

var (
	kindBanner      = imageKind{1200, 400, false, "banner", "banner"}
	kindTitle       = imageKind{400, 120, true, "title", "title"}
	kindProfile     = imageKind{400, 400, false, "profile", "profile"}
	kindPost        = imageKind{800, 800, false, "posts", "post"}
	kindStory       = imageKind{720, 1280, false, "stories", "story"}
	kindEventBanner = imageKind{1200, 600, false, "events", "event-banner"}
	kindEventMedia  = imageKind{800, 800, false, "events", "event"}
	kindItem        = imageKind{600, 600, false, "items", "item"}
)

// palettes are gradient start/end colours and an accent; each picture takes
// the next one so neighbouring images look distinct.
var palettes = [][3]color.NRGBA{
	{{0x2b, 0x1a, 0x5e, 255}, {0xe9, 0x4f, 0x8a, 255}, {0xff, 0xd1, 0x66, 255}},
	{{0x0b, 0x3c, 0x5d, 255}, {0x32, 0xc4, 0xc0, 255}, {0xf2, 0xf5, 0xa9, 255}},
	{{0x3d, 0x1e, 0x12, 255}, {0xf0, 0x8a, 0x24, 255}, {0xff, 0xf1, 0xd6, 255}},
	{{0x10, 0x2a, 0x1c, 255}, {0x6b, 0xc4, 0x6d, 255}, {0xe8, 0xf9, 0xd2, 255}},
	{{0x1f, 0x1f, 0x3a, 255}, {0x7a, 0x5c, 0xfa, 255}, {0x9e, 0xf0, 0xff, 255}},
	{{0x5a, 0x0e, 0x24, 255}, {0xff, 0x6b, 0x6b, 255}, {0xff, 0xe6, 0xe6, 255}},
	{{0x14, 0x2d, 0x4c, 255}, {0xf5, 0xb0, 0x41, 255}, {0xfd, 0xf6, 0xe3, 255}},
	{{0x26, 0x0f, 0x3d, 255}, {0x3e, 0xd6, 0xa0, 255}, {0xff, 0x9f, 0xf3, 255}},
}

// image draws a picture, stores it and inserts its uploaded Media row.
// It returns the media id.
func (s *seeder) image(ctx context.Context, appID, ownerID string, k imageKind, name string) (string, error) {
	n := s.images
	s.images++
	p, err := pictureOf(k, n)
	if err != nil {
		return "", err
	}
	id := store.NewID()
	key := fmt.Sprintf("apps/%s/%s/%s.%s", appID, k.folder, id, p.ext)
	if err := s.storage.Put(ctx, key, bytes.NewReader(p.data), int64(len(p.data)), p.mime); err != nil {
		return "", fmt.Errorf("store %s: %w", key, err)
	}
	// The resized copies an upload gets (server/media), so the demo's
	// pages list them in srcset as a creator's real uploads would.
	for i, w := range p.variants.Widths {
		vk := store.VariantKey(key, w, p.variants.MimeType)
		if err := s.storage.Put(ctx, vk, bytes.NewReader(p.copies[i]), int64(len(p.copies[i])), p.variants.MimeType); err != nil {
			return "", fmt.Errorf("store %s: %w", vk, err)
		}
	}
	m := &store.Media{ID: id, AppID: &appID, OwnerID: ownerID, Name: name, Type: store.MediaImage,
		Size: int64(len(p.data)), MimeType: p.mime, Path: key, MediaKey: k.key, Status: store.MediaUploaded,
		CreatedAt: s.now, Width: p.variants.Width, Height: p.variants.Height,
		Variants: store.JoinWidths(p.variants.Widths), VariantType: p.variants.MimeType}
	if err := s.insert(ctx, m); err != nil {
		return "", err
	}
	return id, nil
}

// picture is a drawn, encoded and resized demo image. The same kind and n
// always give the same bytes, so each is made once per process: tests seed
// the demo many times.
type picture struct {
	data      []byte
	mime, ext string
	variants  media.Variants
	copies    [][]byte
}

type pictureKey struct {
	k imageKind
	n int
}

var (
	picturesMu sync.Mutex
	pictures   = map[pictureKey]*picture{}
)

func pictureOf(k imageKind, n int) (*picture, error) {
	picturesMu.Lock()
	defer picturesMu.Unlock()
	if p, ok := pictures[pictureKey{k, n}]; ok {
		return p, nil
	}
	data, mime, ext, err := encodePicture(k, n)
	if err != nil {
		return nil, err
	}
	v, copies, err := media.Resize(data)
	if err != nil {
		return nil, fmt.Errorf("resize picture: %w", err)
	}
	p := &picture{data: data, mime: mime, ext: ext, variants: v, copies: copies}
	pictures[pictureKey{k, n}] = p
	return p, nil
}

func encodePicture(k imageKind, n int) (data []byte, mime, ext string, err error) {
	img := drawPicture(k.w, k.h, n, k.png)
	var buf bytes.Buffer
	if k.png {
		err = png.Encode(&buf, img)
		mime, ext = "image/png", "png"
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80})
		mime, ext = "image/jpeg", "jpg"
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("encode picture: %w", err)
	}
	return buf.Bytes(), mime, ext, nil
}

type circle struct {
	x, y, r float64
	c       color.NRGBA
	alpha   float64
}

// drawPicture paints a diagonal gradient, a few soft discs and an equaliser
// of bars along the bottom (the demo creator makes music). The same n always
// gives the same picture. With transparent set, only a rounded badge is
// opaque, as a title or logo image would be.
func drawPicture(w, h, n int, transparent bool) *image.NRGBA {
	pal := palettes[n%len(palettes)]
	rng := rand.New(rand.NewPCG(uint64(n), 0x5eed))
	fw, fh := float64(w), float64(h)
	short := math.Min(fw, fh)

	var discs []circle
	for i := 0; i < 3+rng.IntN(3); i++ {
		c := pal[2]
		if i%2 == 1 {
			c = pal[0]
		}
		discs = append(discs, circle{x: rng.Float64() * fw, y: rng.Float64() * fh,
			r: short * (0.12 + rng.Float64()*0.25), c: c, alpha: 0.35 + rng.Float64()*0.3})
	}
	bars := 12 + rng.IntN(12)
	heights := make([]float64, bars)
	for i := range heights {
		heights[i] = fh * (0.08 + rng.Float64()*0.3)
	}
	barW := fw / float64(bars)
	white := color.NRGBA{255, 255, 255, 255}

	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x), float64(y)
			if transparent && !inBadge(fx, fy, fw, fh) {
				continue // stays fully transparent
			}
			c := lerp(pal[0], pal[1], (fx/fw+fy/fh)/2)
			for _, d := range discs {
				if dx, dy := fx-d.x, fy-d.y; dx*dx+dy*dy < d.r*d.r {
					c = lerp(c, d.c, d.alpha)
				}
			}
			bar := int(fx / barW)
			inGap := fx-float64(bar)*barW > barW*0.7
			if !inGap && fy > fh-heights[bar] {
				c = lerp(c, white, 0.35)
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// inBadge reports whether a point lies in a pill shape inset 6 px.
func inBadge(x, y, w, h float64) bool {
	const inset = 6
	r := h/2 - inset
	cy := h / 2
	left, right := inset+r, w-inset-r
	switch {
	case x < left:
		return (x-left)*(x-left)+(y-cy)*(y-cy) <= r*r
	case x > right:
		return (x-right)*(x-right)+(y-cy)*(y-cy) <= r*r
	default:
		return y >= inset && y <= h-inset
	}
}

func lerp(a, b color.NRGBA, t float64) color.NRGBA {
	t = math.Max(0, math.Min(1, t))
	mix := func(p, q uint8) uint8 { return uint8(float64(p) + (float64(q)-float64(p))*t + 0.5) }
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}
