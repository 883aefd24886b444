package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"marquee/server/jobs"
	"marquee/server/mail/mailpittest"
	"marquee/store"
)

// Issue 43 item 3: the creator asks for an export from the studio; a
// durable job builds one zip of the app's members, orders, donations,
// posts and events as CSV and JSON and mails a link that only that
// creator, signed in, can open, for 3 days.
func TestAppExportArchiveAndLink(t *testing.T) {
	t.Parallel()
	ts, mp := mailServer(t, nil)
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	shop := loadShop(t, ts)
	buyer := ts.as(t, follower)
	base := "/api/store/" + shop.demo
	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["PIN-SET-01"], "", 1))
	order := dataOf(buyer.must(201, "POST", base+"/orders/checkout", `{"shippingAddress":`+shipTo+`}`))
	runMailJobs(t, ts)
	// The demo has no donation yet: one, with a message.
	if _, err := ts.store.DB().NewInsert().Model(&store.Donation{ID: store.NewID(), AppID: demo.ID, UserID: idOfUser(t, ts, follower),
		Amount: 500, Currency: "USD", Message: "Keep going, Luna", Status: store.DonationPaid, CreatedAt: time.Now().UTC()}).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	creator := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	page := ts.do(t, "GET", "/apps/demo/studio/data", nil, creator)
	if page.Status != 200 || !strings.Contains(page.Body, "Mail me an export") || !strings.Contains(page.Body, "Danger zone") {
		t.Fatalf("screen: %d", page.Status)
	}
	for _, who := range []string{"admin@demo.test", follower} {
		h := form(withSession(sessionFor(t, ts, who)))
		if r := ts.do(t, "POST", "/apps/demo/studio/data/export", strings.NewReader(""), h); r.Status != http.StatusForbidden {
			t.Fatalf("%s asks for an export: %d", who, r.Status)
		}
	}
	r := ts.do(t, "POST", "/apps/demo/studio/data/export", strings.NewReader(""), creator)
	if r.Status != http.StatusSeeOther || !strings.HasSuffix(r.Header.Get("Location"), "/studio/data?notice=export-requested") {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}
	var rows []store.JobOutbox
	if err := ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", store.JobExportApp).Scan(ctx); err != nil || len(rows) != 1 {
		t.Fatalf("export jobs %d %v", len(rows), err)
	}
	var args jobs.ExportAppArgs
	if err := json.Unmarshal([]byte(rows[0].Args), &args); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a retried job mails once
		if err := jobs.ExportApp(ctx, ts.store, args.AppExportJob); err != nil {
			t.Fatal(err)
		}
	}
	if n := runMailJobs(t, ts); n != 1 {
		t.Fatalf("export mails %d, want 1", n)
	}
	var msg *mailpittest.Message
	for _, s := range mp.To(t, "creator@demo.test") {
		if strings.HasPrefix(s.Subject, "The export of") {
			msg = mp.Message(t, s.ID)
		}
	}
	if msg == nil {
		t.Fatal("no export mail")
	}
	m := regexp.MustCompile(`http://main\.test(/apps/demo/studio/data/export\?token=[A-Za-z0-9_-]+)`).FindStringSubmatch(msg.Text)
	if m == nil {
		t.Fatalf("no link in %s", msg.Text)
	}
	link := m[1]

	// Only the creator who asked, signed in.
	if r := ts.do(t, "GET", link, nil, nil); r.Status != http.StatusFound || !strings.Contains(r.Header.Get("Location"), "/authenticate/signin") {
		t.Fatalf("signed out: %d %s", r.Status, r.Header.Get("Location"))
	}
	for _, who := range []string{"admin@demo.test", follower} {
		if r := ts.do(t, "GET", link, nil, withSession(sessionFor(t, ts, who))); r.Status != http.StatusForbidden {
			t.Fatalf("%s opens the link: %d", who, r.Status)
		}
	}
	if r := ts.do(t, "GET", "/apps/demo/studio/data/export?token=forged", nil, creator); r.Status != http.StatusNotFound {
		t.Fatalf("forged token: %d", r.Status)
	}
	dl := ts.do(t, "GET", link, nil, creator)
	if dl.Status != 200 || dl.Header.Get("Content-Type") != "application/zip" || !strings.Contains(dl.Header.Get("Content-Disposition"), `attachment; filename="demo-export-`) {
		t.Fatalf("download: %d %v", dl.Status, dl.Header)
	}
	z, err := zip.NewReader(bytes.NewReader([]byte(dl.Body)), int64(len(dl.Body)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
	}
	counts := map[string]string{
		"members":   "SELECT COUNT(*) FROM memberships WHERE app_id = ?",
		"orders":    "SELECT COUNT(*) FROM orders WHERE app_id = ?",
		"donations": "SELECT COUNT(*) FROM donations WHERE app_id = ?",
		"posts":     "SELECT COUNT(*) FROM messages WHERE app_id = ?",
		"events":    "SELECT COUNT(*) FROM events WHERE app_id = ?",
	}
	for name, q := range counts {
		var want int
		if err := ts.store.DB().NewRaw(q, demo.ID).Scan(ctx, &want); err != nil {
			t.Fatal(err)
		}
		lines, err := csv.NewReader(strings.NewReader(files[name+".csv"])).ReadAll()
		if err != nil {
			t.Fatalf("%s.csv: %v", name, err)
		}
		var objs []map[string]any
		if err := json.Unmarshal([]byte(files[name+".json"]), &objs); err != nil {
			t.Fatalf("%s.json: %v", name, err)
		}
		if want == 0 || len(lines) != want+1 || len(objs) != want {
			t.Errorf("%s: %d in the database, %d CSV lines (with the header), %d JSON objects", name, want, len(lines), len(objs))
		}
	}
	if !strings.Contains(files["members.csv"], follower) || !strings.HasPrefix(files["orders.csv"], "id,order_number,status,buyer,email,subtotal,shipping,") ||
		!strings.Contains(files["orders.csv"], order["orderNumber"].(string)) || !strings.Contains(files["orders.json"], "Lovelace") ||
		!strings.Contains(files["order_items.csv"], "Enamel Pin Set") || !strings.Contains(files["donations.csv"], "Keep going, Luna") || !strings.Contains(files["app.json"], `"app": "demo"`) {
		t.Fatalf("archive contents: members %.200s\norders %.300s", files["members.csv"], files["orders.csv"])
	}
	// The screen lists it; an expired link answers 404.
	if page := ts.do(t, "GET", "/apps/demo/studio/data", nil, creator); !strings.Contains(page.Body, "ready, link mailed") {
		t.Fatal("the screen does not list the ready export")
	}
	if _, err := ts.store.DB().NewUpdate().Model((*store.AppExport)(nil)).Set("expires_at = ?", time.Now().Add(-time.Minute)).Where("app_id = ?", demo.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "GET", link, nil, creator); r.Status != http.StatusNotFound || !strings.Contains(r.Body, "expired") {
		t.Fatalf("expired link: %d", r.Status)
	}
}

// The studio's deletion: the name typed, the creator alone, refused while
// money is pending (said clearly); then the app is gone and a durable job
// removes its media, their resized copies and its private files.
func TestDeleteAppFromStudio(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	creatorID := idOfUser(t, ts, "creator@demo.test")
	app, err := ts.store.CreatePublishedApp(ctx, "doomed", creatorID)
	if err != nil {
		t.Fatal(err)
	}
	// Two stored files of the app: an image with a resized copy, and a
	// download's private file; and another app's image, which stays.
	put := func(key string) {
		if err := ts.files.Put(ctx, key, strings.NewReader("bytes"), 5, "image/jpeg"); err != nil {
			t.Fatal(err)
		}
	}
	img := "apps/" + app.ID + "/posts/pic.jpg"
	variant := store.VariantKey(img, 96, "image/jpeg")
	private := "files/" + app.ID + "/album.flac"
	other := "apps/keep/pic.jpg"
	for _, k := range []string{img, variant, private, other} {
		put(k)
	}
	now := time.Now().UTC()
	if _, err := ts.store.DB().NewInsert().Model(&store.Media{ID: store.NewID(), AppID: &app.ID, OwnerID: creatorID, Type: store.MediaImage,
		MimeType: "image/jpeg", Path: img, Status: store.MediaUploaded, CreatedAt: now, Variants: "96", VariantType: "image/jpeg"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	shop, err := ts.store.ShopOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	item := &store.StoreItem{ID: store.NewID(), AppID: app.ID, StoreID: shop.ID, Name: "Album", Type: store.ItemDigital, Price: 900,
		Currency: "USD", Settings: "{}", CreatedAt: now, UpdatedAt: now}
	if _, err := ts.store.DB().NewInsert().Model(item).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.store.DB().NewInsert().Model(&store.ItemFile{ID: store.NewID(), AppID: app.ID, StoreItemID: item.ID, Name: "album.flac",
		MimeType: "audio/flac", Size: 5, Path: private, CreatedAt: now}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	order := &store.Order{ID: store.NewID(), AppID: app.ID, StoreID: shop.ID, UserID: idOfUser(t, ts, follower), OrderNumber: "ORD-TEST-DOOMED",
		Status: store.OrderPending, Subtotal: 900, Total: 900, Currency: "USD", CreatedAt: now, UpdatedAt: now}
	if _, err := ts.store.DB().NewInsert().Model(order).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	creator := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	del := func(h map[string]string, typed string) response {
		return ts.do(t, "POST", "/apps/doomed/studio/data/delete", strings.NewReader("confirm="+typed), h)
	}
	if r := del(form(withSession(sessionFor(t, ts, "admin@demo.test"))), "doomed"); r.Status != http.StatusForbidden {
		t.Fatalf("someone else deletes: %d", r.Status)
	}
	page := ts.do(t, "GET", "/apps/doomed/studio/data", nil, creator)
	if page.Status != 200 || !strings.Contains(page.Body, "1 order is awaiting payment") {
		t.Fatalf("the screen does not say what is pending: %d", page.Status)
	}
	r := del(creator, "doomed")
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, "This app cannot be deleted while money is pending") ||
		!strings.Contains(r.Body, "1 order is awaiting payment") {
		t.Fatalf("pending order: %d", r.Status)
	}
	if _, err := ts.store.DB().NewUpdate().Model(order).Set("status = ?", store.OrderPaid).WherePK().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r := del(creator, "doomed"); r.Status != http.StatusConflict || !strings.Contains(r.Body, "1 paid order is neither shipped nor refunded") {
		t.Fatalf("paid order: %d", r.Status)
	}
	if _, err := ts.store.DB().NewUpdate().Model(order).Set("status = ?", store.OrderDelivered).WherePK().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r := del(creator, "Doomed"); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Type doomed exactly to confirm") || !strings.Contains(r.Body, `value="Doomed"`) {
		t.Fatalf("wrong name: %d", r.Status)
	}
	if _, err := ts.store.AppByIDOrName(ctx, "doomed"); err != nil {
		t.Fatal("refusals deleted the app")
	}
	r = del(creator, "doomed")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/apps?deleted=doomed" {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if _, err := ts.store.AppByIDOrName(ctx, "doomed"); err == nil {
		t.Fatal("the app is still there")
	}
	if r := ts.do(t, "GET", "/apps?deleted=doomed", nil, creator); !strings.Contains(r.Body, "doomed was deleted with everything in it") {
		t.Fatal("the apps page does not say so")
	}
	// The files go by the job written with the deletion.
	var rows []store.JobOutbox
	if err := ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", store.JobDeleteFiles).Scan(ctx); err != nil || len(rows) != 1 {
		t.Fatalf("delete jobs %d %v", len(rows), err)
	}
	var args jobs.DeleteFilesArgs
	if err := json.Unmarshal([]byte(rows[0].Args), &args); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.files.Stat(ctx, img); err != nil {
		t.Fatal("the files went before the job ran")
	}
	for range 2 { // a retry finds nothing left and succeeds
		if err := jobs.DeleteFiles(ctx, ts.files, args.DeleteFilesJob); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{img, variant, private} {
		if _, err := ts.files.Stat(ctx, k); err == nil {
			t.Errorf("%s is still stored", k)
		}
	}
	if _, err := ts.files.Stat(ctx, other); err != nil {
		t.Error("another app's file went too")
	}
}
