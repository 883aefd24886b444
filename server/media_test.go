package server

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/scripts/seed"
	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/server/media/mediatest"
	"marquee/store"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	// A gradient, so the file is a few hundred bytes and not all zeros.
	im := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for i := range im.Pix {
		im.Pix[i] = byte(i * 7)
	}
	if err := png.Encode(&buf, im); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const htmlPretendingPNG = "<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"

type createdMedia struct {
	Success bool
	Data    struct {
		PresignedUploadURL string `json:"presignedUploadUrl"`
		Media              store.MediaView
	}
	PresignedUploadURL string `json:"presignedUploadUrl"`
	Media              store.MediaView
}

func mediaCreate(t *testing.T, ts *testServer, who map[string]string, req map[string]any) (response, createdMedia) {
	t.Helper()
	r := ts.do(t, "POST", "/api/media", body(req), who)
	var out createdMedia
	if r.Status == http.StatusCreated {
		commJSON(t, r, &out)
	}
	return r, out
}

func mediaReq(appID, mimeType string, size int, key string) map[string]any {
	return map[string]any{"name": "photo.png", "type": "IMAGE", "size": size, "mimeType": mimeType,
		"path": "../../etc/passwd", "description": "", "mediaKey": key, "appId": appID}
}

// localPut sends the browser's PUT to a URL this test server signed.
func localPut(t *testing.T, ts *testServer, rawURL, contentType string, data []byte) response {
	t.Helper()
	return ts.do(t, "PUT", strings.TrimPrefix(rawURL, "http://main.test"), bytes.NewReader(data), map[string]string{"Content-Type": contentType})
}

func TestMediaUploadLocal(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)
		ctx := context.Background()
		demo, _ := ts.store.AppByIDOrName(ctx, "demo")
		ids := commLoad(t, ts)
		creator, member := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "member@demo.test")
		img := pngBytes(t)

		// Refusals before any bytes move.
		r, _ := mediaCreate(t, ts, map[string]string{"Content-Type": "application/json"}, mediaReq(demo.ID, "image/png", len(img), "post"))
		commExpect(t, "visitor", r, 401, "Authentication required")
		r, _ = mediaCreate(t, ts, member, mediaReq(demo.ID, "image/png", len(img), "post"))
		commExpect(t, "non-member", r, 403, "follow this app")
		r, _ = mediaCreate(t, ts, creator, mediaReq(demo.ID, "application/pdf", 100, "post"))
		commExpect(t, "pdf post", r, 400, "Only image and video files are supported")
		r, _ = mediaCreate(t, ts, creator, mediaReq(demo.ID, "image/svg+xml", 100, "story"))
		commExpect(t, "svg story", r, 400, "Only image and video files are supported")
		r, _ = mediaCreate(t, ts, creator, mediaReq("", "video/mp4", 100, "profile"))
		commExpect(t, "video profile", r, 400, "Please select an image file")
		r, _ = mediaCreate(t, ts, creator, mediaReq("", "image/png", 5<<20, "profile"))
		commExpect(t, "big profile", r, 400, "File size must be less than 5MB")
		r, _ = mediaCreate(t, ts, creator, mediaReq(demo.ID, "video/mp4", 51<<20, "post"))
		commExpect(t, "big video", r, 400, "50MB")
		r, _ = mediaCreate(t, ts, creator, mediaReq("nope", "image/png", 10, "post"))
		commExpect(t, "unknown app", r, 404, "App not found")
		r, _ = mediaCreate(t, ts, creator, mediaReq("", "image/png", 10, "post"))
		commExpect(t, "post without app", r, 400, "appId is required")

		// The good path: record, PUT, attach, serve.
		r, cm := mediaCreate(t, ts, creator, mediaReq(demo.ID, "image/png", len(img), "post"))
		if r.Status != 201 || !cm.Success || cm.Data.PresignedUploadURL == "" || cm.PresignedUploadURL == "" || cm.Media.ID == "" {
			t.Fatalf("create media: %d %s", r.Status, r.Body)
		}
		m := cm.Data.Media
		if !strings.HasPrefix(m.Path, "apps/"+demo.ID+"/post/") || !strings.HasSuffix(m.Path, ".png") || m.SignedURL == "" || m.Type != "IMAGE" {
			t.Fatalf("server must choose the key: %+v", m)
		}
		attach := func(id string) response {
			return ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "With a picture", "communityId": ids.demoCommunity, "attachmentIds": []string{id}}), creator)
		}
		commExpect(t, "attach before upload", attach(m.ID), 400, "Media upload is not complete")
		commExpect(t, "bad signature", localPut(t, ts, strings.Replace(cm.Data.PresignedUploadURL, "sig=", "sig=00", 1), "image/png", img), 403, "")
		commExpect(t, "other content type", localPut(t, ts, cm.Data.PresignedUploadURL, "text/html", img), 403, "")
		commExpect(t, "html as png", localPut(t, ts, cm.Data.PresignedUploadURL, "image/png", []byte(htmlPretendingPNG+strings.Repeat(" ", len(img)-len(htmlPretendingPNG)))), 400, "declared type")
		commExpect(t, "short body", localPut(t, ts, cm.Data.PresignedUploadURL, "image/png", img[:10]), 400, "declared size")
		commExpect(t, "upload", localPut(t, ts, cm.Data.PresignedUploadURL, "image/png", img), 200, "true")
		commExpect(t, "upload twice", localPut(t, ts, cm.Data.PresignedUploadURL, "image/png", img), 409, "")

		r = attach(m.ID)
		var msg struct{ Data store.MessageView }
		commJSON(t, r, &msg)
		if r.Status != 201 || len(msg.Data.Attachments) != 1 || msg.Data.Attachments[0].Media.SignedURL == "" {
			t.Fatalf("post with media: %d %s", r.Status, r.Body)
		}
		got := ts.do(t, "GET", strings.TrimPrefix(msg.Data.Attachments[0].Media.SignedURL, "http://main.test"), nil, nil)
		if got.Status != 200 || got.Body != string(img) || got.Header.Get("Content-Type") != "image/png" || got.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("serve media: %d %v", got.Status, got.Header)
		}
		content := ts.do(t, "GET", "/api/media/"+m.ID+"/content", nil, nil)
		if content.Status != http.StatusFound || !strings.Contains(content.Header.Get("Location"), "/media/apps/") {
			t.Fatalf("content fallback: %d %v", content.Status, content.Header)
		}
		commExpect(t, "content unknown", ts.do(t, "GET", "/api/media/nope/content", nil, nil), 404, "Media not found")

		// Someone else's media cannot be attached.
		other := commUser(t, ts, "subscriber@demo.test")
		commExpect(t, "foreign media", ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "x", "communityId": ids.demoCommunity, "attachmentIds": []string{m.ID}}), other), 400, "Attachment not found")

		// Profile picture: upload without app, then set it.
		r, pm := mediaCreate(t, ts, creator, mediaReq("", "image/png", len(img), "profile"))
		if r.Status != 201 {
			t.Fatalf("profile media: %d %s", r.Status, r.Body)
		}
		commExpect(t, "profile before upload", ts.do(t, "POST", "/api/auth/profile-picture", body(map[string]any{"mediaId": pm.Media.ID}), creator), 400, "not complete")
		commExpect(t, "profile upload", localPut(t, ts, pm.PresignedUploadURL, "image/png", img), 200, "")
		commExpect(t, "profile other user", ts.do(t, "POST", "/api/auth/profile-picture", body(map[string]any{"mediaId": pm.Media.ID}), other), 404, "")
		commExpect(t, "post media as profile", ts.do(t, "POST", "/api/auth/profile-picture", body(map[string]any{"mediaId": m.ID}), creator), 400, "Please select an image file")
		commExpect(t, "profile set", ts.do(t, "POST", "/api/auth/profile-picture", body(map[string]any{"mediaId": pm.Media.ID}), creator), 200, "signedUrl")
		var u store.User
		if err := db.NewSelect().Model(&u).Where("email = ?", "creator@demo.test").Scan(ctx); err != nil || u.ProfileMediaID == nil || *u.ProfileMediaID != pm.Media.ID {
			t.Fatalf("profile picture not stored: %v", err)
		}
	})
}

// Local uploads stream to disk and keep a file only when exactly the
// declared size arrives; a refused upload leaves nothing in the folder.
func TestMediaUploadLocalSize(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)
		demo, _ := ts.store.AppByIDOrName(context.Background(), "demo")
		creator := commUser(t, ts, "creator@demo.test")
		img := pngBytes(t)
		// A media key of its own gives these uploads a folder no one else writes to.
		newUpload := func(size int) createdMedia {
			t.Helper()
			r, cm := mediaCreate(t, ts, creator, mediaReq(demo.ID, "image/png", size, "size-test"))
			if r.Status != 201 {
				t.Fatalf("create media: %d %s", r.Status, r.Body)
			}
			return cm
		}
		folder := filepath.Join(ts.files.Dir, "apps", demo.ID, "size-test")
		onDisk := func() map[string]int64 {
			t.Helper()
			entries, err := os.ReadDir(folder)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			out := map[string]int64{}
			for _, e := range entries {
				if info, err := e.Info(); err == nil {
					out[e.Name()] = info.Size()
				}
			}
			return out
		}

		cm := newUpload(len(img))
		commExpect(t, "larger than declared", localPut(t, ts, cm.PresignedUploadURL, "image/png", append(append([]byte{}, img...), 0)), 400, "declared size")
		commExpect(t, "smaller than declared", localPut(t, ts, cm.PresignedUploadURL, "image/png", img[:len(img)-1]), 400, "declared size")
		if files := onDisk(); len(files) != 0 {
			t.Fatalf("refused uploads left files behind: %v", files)
		}
		commExpect(t, "exact size", localPut(t, ts, cm.PresignedUploadURL, "image/png", img), 200, "true")
		if files := onDisk(); len(files) != 1 || files[filepath.Base(cm.Media.Path)] != int64(len(img)) {
			t.Fatalf("after upload: %v", files)
		}

		// A 4 MB upload reaches the disk while its body is still arriving: the
		// second half is sent only once the first half is in the folder.
		big := append(append([]byte{}, img...), make([]byte, 4<<20)...)
		cm = newUpload(len(big))
		half := len(big) / 2
		pr, pw := io.Pipe()
		streamed := make(chan bool, 1)
		go func() {
			pw.Write(big[:half])
			ok := false
			for deadline := time.Now().Add(time.Minute); !ok && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				for name, size := range onDisk() {
					ok = ok || (strings.HasPrefix(name, ".upload-") && size >= int64(half))
				}
			}
			streamed <- ok
			pw.Write(big[half:])
			pw.Close()
		}()
		r := ts.do(t, "PUT", strings.TrimPrefix(cm.PresignedUploadURL, "http://main.test"), pr, map[string]string{"Content-Type": "image/png"})
		pr.Close() // unblocks the writer if the handler stopped reading early
		commExpect(t, "streamed upload", r, 200, "true")
		if !<-streamed {
			t.Error("the first half of the body was not on disk before the second half was sent")
		}
		files := onDisk()
		if len(files) != 2 || files[filepath.Base(cm.Media.Path)] != int64(len(big)) {
			t.Fatalf("after streamed upload: %v", files)
		}
		stored, err := os.ReadFile(filepath.Join(folder, filepath.Base(cm.Media.Path)))
		if err != nil || !bytes.Equal(stored, big) {
			t.Fatalf("stored bytes differ: %v", err)
		}
	})
}

// minioServer is a test server whose media live in a real MinIO.
type minioServer struct {
	ts     *testServer
	opts   media.S3Options
	db     *bun.DB
	st     *store.Storage
	files  media.Storage
	logger *slog.Logger
}

func newMinIOServer(t *testing.T) minioServer {
	t.Helper()
	files, opts := mediatest.S3(t)
	db := demoDB(t)
	if err := seed.Demo(context.Background(), db, files); err != nil {
		t.Fatalf("seed: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := store.New(store.Options{DB: db, Media: media.Signer{Storage: files}, MediaURL: "http://main.test", Logger: logger})
	cfg := Config{Port: 3000, AuthPort: 3002, PublicURL: "http://main.test", AuthURL: "http://auth.test",
		WalletEnabled: true, OrderExpiry: 30 * time.Minute, InFlightWait: 5 * time.Minute, RenderTimeout: 2 * time.Minute}
	ts := &testServer{Server: New(Deps{Config: cfg, Store: st, Renderer: testEngine(t), Files: files, Logger: logger})}
	return minioServer{ts: ts, opts: opts, db: db, st: st, files: files, logger: logger}
}

func TestMediaUploadMinIO(t *testing.T) {
	t.Parallel()
	srv := newMinIOServer(t)
	ts, opts, st, files := srv.ts, srv.opts, srv.st, srv.files
	ctx := context.Background()
	demo, _ := st.AppByIDOrName(ctx, "demo")
	ids := commLoad(t, ts)
	creator := commUser(t, ts, "creator@demo.test")
	img := pngBytes(t)

	s3Put := func(rawURL, contentType string, data []byte) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("PUT", rawURL, bytes.NewReader(data))
		req.Header.Set("Content-Type", contentType)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	newUpload := func(data []byte) store.MediaView {
		t.Helper()
		r, cm := mediaCreate(t, ts, creator, mediaReq(demo.ID, "image/png", len(data), "post"))
		if r.Status != 201 || !strings.HasPrefix(cm.PresignedUploadURL, "http://"+opts.Endpoint+"/"+opts.Bucket+"/apps/") {
			t.Fatalf("create media: %d %s", r.Status, r.Body)
		}
		if status, b := s3Put(cm.PresignedUploadURL, "image/png", data); status != 200 {
			t.Fatalf("s3 put: %d %s", status, b)
		}
		return cm.Media
	}
	attach := func(id string) response {
		return ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "From MinIO", "communityId": ids.demoCommunity, "attachmentIds": []string{id}}), creator)
	}

	// Good bytes: verified at attach time, then served by a presigned GET.
	m := newUpload(img)
	r := attach(m.ID)
	var msg struct{ Data store.MessageView }
	commJSON(t, r, &msg)
	if r.Status != 201 || len(msg.Data.Attachments) != 1 {
		t.Fatalf("attach: %d %s", r.Status, r.Body)
	}
	// The demo app has no subscription gate: its media has a stable URL of
	// this site, which streams the object from the bucket.
	stable := msg.Data.Attachments[0].Media.SignedURL
	if !strings.HasPrefix(stable, "http://main.test/media/i/") {
		t.Fatalf("public media URL %s", stable)
	}
	if r := ts.do(t, "GET", strings.TrimPrefix(stable, "http://main.test"), nil, nil); r.Status != 200 || r.Body != string(img) || r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("stable get: %d %q", r.Status, r.Header.Get("Content-Type"))
	}
	content := ts.do(t, "GET", "/api/media/"+m.ID+"/content", nil, nil)
	if content.Status != http.StatusFound || !strings.HasPrefix(content.Header.Get("Location"), "http://"+opts.Endpoint) {
		t.Fatalf("content fallback: %d %v", content.Status, content.Header)
	}
	res, err := http.Get(content.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Equal(got, img) || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("presigned get: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}

	// HTML pretending to be a PNG: refused when attached, and deleted.
	html := []byte(htmlPretendingPNG)
	bad := newUpload(html)
	commExpect(t, "html as png", attach(bad.ID), 400, "declared type")
	if _, err := files.Stat(ctx, bad.Path); err == nil {
		t.Error("rejected object still stored")
	}
	// Bytes of another size than declared: the URL signs the declared
	// Content-Length, so MinIO refuses the PUT and the media stays unusable.
	r, cm := mediaCreate(t, ts, creator, mediaReq(demo.ID, "image/png", len(img), "post"))
	if r.Status != 201 {
		t.Fatal(r.Body)
	}
	for name, data := range map[string][]byte{"larger": append(append([]byte{}, img...), make([]byte, 1<<20)...), "smaller": img[:len(img)-1]} {
		if status, b := s3Put(cm.PresignedUploadURL, "image/png", data); status != http.StatusForbidden {
			t.Errorf("%s than declared: MinIO answered %d %s, want 403", name, status, b)
		}
	}
	if _, err := files.Stat(ctx, cm.Media.Path); err == nil {
		t.Error("an upload of the wrong size was stored")
	}
	commExpect(t, "wrong size never stored", attach(cm.Media.ID), 400, "not complete")
	// An object of another size that got there some other way is refused
	// when used, and deleted.
	if err := files.Put(ctx, cm.Media.Path, bytes.NewReader(img[:len(img)-1]), int64(len(img)-1), "image/png"); err != nil {
		t.Fatal(err)
	}
	commExpect(t, "stored size mismatch", attach(cm.Media.ID), 400, "declared size")
	if _, err := files.Stat(ctx, cm.Media.Path); err == nil {
		t.Error("object of the wrong size still stored")
	}
	// Nothing uploaded at all.
	_, cm = mediaCreate(t, ts, creator, mediaReq(demo.ID, "image/png", len(img), "post"))
	commExpect(t, "never uploaded", attach(cm.Media.ID), 400, "not complete")
	// The local upload route does not exist with S3.
	commExpect(t, "no local put", ts.do(t, "PUT", "/media-upload/"+m.Path, bytes.NewReader(img), map[string]string{"Content-Type": "image/png"}), 404, "")
	_ = fmt.Sprint
}

// On S3 the upload goes straight to the bucket, so nothing reaches the
// server after it: a job notices the file and makes it the picture, and a
// file that is not what was declared never becomes one.
func TestProfilePictureFromS3(t *testing.T) {
	t.Parallel()
	srv := newMinIOServer(t)
	ts, db, st, files, logger := srv.ts, srv.db, srv.st, srv.files, srv.logger
	ctx := context.Background()
	startJobQueue(t, db, jobs.Deps{Store: st, Files: files, Logger: logger})

	put := func(rawURL string, data []byte) {
		t.Helper()
		req, _ := http.NewRequest("PUT", rawURL, bytes.NewReader(data))
		req.Header.Set("Content-Type", "image/png")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("s3 put: %d", res.StatusCode)
		}
	}
	pictureOf := func(email string) string {
		var u store.User
		if err := db.NewSelect().Model(&u).Where("email = ?", email).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if u.ProfileMediaID == nil {
			return ""
		}
		return *u.ProfileMediaID
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out: %s", what)
			}
		}
	}

	// A file that is not a PNG is refused, and the picture stays unset.
	fake := bytes.Repeat([]byte("<script>"), 20)
	r, bad := mediaCreate(t, ts, commUser(t, ts, "follower@demo.test"), mediaReq("", "image/png", len(fake), "profile"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	put(bad.PresignedUploadURL, fake)

	img := pngBytes(t)
	r, good := mediaCreate(t, ts, commUser(t, ts, "member@demo.test"), mediaReq("", "image/png", len(img), "profile"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if pictureOf("member@demo.test") != "" {
		t.Fatal("picture set before the upload")
	}
	put(good.PresignedUploadURL, img)
	waitFor("the uploaded picture to be adopted", func() bool { return pictureOf("member@demo.test") == good.Media.ID })
	ts.run(t, []scenario{{name: "me shows it", path: "/api/auth/me", as: "member@demo.test", status: 200,
		json: map[string]any{"data.user.profilePicture.signedUrl": present{}}}})
	badRecord, err := st.MediaRecord(ctx, bad.Media.ID)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("the fake to be discarded", func() bool {
		_, err := files.Stat(ctx, badRecord.Path)
		return err != nil
	})
	if got := pictureOf("follower@demo.test"); got != "" {
		t.Errorf("a rejected upload became the picture: %s", got)
	}
}

// A stored file that is gone answers 404; an object store that cannot be
// reached answers 503, never a "Not found" that a browser, a CDN or a
// crawler would keep. The object store sits behind a proxy the test closes.
func TestMediaMissingOrStoreDown(t *testing.T) {
	t.Parallel()
	srv := newMinIOServer(t)
	ts, opts, st := srv.ts, srv.opts, srv.st
	ctx := context.Background()
	target, err := url.Parse("http://" + opts.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	viaProxy := opts
	viaProxy.Endpoint = strings.TrimPrefix(proxy.URL, "http://")
	files, err := media.NewS3(ctx, viaProxy)
	if err != nil {
		t.Fatal(err)
	}
	behindProxy := &testServer{Server: New(Deps{Config: ts.cfg, Store: st, Renderer: testEngine(t), Files: files, Logger: srv.logger})}

	demo, _ := st.AppByIDOrName(ctx, "demo")
	ids := commLoad(t, ts)
	creator := commUser(t, ts, "creator@demo.test")
	img := pngBytes(t)
	r, cm := mediaCreate(t, ts, creator, mediaReq(demo.ID, "image/png", len(img), "post"))
	if r.Status != 201 {
		t.Fatalf("create media: %d %s", r.Status, r.Body)
	}
	if err := srv.files.Put(ctx, cm.Media.Path, bytes.NewReader(img), int64(len(img)), "image/png"); err != nil {
		t.Fatal(err)
	}
	r = ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Soon gone", "communityId": ids.demoCommunity, "attachmentIds": []string{cm.Media.ID}}), creator)
	var msg struct{ Data store.MessageView }
	commJSON(t, r, &msg)
	if r.Status != 201 || len(msg.Data.Attachments) != 1 {
		t.Fatalf("attach: %d %s", r.Status, r.Body)
	}
	path := strings.TrimPrefix(msg.Data.Attachments[0].Media.SignedURL, "http://main.test")
	if r := behindProxy.do(t, "GET", path, nil, nil); r.Status != 200 || r.Body != string(img) {
		t.Fatalf("through the proxy: %d", r.Status)
	}

	proxy.Close()
	down := behindProxy.do(t, "GET", path, nil, nil)
	if down.Status != http.StatusServiceUnavailable || strings.Contains(down.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("object store down: %d %q, want 503 not kept", down.Status, down.Header.Get("Cache-Control"))
	}

	if err := srv.files.Delete(ctx, cm.Media.Path); err != nil {
		t.Fatal(err)
	}
	if gone := ts.do(t, "GET", path, nil, nil); gone.Status != http.StatusNotFound {
		t.Fatalf("the bytes gone: %d, want 404", gone.Status)
	}
}
