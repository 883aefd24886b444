package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"marquee/store/storetest"
)

// A resumable upload of a DIGITAL item's file (issue 27, item 3), on the
// local disk: parts stored as they come, an interrupted part resent, the
// file joined exact to the byte; then bought and downloaded 51 times,
// counted exactly.
func TestItemUploadResumesLocal(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) { checkResumableUpload(t, newMemberFixture(t), false) })
	// The embedded default: SQLite and the local disk.
	t.Run("sqlite", func(t *testing.T) { checkResumableUpload(t, newMemberFixtureOn(t, storetest.SQLite(t)), false) })
}

// The same on S3 (a real MinIO): the parts are S3's multipart upload and
// the download is S3's own presigned link, reached only through the
// buyer's counted link.
func TestItemUploadResumesMinIO(t *testing.T) {
	t.Parallel()
	checkResumableUpload(t, memberFixtureFor(t, newMinIOServer(t).ts), true)
}

// failingReader gives n bytes of r, then fails, as a connection that drops
// in the middle of a part.
type failingReader struct {
	r io.Reader
	n int
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("connection reset")
	}
	if len(p) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

// sendPart PUTs body as part number of an upload, declaring size bytes.
func sendPart(t *testing.T, ts *testServer, token, target string, body io.Reader, size int64) response {
	t.Helper()
	req := newRequest("PUT", target, body)
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Cookie", sessionCookie+"="+token)
	rec := httptest.NewRecorder()
	ts.Main().ServeHTTP(rec, req)
	checkContract(t, "PUT", target, rec.Code, rec.Header(), rec.Body.Bytes())
	return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

// drain is a response writer that only counts the bytes and hashes them.
type drain struct {
	header http.Header
	status int
	sum    hashWriter
}

type hashWriter struct {
	n int64
	h interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (d *drain) Header() http.Header { return d.header }
func (d *drain) WriteHeader(s int)   { d.status = s }
func (d *drain) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	d.sum.n += int64(len(p))
	return d.sum.h.Write(p)
}

// fetchDownload opens a buyer's download link and answers the status, the
// file's sha256 and size, following S3's presigned link when the server
// redirects there.
func fetchDownload(t *testing.T, ts *testServer, link, cookie string) (int, [32]byte, int64, http.Header) {
	t.Helper()
	req := newRequest("GET", link, nil)
	req.Header.Set("Cookie", cookie)
	d := &drain{header: http.Header{}, sum: hashWriter{h: sha256.New()}}
	ts.Main().ServeHTTP(d, req)
	var sum [32]byte
	if d.status == http.StatusFound {
		loc := d.header.Get("Location")
		if !strings.HasPrefix(loc, "http://") || !strings.Contains(loc, "X-Amz-Expires=60") {
			t.Fatalf("the redirect is not a one-minute presigned link: %q", loc)
		}
		res, err := http.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		h := sha256.New()
		n, err := io.Copy(h, res.Body)
		if err != nil {
			t.Fatal(err)
		}
		copy(sum[:], h.Sum(nil))
		return res.StatusCode, sum, n, res.Header
	}
	copy(sum[:], d.sum.h.Sum(nil))
	return d.status, sum, d.sum.n, d.header
}

func checkResumableUpload(t *testing.T, f *memberFixture, s3 bool) {
	ts := f.ts
	ctx := context.Background()
	ts.cfg.DownloadPartBytes = 5 << 20 // S3's smallest part
	var itemID, storeID string
	if err := ts.store.DB().NewSelect().Table("store_items").Column("id", "store_id").
		Where("app_id = ? AND type = 'DIGITAL' AND name = 'Midnight Bloom: Digital Album'", f.appID).Scan(ctx, &itemID, &storeID); err != nil {
		t.Fatalf("the demo album: %v", err)
	}
	album := make([]byte, 2*(5<<20)+123457)
	rand.New(rand.NewSource(27)).Read(album)
	want := sha256.Sum256(album)
	part := func(n int) []byte {
		end := min(n*(5<<20), len(album))
		return album[(n-1)*(5<<20) : end]
	}

	creator := ts.as(t, "creator@demo.test")
	token := sessionFor(t, ts, "creator@demo.test")
	uploads := "/api/store/items/" + itemID + "/uploads"
	creator.must(400, "POST", uploads, `{"name":"setup.exe","size":10}`)
	ts.cfg.DownloadMaxBytes = int64(len(album)) - 1
	creator.must(400, "POST", uploads, fmt.Sprintf(`{"name":"midnight-bloom.flac","size":%d}`, len(album)))
	ts.cfg.DownloadMaxBytes = 0
	up := dataOf(creator.must(201, "POST", uploads, fmt.Sprintf(`{"name":"midnight-bloom.flac","size":%d}`, len(album))))
	if up["partCount"] != float64(3) || up["partSize"] != float64(5<<20) || len(up["parts"].([]any)) != 0 {
		t.Fatalf("the upload: %v", up)
	}
	target := uploads + "/" + up["id"].(string)

	// Parts 1 and 3 arrive; part 2's connection drops after 1 MB: it is
	// refused and not stored. A part of the wrong size is refused too.
	if r := sendPart(t, ts, token, target+"/parts/1", bytes.NewReader(part(1)), int64(len(part(1)))); r.Status != 200 {
		t.Fatalf("part 1: %d %s", r.Status, r.Body)
	}
	if r := sendPart(t, ts, token, target+"/parts/3", bytes.NewReader(part(3)), int64(len(part(3)))); r.Status != 200 {
		t.Fatalf("part 3: %d %s", r.Status, r.Body)
	}
	if r := sendPart(t, ts, token, target+"/parts/2", &failingReader{r: bytes.NewReader(part(2)), n: 1 << 20}, int64(len(part(2)))); r.Status != 400 {
		t.Fatalf("an interrupted part 2: %d %s", r.Status, r.Body)
	}
	if r := sendPart(t, ts, token, target+"/parts/2", bytes.NewReader(part(2)[:100]), 100); r.Status != 400 {
		t.Fatalf("a short part 2: %d %s", r.Status, r.Body)
	}
	if r := sendPart(t, ts, token, target+"/parts/4", bytes.NewReader(part(3)), int64(len(part(3)))); r.Status != 400 {
		t.Fatalf("a part 4: %d %s", r.Status, r.Body)
	}
	if out := creator.must(400, "POST", target+"/complete", ""); !strings.Contains(fmt.Sprint(out["message"]), "1 of 3 parts are missing") {
		t.Fatalf("completing early: %v", out)
	}

	// Resuming: the upload says which parts it holds; the rest are sent
	// (part 1 once more, as a client unsure of it would) and it completes.
	var got []float64
	for _, p := range dataOf(creator.must(200, "GET", target, ""))["parts"].([]any) {
		got = append(got, p.(map[string]any)["number"].(float64))
	}
	if fmt.Sprint(got) != "[1 3]" {
		t.Fatalf("stored parts %v, want [1 3]", got)
	}
	for _, n := range []int{2, 1} {
		if r := sendPart(t, ts, token, target+fmt.Sprintf("/parts/%d", n), bytes.NewReader(part(n)), int64(len(part(n)))); r.Status != 200 {
			t.Fatalf("part %d: %d %s", n, r.Status, r.Body)
		}
	}
	file := dataOf(creator.must(201, "POST", target+"/complete", ""))
	if file["id"] != up["id"] || file["size"] != float64(len(album)) || file["name"] != "midnight-bloom.flac" {
		t.Fatalf("the file: %v", file)
	}
	creator.must(404, "POST", target+"/complete", "")
	creator.must(404, "GET", target, "")

	// An upload given up: its parts are gone from the storage.
	other := dataOf(creator.must(201, "POST", uploads, `{"name":"bonus.pdf","size":100}`))
	otherTarget := uploads + "/" + other["id"].(string)
	if r := sendPart(t, ts, token, otherTarget+"/parts/1", bytes.NewReader(album[:100]), 100); r.Status != 200 {
		t.Fatalf("bonus part: %d %s", r.Status, r.Body)
	}
	stored, err := ts.store.ItemUploadByID(ctx, other["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	creator.must(200, "DELETE", otherTarget, "")
	creator.must(404, "GET", otherTarget, "")
	if r := sendPart(t, ts, token, otherTarget+"/parts/1", bytes.NewReader(album[:100]), 100); r.Status != 404 {
		t.Fatalf("a part of an aborted upload: %d", r.Status)
	}
	if _, err := ts.Server.files.PutPart(ctx, stored.Path, stored.StorageUploadID, 1, bytes.NewReader(album[:100]), 100); err == nil {
		t.Fatalf("the storage still holds the aborted upload %s", stored.StorageUploadID)
	}
	if files, _ := ts.store.ItemFiles(ctx, itemID); len(files) != 1 {
		t.Fatalf("the item has %d files, want the album only", len(files))
	}

	// The follower buys the album and downloads exactly it.
	f.credit(t, "follower@demo.test", 5000)
	buyer := ts.as(t, "follower@demo.test")
	base := "/api/store/" + storeID
	buyer.must(200, "POST", base+"/cart/items", `{"storeItemId":"`+itemID+`","variantId":null,"quantity":1}`)
	orderID := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"paymentMethod":"musepay"}`))["id"].(string)
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+orderID+`"}`)
	download := func() map[string]any {
		o := dataOf(buyer.must(200, "GET", base+"/orders/"+orderID, ""))
		d, _ := o["items"].([]any)[0].(map[string]any)["downloads"].([]any)
		if len(d) != 1 {
			t.Fatalf("downloads %v", d)
		}
		return d[0].(map[string]any)
	}
	link := download()["url"].(string)
	cookie := sessionCookie + "=" + sessionFor(t, ts, "follower@demo.test")
	status, sum, n, h := fetchDownload(t, ts, link, cookie)
	if status != 200 || sum != want || n != int64(len(album)) || !strings.Contains(h.Get("Content-Disposition"), "midnight-bloom.flac") {
		t.Fatalf("the download: %d, %d bytes, sha256 equal %v, %v", status, n, sum == want, h)
	}
	downloads := 1
	if s3 {
		// The bucket itself serves nothing without a signature.
		downloads++
		loc := strings.SplitN(redirectOf(t, ts, link, cookie), "?", 2)[0]
		if res, err := http.Get(loc); err != nil || res.StatusCode != http.StatusForbidden {
			t.Fatalf("the object without a signature: %v %v", res, err)
		}
	}

	// 50 downloads at once: each counted, none lost.
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := newRequest("GET", link, nil)
			req.Header.Set("Cookie", cookie)
			d := &drain{header: http.Header{}, sum: hashWriter{h: sha256.New()}}
			ts.Main().ServeHTTP(d, req)
			if d.status != 200 && d.status != http.StatusFound {
				t.Errorf("a concurrent download: %d", d.status)
			}
		}()
	}
	wg.Wait()
	downloads += 50
	if c := download()["count"]; c != float64(downloads) {
		t.Fatalf("count %v after %d downloads", c, downloads)
	}

	// A refund revokes the link.
	creator.must(200, "POST", base+"/orders/"+orderID+"/refund", `{"reason":"Wrong album"}`)
	if status, _, _, _ := fetchDownload(t, ts, link, cookie); status != http.StatusGone {
		t.Fatalf("after the refund: %d", status)
	}
}

// redirectOf is where a download link sends its buyer.
func redirectOf(t *testing.T, ts *testServer, link, cookie string) string {
	t.Helper()
	r := ts.do(t, "GET", link, nil, map[string]string{"Cookie": cookie})
	if r.Status != http.StatusFound {
		t.Fatalf("download: %d", r.Status)
	}
	return r.Header.Get("Location")
}
