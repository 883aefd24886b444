package server

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// uploadItemFile posts a file to the item's files form as email.
func uploadItemFile(t *testing.T, ts *testServer, email, itemID, name string, content []byte) response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(content)
	w.Close()
	return ts.do(t, "POST", "/apps/demo/store/items/"+itemID+"/files", &body, map[string]string{
		"Content-Type": w.FormDataContentType(), "Cookie": sessionCookie + "=" + sessionFor(t, ts, email)})
}

// A DIGITAL item delivers the files its creator uploads (issue 27, item
// 3): only to its buyer, through a signed link that expires, counted, and
// no more once the order is refunded; its public cover is not a download.
func TestDigitalItemDeliversFiles(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ts := f.ts
	ctx := context.Background()
	var itemID, storeID string
	if err := ts.store.DB().NewSelect().Table("store_items").Column("id", "store_id").
		Where("app_id = ? AND type = 'DIGITAL' AND name = 'Midnight Bloom: Digital Album'", f.appID).Scan(ctx, &itemID, &storeID); err != nil {
		t.Fatalf("the demo album: %v", err)
	}
	album := bytes.Repeat([]byte("fLaC\x00\x01 midnight bloom "), 40000) // ~760 KB

	// The creator uploads the album; a type the operator does not allow is refused.
	if r := uploadItemFile(t, ts, "creator@demo.test", itemID, "midnight-bloom.flac", album); r.Status != http.StatusSeeOther ||
		!strings.Contains(r.Header.Get("Location"), "notice=") {
		t.Fatalf("upload: %d %v", r.Status, r.Header)
	}
	if r := uploadItemFile(t, ts, "creator@demo.test", itemID, "setup.exe", []byte("MZ")); r.Status != http.StatusSeeOther ||
		!strings.Contains(r.Header.Get("Location"), "error=") {
		t.Fatalf("an .exe: %d %v", r.Status, r.Header)
	}
	if r := uploadItemFile(t, ts, "follower@demo.test", itemID, "x.pdf", []byte("%PDF")); r.Status != http.StatusForbidden {
		t.Fatalf("a follower uploads: %d", r.Status)
	}
	edit := ts.do(t, "GET", "/apps/demo/store/items/"+itemID+"/edit", nil, map[string]string{"Cookie": sessionCookie + "=" + sessionFor(t, ts, "creator@demo.test")})
	if !strings.Contains(edit.Body, "midnight-bloom.flac") || strings.Contains(edit.Body, "setup.exe") {
		t.Fatalf("the edit page lists the files: %d", edit.Status)
	}

	// The follower buys it with the wallet.
	f.credit(t, "follower@demo.test", 5000)
	buyer := ts.as(t, "follower@demo.test")
	base := "/api/store/" + storeID
	buyer.must(200, "POST", base+"/cart/items", `{"storeItemId":"`+itemID+`","variantId":null,"quantity":1}`)
	order := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"paymentMethod":"musepay"}`))
	orderID := order["id"].(string)
	buyer.must(200, "POST", base+"/musepay/process", `{"orderId":"`+orderID+`"}`)

	downloads := func() []any {
		o := dataOf(buyer.must(200, "GET", base+"/orders/"+orderID, ""))
		line := o["items"].([]any)[0].(map[string]any)
		d, _ := line["downloads"].([]any)
		return d
	}
	d := downloads()
	if len(d) != 1 {
		t.Fatalf("downloads %v: want the uploaded file only, not the cover", d)
	}
	dl := d[0].(map[string]any)
	if dl["name"] != "midnight-bloom.flac" || dl["count"] != float64(0) {
		t.Fatalf("download %v", dl)
	}
	link := dl["url"].(string)
	cookie := func(email string) map[string]string {
		return map[string]string{"Cookie": sessionCookie + "=" + sessionFor(t, ts, email)}
	}

	got := ts.do(t, "GET", link, nil, cookie("follower@demo.test"))
	if got.Status != 200 || got.Body != string(album) || !strings.Contains(got.Header.Get("Content-Disposition"), "midnight-bloom.flac") {
		t.Fatalf("the buyer's download: %d, %d bytes, %v", got.Status, len(got.Body), got.Header)
	}
	if n := downloads()[0].(map[string]any)["count"]; n != float64(1) {
		t.Fatalf("count %v after one download", n)
	}
	// The order page offers the file, not the cover.
	page := ts.do(t, "GET", "/apps/demo/orders/"+orderID, nil, cookie("follower@demo.test"))
	if !strings.Contains(page.Body, "Download midnight-bloom.flac") || strings.Contains(page.Body, "Download item") {
		t.Fatalf("order page: %d", page.Status)
	}

	// Someone else with the link, a forged link, an expired link.
	if r := ts.do(t, "GET", link, nil, cookie("subscriber@demo.test")); r.Status != http.StatusForbidden {
		t.Fatalf("a non-buyer with the link: %d", r.Status)
	}
	if r := ts.do(t, "GET", link, nil, nil); r.Status != http.StatusUnauthorized && r.Status != http.StatusFound {
		t.Fatalf("a visitor with the link: %d", r.Status)
	}
	if r := ts.do(t, "GET", link[:len(link)-2]+"xx", nil, cookie("follower@demo.test")); r.Status != http.StatusForbidden {
		t.Fatalf("a forged link: %d", r.Status)
	}
	key, err := ts.downloadKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buyerID := ts.userID(t, "follower@demo.test")
	expired := downloadURL(key, "demo", dl["id"].(string), orderID, buyerID, time.Now().Add(-time.Minute))
	if r := ts.do(t, "GET", expired, nil, cookie("follower@demo.test")); r.Status != http.StatusGone {
		t.Fatalf("an expired link: %d", r.Status)
	}

	// A refund revokes: the fresh link answers 410 and the order offers none.
	fresh := downloadURL(key, "demo", dl["id"].(string), orderID, buyerID, time.Now().Add(time.Minute))
	ts.as(t, "creator@demo.test").must(200, "POST", base+"/orders/"+orderID+"/refund", `{"reason":"Wrong album"}`)
	if r := ts.do(t, "GET", fresh, nil, cookie("follower@demo.test")); r.Status != http.StatusGone {
		t.Fatalf("after the refund: %d", r.Status)
	}
	if d := downloads(); len(d) != 0 {
		t.Fatalf("a refunded order still offers %v", d)
	}
}
