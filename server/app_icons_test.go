package server

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

// squarePNG is a w x h PNG: red left half, blue right half.
func squarePNG(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBA{220, 20, 20, 255}
			if x >= w/2 {
				c = color.NRGBA{20, 20, 220, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func uploadIcon(t *testing.T, c *caller, data []byte) response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="icon.png"`)
	h.Set("Content-Type", "image/png")
	fw, _ := mw.CreatePart(h)
	fw.Write(data)
	mw.Close()
	return c.ts.do(t, "POST", "/apps/demo/studio/icon", &body, map[string]string{"Content-Type": mw.FormDataContentType(), "Cookie": sessionCookie + "=" + c.token})
}

// pngOf decodes a served icon and checks its type and size.
func pngOf(t *testing.T, ts *testServer, url string, w, h int) image.Image {
	t.Helper()
	r := ts.do(t, "GET", url, nil, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s: %d %s", url, r.Status, r.Header.Get("Content-Type"))
	}
	img, err := png.Decode(strings.NewReader(r.Body))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("GET %s: %dx%d, want %dx%d", url, b.Dx(), b.Dy(), w, h)
	}
	return img
}

func near(c color.Color, r, g, b uint8) bool {
	cr, cg, cb, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { x := int(a>>8) - int(b); return x > -24 && x < 24 }
	return d(cr, r) && d(cg, g) && d(cb, b)
}

// TestAppIcons: before an upload the manifest and the pages name a
// monogram in the app's colours (PNG at 192 and 512, a maskable one, and
// an SVG); the creator uploads a square icon once through the plain
// multipart form (a non-square or small one is refused), and the favicon,
// Apple touch icon, manifest icons, maskable icon, mail header and Open
// Graph fallback are made from it at their sizes; the manifest is the
// app's (name, short name, colours, icons, scope); removing it brings the
// monogram back.
func TestAppIcons(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	creator := ts.as(t, "creator@demo.test")
	if r := send(t, creator, "PUT", "/api/studio/apps/demo/theme", `{"primaryColor":"#0b6e4f"}`); r.Status != 200 {
		t.Fatalf("theme: %d %s", r.Status, r.Body)
	}

	manifest := func() webManifest {
		r := ts.do(t, "GET", "/apps/demo/manifest.webmanifest", nil, nil)
		var m webManifest
		if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := manifest()
	if m.Name != "Demo Studio" || m.ShortName != "Demo Studio" || m.Scope != "/apps/demo/" || m.StartURL != "/apps/demo/" || m.ThemeColor != "#0b6e4f" {
		t.Fatalf("manifest: %+v", m)
	}
	if len(m.Icons) != 4 || m.Icons[0].Sizes != "192x192" || m.Icons[1].Sizes != "512x512" || m.Icons[2].Purpose != "maskable" ||
		m.Icons[3].Type != "image/svg+xml" || m.Icons[3].Sizes != "any" || !strings.HasPrefix(m.Icons[3].Src, "/apps/demo/icons/monogram.svg?v=") {
		t.Fatalf("monogram icons: %+v", m.Icons)
	}
	mono := pngOf(t, ts, m.Icons[1].Src, 512, 512)
	white := 0
	for y := 0; y < 512; y += 4 {
		for x := 0; x < 512; x += 4 {
			if near(mono.At(x, y), 255, 255, 255) {
				white++
			}
		}
	}
	if !near(mono.At(10, 10), 0x0b, 0x6e, 0x4f) || white < 800 || white > 8000 {
		t.Errorf("monogram is not a white letter on the primary: corner %v, %d of 16384 white", mono.At(10, 10), white)
	}
	pngOf(t, ts, m.Icons[0].Src, 192, 192)
	svg := ts.do(t, "GET", m.Icons[3].Src, nil, nil)
	if svg.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(svg.Body, `fill="#0b6e4f"`) || !strings.Contains(svg.Body, ">D</text>") {
		t.Errorf("monogram svg: %s %s", svg.Header.Get("Content-Type"), svg.Body)
	}
	page := ts.do(t, "GET", "/apps/demo", nil, nil).Body
	if !strings.Contains(page, `<link rel="icon" href="/apps/demo/icons/monogram.svg?v=`) || !strings.Contains(page, `<link rel="apple-touch-icon" href="/apps/demo/icons/apple-touch-icon.png?v=`) {
		t.Errorf("landing head lacks the monogram icons")
	}

	// Refused: not square, too small. Nothing is saved.
	for _, bad := range []struct {
		w, h int
		want string
	}{{300, 200, "must be square: this one is 300 × 200 px"}, {64, 64, "at least 192 × 192 px"}} {
		r := uploadIcon(t, creator, squarePNG(t, bad.w, bad.h))
		if r.Status != 400 || !strings.Contains(r.Body, bad.want) {
			t.Errorf("%dx%d: %d %.300s", bad.w, bad.h, r.Status, r.Body)
		}
	}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); app.LogoMediaID != nil {
		t.Fatal("a refused icon was saved")
	}

	r := uploadIcon(t, creator, squarePNG(t, 256, 256))
	if r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), "/studio/theme?notice=saved") {
		t.Fatalf("upload: %d %s %s", r.Status, r.Header.Get("Location"), r.Body[strings.Index(r.Body, "<body"):])
	}
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	if app.LogoMediaID == nil {
		t.Fatal("the icon was not saved")
	}
	m = manifest()
	if len(m.Icons) != 3 || !strings.Contains(m.Icons[0].Src, "?v="+*app.LogoMediaID) {
		t.Fatalf("uploaded icons: %+v", m.Icons)
	}
	for _, want := range []struct {
		file string
		w, h int
	}{{"favicon.png", 32, 32}, {"apple-touch-icon.png", 180, 180}, {"icon-192.png", 192, 192}, {"icon-512.png", 512, 512},
		{"maskable-512.png", 512, 512}, {"mail-header.png", 96, 96}, {"og.png", 1200, 630}} {
		img := pngOf(t, ts, "/apps/demo/icons/"+want.file+"?v="+*app.LogoMediaID, want.w, want.h)
		// The upload's own colours, red left and blue right of the middle.
		cx, cy := want.w/2, want.h/2
		if !near(img.At(cx-want.h/8, cy), 220, 20, 20) || !near(img.At(cx+want.h/8, cy), 20, 20, 220) {
			t.Errorf("%s is not made of the upload: %v %v", want.file, img.At(cx-want.h/8, cy), img.At(cx+want.h/8, cy))
		}
		switch want.file {
		case "maskable-512.png", "og.png": // the picture inside a margin of the background
			if !near(img.At(2, 2), 255, 255, 255) {
				t.Errorf("%s corner %v, want the background", want.file, img.At(2, 2))
			}
		}
	}
	page = ts.do(t, "GET", "/apps/demo", nil, nil).Body
	if !strings.Contains(page, `<link rel="icon" href="/apps/demo/icons/favicon.png?v=`+*app.LogoMediaID+`" type="image/png">`) {
		t.Errorf("landing head lacks the uploaded favicon")
	}
	if b, err := ts.store.MailBrandOf(ctx, app.ID); err != nil || b.IconURL != "/apps/demo/icons/mail-header.png?v="+*app.LogoMediaID || b.Color != "#0b6e4f" {
		t.Errorf("mail brand: %+v %v", b, err)
	}

	r = send(t, creator, "POST", "/apps/demo/studio/icon", "remove=1")
	if r.Status != 303 {
		t.Fatalf("remove: %d", r.Status)
	}
	if m = manifest(); len(m.Icons) != 4 || !strings.Contains(m.Icons[3].Src, "monogram.svg") {
		t.Errorf("after removing: %+v", m.Icons)
	}
}
