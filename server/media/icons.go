package media

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// An app's icons (issue 42 item 2): from one square upload (or, before
// one, a monogram in the app's colours) the favicon, the Apple touch icon,
// the manifest's 192 and 512 px icons and a maskable one, the mail header
// and the Open Graph fallback, all PNG.

// IconSpec is one derived icon: its file name, its size, how much of it is
// a margin around the image (a maskable icon keeps its picture in the
// middle 80%), and whether it is painted on the background colour (where
// transparency would show black or nothing: iOS, link previews).
type IconSpec struct {
	Name   string
	W, H   int
	Margin float64
	Opaque bool
}

// IconSpecs are the icons made of an app's icon.
var IconSpecs = []IconSpec{
	{Name: "favicon.png", W: 32, H: 32},
	{Name: "apple-touch-icon.png", W: 180, H: 180, Opaque: true},
	{Name: "icon-192.png", W: 192, H: 192},
	{Name: "icon-512.png", W: 512, H: 512},
	{Name: "maskable-512.png", W: 512, H: 512, Margin: 0.1, Opaque: true},
	{Name: "mail-header.png", W: 96, H: 96},
	{Name: "og.png", W: 1200, H: 630, Opaque: true},
}

// IconSpecByName is the spec of name, false when there is none.
func IconSpecByName(name string) (IconSpec, bool) {
	for _, s := range IconSpecs {
		if s.Name == name {
			return s, true
		}
	}
	return IconSpec{}, false
}

// DecodeIcon decodes an uploaded icon (upright) and says whether it is
// square.
func DecodeIcon(data []byte) (image.Image, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width*cfg.Height > maxDecodePixels {
		return nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	if format == "jpeg" {
		src = upright(src, exifOrientation(data))
	}
	return src, nil
}

// RenderIcon draws src (square) as spec: scaled to the height less the
// margins, centred, on bg where the spec is opaque. PNG bytes.
func RenderIcon(src image.Image, spec IconSpec, bg color.Color) ([]byte, error) {
	dst := image.NewNRGBA(image.Rect(0, 0, spec.W, spec.H))
	if spec.Opaque {
		draw.Draw(dst, dst.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	}
	side := min(spec.W, spec.H)
	if spec.W != spec.H {
		side = spec.H * 2 / 3 // the link preview: the icon in the middle of a band
	}
	inner := side - 2*int(float64(side)*spec.Margin)
	x, y := (spec.W-inner)/2, (spec.H-inner)/2
	draw.CatmullRom.Scale(dst, image.Rect(x, y, x+inner, y+inner), src, src.Bounds(), draw.Over, nil)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// MakeIcons reads the square icon at key and stores each of IconSpecs at
// iconKey(name).
func MakeIcons(ctx context.Context, files Storage, key string, bg color.Color, iconKey func(name string) string) error {
	f, _, err := files.Open(ctx, key)
	if err != nil {
		return fmt.Errorf("open %s: %w", key, err)
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	src, err := DecodeIcon(buf.Bytes())
	if err != nil {
		return err
	}
	for _, spec := range IconSpecs {
		b, err := RenderIcon(src, spec, bg)
		if err != nil {
			return fmt.Errorf("icon %s: %w", spec.Name, err)
		}
		if err := files.Put(ctx, iconKey(spec.Name), bytes.NewReader(b), int64(len(b)), "image/png"); err != nil {
			return fmt.Errorf("store icon %s: %w", spec.Name, err)
		}
	}
	return nil
}

var monogramFont = func() *opentype.Font {
	f, err := opentype.Parse(gobold.TTF)
	if err != nil {
		panic(err)
	}
	return f
}()

// MonogramLetter is the letter a monogram shows: the name's first letter
// or digit, upper-cased ("M" when it has none).
func MonogramLetter(name string) string {
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return strings.ToUpper(string(r))
		}
	}
	return "M"
}

// Monogram is a 512 px square of bg with letter in fg in its middle: the
// app's icon until one is uploaded.
func Monogram(letter string, fg, bg color.Color) (image.Image, error) {
	const size = 512
	dst := image.NewNRGBA(image.Rect(0, 0, size, size))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	face, err := opentype.NewFace(monogramFont, &opentype.FaceOptions{Size: 300, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, err
	}
	defer face.Close()
	r, _ := utf8.DecodeRuneInString(letter)
	if _, ok := face.GlyphAdvance(r); !ok {
		r = 'M'
	}
	bounds, adv, _ := face.GlyphBounds(r)
	_ = adv
	w := (bounds.Max.X - bounds.Min.X).Ceil()
	h := (bounds.Max.Y - bounds.Min.Y).Ceil()
	d := font.Drawer{Dst: dst, Src: image.NewUniform(fg), Face: face,
		Dot: fixed.P((size-w)/2-bounds.Min.X.Floor(), (size-h)/2-bounds.Min.Y.Floor())}
	d.DrawString(string(r))
	return dst, nil
}
