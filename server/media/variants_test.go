package media

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

// withOrientation inserts an EXIF block holding only an orientation tag
// after a JPEG's start marker, as a phone camera writes it.
func withOrientation(jpg []byte, o byte) []byte {
	tiff := []byte{'M', 'M', 0, 42, 0, 0, 0, 8, // big-endian header, IFD0 at 8
		0, 1, // one entry
		0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, o, 0, 0, // Orientation, SHORT, 1 value
		0, 0, 0, 0} // no next IFD
	payload := append([]byte("Exif\x00\x00"), tiff...)
	n := len(payload) + 2
	app1 := append([]byte{0xFF, 0xE1, byte(n >> 8), byte(n)}, payload...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, app1...)
	return append(out, jpg[2:]...)
}

// A portrait photo stored sideways (orientation 6: turn 90 degrees
// clockwise to view) gets upright copies and its upright size recorded.
func TestResizeAppliesEXIFOrientation(t *testing.T) {
	// Stored 1600x900: red grows to the right, green downwards.
	im := image.NewNRGBA(image.Rect(0, 0, 1600, 900))
	for y := 0; y < 900; y++ {
		for x := 0; x < 1600; x++ {
			im.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / 1600), uint8(y * 255 / 900), 0, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, im, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	v, copies, err := Resize(withOrientation(buf.Bytes(), 6))
	if err != nil {
		t.Fatal(err)
	}
	if v.Width != 900 || v.Height != 1600 {
		t.Fatalf("recorded %dx%d, want the upright 900x1600", v.Width, v.Height)
	}
	if len(v.Widths) != 4 || v.Widths[3] != 768 {
		t.Fatalf("widths %v, want 96 to 768 (the upright width is 900)", v.Widths)
	}
	small, err := jpeg.Decode(bytes.NewReader(copies[2])) // 384 wide
	if err != nil {
		t.Fatal(err)
	}
	if b := small.Bounds(); b.Dx() != 384 || b.Dy() != 683 {
		t.Fatalf("384 copy is %dx%d", b.Dx(), b.Dy())
	}
	// Turned clockwise, the stored bottom-left corner (no red, full green)
	// is the viewer's top-left.
	r, g, _, _ := small.At(4, 4).RGBA()
	if r>>8 > 40 || g>>8 < 215 {
		t.Errorf("top-left of the copy is r=%d g=%d: not turned upright", r>>8, g>>8)
	}
}
