package server

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/store"
)

// photo encodes a w x h picture as JPEG, or as PNG with a transparent
// corner when asPNG.
func photo(t *testing.T, w, h int, asPNG bool) []byte {
	t.Helper()
	im := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			a := uint8(255)
			if asPNG && x < w/4 && y < h/4 {
				a = 0
			}
			im.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, a})
		}
	}
	var buf bytes.Buffer
	var err error
	if asPNG {
		err = png.Encode(&buf, im)
	} else {
		err = jpeg.Encode(&buf, im, &jpeg.Options{Quality: 80})
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeSize decodes an image and answers its size and format.
func decodeSize(t *testing.T, what string, data []byte) (int, int, string) {
	t.Helper()
	im, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: not an image: %v", what, err)
	}
	return im.Bounds().Dx(), im.Bounds().Dy(), format
}

// checkVariants loads every variant of m at its stable URL and checks that
// each one is an image of its width with the original's shape.
func checkVariants(t *testing.T, ts *testServer, m *store.Media, origW, origH int, want []int, wantFormat string) {
	t.Helper()
	if m.Width != origW || m.Height != origH {
		t.Errorf("intrinsic size recorded as %dx%d, want %dx%d", m.Width, m.Height, origW, origH)
	}
	if got := store.JoinWidths(m.VariantWidths()); got != store.JoinWidths(want) {
		t.Fatalf("variants %q, want %q", got, store.JoinWidths(want))
	}
	for _, w := range want {
		path := store.PublicMediaPath(m.ID, strconv.Itoa(w))
		r := ts.do(t, "GET", path, nil, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, r.Status)
		}
		gw, gh, format := decodeSize(t, path, []byte(r.Body))
		wantH := (origH*w + origW/2) / origW
		if gw != w || gh != wantH || format != wantFormat {
			t.Errorf("%s is %dx%d %s, want %dx%d %s", path, gw, gh, format, w, wantH, wantFormat)
		}
		if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "public") {
			t.Errorf("%s Cache-Control %q", path, cc)
		}
	}
}

// An image uploaded to local storage gets its copies in the upload itself:
// 96 to 1200 px wide from a 1600 px original, only the narrower widths from
// a small one (never upscaled), JPEG copies of a photo and PNG copies of an
// image with transparency.
func TestImageVariantsLocal(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)
		ctx := context.Background()
		demo, _ := ts.store.AppByIDOrName(ctx, "demo")
		creator := commUser(t, ts, "creator@demo.test")
		upload := func(data []byte, mimeType string) *store.Media {
			t.Helper()
			r, cm := mediaCreate(t, ts, creator, mediaReq(demo.ID, mimeType, len(data), "post"))
			if r.Status != http.StatusCreated {
				t.Fatalf("create media: %d %s", r.Status, r.Body)
			}
			commExpect(t, "upload", localPut(t, ts, cm.PresignedUploadURL, mimeType, data), 200, "true")
			m, err := ts.store.MediaRecord(ctx, cm.Media.ID)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		all := []int{96, 192, 384, 768, 1200}
		t.Run("jpeg", func(t *testing.T) {
			checkVariants(t, ts, upload(photo(t, 1600, 900, false), "image/jpeg"), 1600, 900, all, "jpeg")
		})
		t.Run("png with transparency", func(t *testing.T) {
			m := upload(photo(t, 1600, 900, true), "image/png")
			checkVariants(t, ts, m, 1600, 900, all, "png")
			// The original is kept as it was uploaded, at its own stable URL.
			r := ts.do(t, "GET", store.PublicMediaPath(m.ID, "original"), nil, nil)
			if w, h, format := decodeSize(t, "original", []byte(r.Body)); w != 1600 || h != 900 || format != "png" {
				t.Errorf("original is %dx%d %s", w, h, format)
			}
		})
		t.Run("small image is not upscaled", func(t *testing.T) {
			m := upload(photo(t, 300, 200, false), "image/jpeg")
			checkVariants(t, ts, m, 300, 200, []int{96, 192}, "jpeg")
			commExpect(t, "no 384 copy", ts.do(t, "GET", store.PublicMediaPath(m.ID, "384"), nil, nil), 404, "")
		})
	})
}

// On S3 the bytes go straight to the bucket: the copies are made by a job
// once the upload is checked (when a post uses it), and stored in the bucket
// beside the original.
func TestImageVariantsMinIO(t *testing.T) {
	t.Parallel()
	srv := newMinIOServer(t)
	ts, db, st, files, logger := srv.ts, srv.db, srv.st, srv.files, srv.logger
	ctx := context.Background()
	startJobQueue(t, db, jobs.Deps{Store: st, Files: files, Logger: logger})
	demo, _ := st.AppByIDOrName(ctx, "demo")
	ids := commLoad(t, ts)
	creator := commUser(t, ts, "creator@demo.test")

	for _, tc := range []struct {
		name, mimeType, format string
		data                   []byte
	}{
		{"jpeg", "image/jpeg", "jpeg", photo(t, 1600, 900, false)},
		{"png", "image/png", "png", photo(t, 1600, 900, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, cm := mediaCreate(t, ts, creator, mediaReq(demo.ID, tc.mimeType, len(tc.data), "post"))
			if r.Status != http.StatusCreated {
				t.Fatalf("create media: %d %s", r.Status, r.Body)
			}
			req, _ := http.NewRequest("PUT", cm.PresignedUploadURL, bytes.NewReader(tc.data))
			req.Header.Set("Content-Type", tc.mimeType)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("s3 put: %d", res.StatusCode)
			}
			post := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Variants", "communityId": ids.demoCommunity, "attachmentIds": []string{cm.Media.ID}}), creator)
			if post.Status != http.StatusCreated {
				t.Fatalf("post: %d %s", post.Status, post.Body)
			}
			var m *store.Media
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				if m, err = st.MediaRecord(ctx, cm.Media.ID); err != nil {
					t.Fatal(err)
				}
				if m.Variants != "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("timed out waiting for the variants job")
				}
			}
			// The copies are objects in the bucket, beside the original.
			for _, w := range m.VariantWidths() {
				key := store.VariantKey(m.Path, w, m.VariantType)
				f, _, err := files.Open(ctx, key)
				if err != nil {
					t.Fatalf("variant %s not in the bucket: %v", key, err)
				}
				data, _ := io.ReadAll(f)
				f.Close()
				if gw, _, _ := decodeSize(t, key, data); gw != w {
					t.Errorf("%s is %d wide", key, gw)
				}
			}
			checkVariants(t, ts, m, 1600, 900, []int{96, 192, 384, 768, 1200}, tc.format)
		})
	}
}

var imgTag = regexp.MustCompile(`<img [^>]*>`)

func attr(tag, name string) (string, bool) {
	// React writes some attributes in camel case (fetchPriority); HTML
	// attribute names are case-insensitive.
	m := regexp.MustCompile(`(?i)\s` + name + `="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return "", false
	}
	return strings.ReplaceAll(m[1], "&amp;", "&"), true
}

// The landing page's images: sizes on every one, the resized copies in
// srcset, the banner loaded first and the rest lazily; og:image is a URL of
// this site that still answers long after a signed URL would have expired.
func TestLandingImages(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	page := ts.do(t, "GET", "/apps/demo", nil, nil)
	if page.Status != http.StatusOK {
		t.Fatalf("landing: %d", page.Status)
	}
	tags := imgTag.FindAllString(page.Body, -1)
	if len(tags) < 5 {
		t.Fatalf("only %d images on the landing page", len(tags))
	}
	banners := 0
	for _, tag := range tags {
		for _, a := range []string{"width", "height", "alt", "src"} {
			if _, ok := attr(tag, a); !ok {
				t.Errorf("no %s: %s", a, tag)
			}
		}
		if srcset, _ := attr(tag, "srcset"); !strings.Contains(srcset, " 96w") {
			t.Errorf("no srcset of resized copies: %s", tag)
		} else if _, ok := attr(tag, "sizes"); !ok {
			t.Errorf("srcset without sizes: %s", tag)
		}
		loading, _ := attr(tag, "loading")
		priority, _ := attr(tag, "fetchpriority")
		if strings.Contains(tag, `class="banner"`) {
			banners++
			if priority != "high" || loading == "lazy" {
				t.Errorf("the banner must load first: %s", tag)
			}
			if w, _ := attr(tag, "width"); w != "1200" {
				t.Errorf("banner width is not its own: %s", tag)
			}
			continue
		}
		if strings.Contains(tag, `class="title-image"`) {
			// The header's title image: always on the first screen, so it
			// loads at once, without competing with the banner.
			if loading == "lazy" || priority != "" {
				t.Errorf("the header's title image loads at once, at normal priority: %s", tag)
			}
			continue
		}
		decoding, _ := attr(tag, "decoding")
		if loading != "lazy" || decoding != "async" || priority != "" {
			t.Errorf("below the banner, images load lazily: %s", tag)
		}
	}
	if banners != 1 {
		t.Errorf("%d banners", banners)
	}

	og := regexp.MustCompile(`<meta property="og:image" content="([^"]*)"`).FindStringSubmatch(page.Body)
	if og == nil {
		t.Fatal("no og:image")
	}
	ogURL := strings.ReplaceAll(og[1], "&amp;", "&")
	if !strings.HasPrefix(ogURL, "http://main.test/media/i/") || strings.Contains(ogURL, "?") {
		t.Fatalf("og:image is not a stable URL: %s", ogURL)
	}
	if !strings.Contains(page.Body, `"image":"`+ogURL+`"`) {
		t.Error("JSON-LD image is not the stable URL")
	}
	// Three days on, a URL signed today has expired; the stable one still
	// answers with the image.
	banner, err := ts.store.MediaRecord(context.Background(), strings.Split(strings.TrimPrefix(ogURL, "http://main.test/media/i/"), "/")[0])
	if err != nil {
		t.Fatal(err)
	}
	signed, err := ts.files.PresignGet(context.Background(), banner.Path, media.URLTTL)
	if err != nil {
		t.Fatal(err)
	}
	ts.files.Now = func() time.Time { return time.Now().Add(72 * time.Hour) }
	defer func() { ts.files.Now = nil }()
	if r := ts.do(t, "GET", strings.TrimPrefix(signed, "http://main.test"), nil, nil); r.Status != http.StatusForbidden {
		t.Errorf("an expired signed URL answered %d", r.Status)
	}
	r := ts.do(t, "GET", strings.TrimPrefix(ogURL, "http://main.test"), nil, nil)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("og:image after expiry: %d %q", r.Status, r.Header.Get("Content-Type"))
	}
	if w, _, _ := decodeSize(t, "og:image", []byte(r.Body)); w != banner.Width {
		t.Errorf("og:image is %d wide, the banner %d", w, banner.Width)
	}
}

// A subscription-gated app's post media stays gated: no stable URL on its
// pages, and neither the stable URL nor the content redirect serves it to a
// visitor or a member the gate holds back. The app's banner stays public.
func TestGatedMediaIsNotPublic(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	var postMedia store.Media
	if err := ts.store.DB().NewSelect().Model(&postMedia).Where("app_id = ? AND media_key = 'post'", demo.ID).Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	stable := store.PublicMediaPath(postMedia.ID, "original")
	if r := ts.do(t, "GET", stable, nil, nil); r.Status != http.StatusOK {
		t.Fatalf("post media of an open app: %d", r.Status)
	}
	if err := ts.store.SetAppField(ctx, "demo", "features.subscriptionGating.settings.required", "true"); err != nil {
		t.Fatal(err)
	}
	follower := withSession(sessionFor(t, ts, "follower@demo.test"))
	subscriber := withSession(sessionFor(t, ts, "subscriber@demo.test"))
	for _, path := range []string{stable, store.PublicMediaPath(postMedia.ID, "384"), "/api/media/" + postMedia.ID + "/content"} {
		if r := ts.do(t, "GET", path, nil, nil); r.Status != http.StatusNotFound {
			t.Errorf("visitor GET %s: %d", path, r.Status)
		}
		if r := ts.do(t, "GET", path, nil, follower); r.Status != http.StatusNotFound {
			t.Errorf("gated follower GET %s: %d", path, r.Status)
		}
	}
	r := ts.do(t, "GET", stable, nil, subscriber)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Cache-Control"), "private") {
		t.Errorf("subscriber GET %s: %d %q", stable, r.Status, r.Header.Get("Cache-Control"))
	}
	if r := ts.do(t, "GET", "/api/media/"+postMedia.ID+"/content", nil, subscriber); r.Status != http.StatusFound {
		t.Errorf("subscriber content redirect: %d", r.Status)
	}
	// The landing page may still preview posts; their pictures are signed.
	page := ts.do(t, "GET", "/apps/demo", nil, nil)
	if strings.Contains(page.Body, "/media/i/"+postMedia.ID) {
		t.Error("the gated app's post media has a stable URL on the landing page")
	}
	og := regexp.MustCompile(`<meta property="og:image" content="([^"]*)"`).FindStringSubmatch(page.Body)
	if og == nil || !strings.Contains(og[1], "/media/i/") {
		t.Fatalf("the banner of a gated app is still public: %v", og)
	}
	if r := ts.do(t, "GET", strings.TrimPrefix(og[1], "http://main.test"), nil, nil); r.Status != http.StatusOK {
		t.Errorf("gated app's banner: %d", r.Status)
	}
}

// On the community, post and store item pages the first picture is the one
// loaded first (one per page), and every other image loads lazily.
func TestFirstScreenImage(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	var att store.MessageAttachment
	if err := ts.store.DB().NewSelect().Model(&att).
		Join(`JOIN "media" AS "m" ON "m"."id" = "message_attachment"."media_id" AND "m"."type" = 'IMAGE'`).
		Join(`JOIN "messages" AS "msg" ON "msg"."id" = "message_attachment"."message_id" AND "msg"."type" = 'POST'`).
		Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var im store.StoreItemMedia
	if err := ts.store.DB().NewSelect().Model(&im).Where("position = 0").Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, firstMedia string }{
		{"/apps/demo/community", ""},
		{"/apps/demo/posts/" + att.MessageID, att.MediaID},
		{"/apps/demo/store/items/" + im.StoreItemID, im.MediaID},
	} {
		page := ts.do(t, "GET", tc.path, nil, nil)
		if page.Status != http.StatusOK {
			t.Fatalf("%s: %d", tc.path, page.Status)
		}
		priority := 0
		for _, tag := range imgTag.FindAllString(page.Body, -1) {
			for _, a := range []string{"width", "height"} {
				if _, ok := attr(tag, a); !ok {
					t.Errorf("%s: no %s: %s", tc.path, a, tag)
				}
			}
			if p, _ := attr(tag, "fetchpriority"); p == "high" {
				priority++
				if src, _ := attr(tag, "src"); tc.firstMedia != "" && !strings.Contains(src, tc.firstMedia) {
					t.Errorf("%s: the first picture is not the one loaded first: %s", tc.path, tag)
				}
				if l, _ := attr(tag, "loading"); l == "lazy" {
					t.Errorf("%s: first picture is lazy: %s", tc.path, tag)
				}
				continue
			}
			if l, _ := attr(tag, "loading"); strings.Contains(tag, `class="title-image"`) {
				if l == "lazy" {
					t.Errorf("%s: the header's title image is lazy: %s", tc.path, tag)
				}
			} else if l != "lazy" {
				t.Errorf("%s: not lazy: %s", tc.path, tag)
			}
		}
		if priority != 1 {
			t.Errorf("%s: %d images with fetchpriority=high, want 1", tc.path, priority)
		}
	}
}
