package server

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// Issue 43 item 5, what the server decides: defaults and words.

// The landing page announces the app's Atom feed as the community page
// does, and the feed it names answers.
func TestLandingLinksAtomFeed(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	r := ts.do(t, "GET", "/apps/demo", nil, nil)
	m := regexp.MustCompile(`<link rel="alternate" type="application/atom\+xml"[^>]*href="([^"]+)"`).FindStringSubmatch(r.Body)
	if r.Status != 200 || m == nil || !strings.HasSuffix(m[1], "/apps/demo/feed.xml") {
		t.Fatalf("landing %d has no Atom link: %v", r.Status, m)
	}
	feed := ts.do(t, "GET", "/apps/demo/feed.xml", nil, nil)
	if feed.Status != 200 || !strings.Contains(feed.Header.Get("Content-Type"), "application/atom+xml") {
		t.Fatalf("feed: %d %s", feed.Status, feed.Header.Get("Content-Type"))
	}
}

// A new item's form starts with a blank stock (untracked), and the form
// without JavaScript left at its defaults makes a download that is never
// out of stock; a refused form comes back with everything typed into it.
func TestItemFormDefaultsAndRefusedDraft(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	tok := sessionFor(t, ts, "creator@demo.test")
	page := ts.do(t, "GET", "/apps/demo/store/items/new", nil, withSession(tok))
	if m := regexp.MustCompile(`<input name="stock"[^>]*value="([^"]*)"`).FindStringSubmatch(page.Body); m != nil && m[1] != "" {
		t.Fatalf("a new item's stock starts at %q", m[1])
	}
	body, ct := multipartBody(t, [][2]string{{"name", "Wallpaper pack"}, {"type", "DIGITAL"}, {"price", "4"}, {"tracked", "1"}, {"stock", ""}})
	r := ts.do(t, "POST", "/apps/demo/store/items/new", body, withSession(tok, "Content-Type", ct))
	seeOther(t, r, "/apps/demo/store/items/")
	it, err := ts.store.ItemByID(ctx, strings.TrimPrefix(r.Header.Get("Location"), "/apps/demo/store/items/"))
	if err != nil || it.Stock != nil {
		t.Fatalf("a download made with the defaults tracks stock: %+v %v", it, err)
	}

	body, ct = multipartBody(t, [][2]string{{"name", "Keep my name"}, {"description", "Keep my words"}, {"type", "SERVICE"},
		{"price", "12,50"}, {"comparePrice", "20"}, {"sku", "KEEP-1"}, {"tags", "kept, too"}, {"isFeatured", "1"},
		{"variantId", ""}, {"variantName", "Length"}, {"variantValue", "1h"}, {"variantAdjust", "5"}, {"variantStock", ""}},
		formFile{"images", "keep.png", "image/png", pngBytes(t)})
	r = ts.do(t, "POST", "/apps/demo/store/items/new", body, withSession(tok, "Content-Type", ct))
	if r.Status != http.StatusBadRequest {
		t.Fatalf("a bad price: %d", r.Status)
	}
	for _, want := range []string{`value="Keep my name"`, "Keep my words", `value="12,50"`, `value="20"`, `value="KEEP-1"`, `value="kept, too"`,
		`value="Length"`, `value="1h"`, `<option value="SERVICE" selected=""`, `name="mediaIds"`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("the refused form lost %s", want)
		}
	}
}

// A download, a membership or a ticket is done when paid: its order offers
// only a refund, and the status call refuses Processing and Shipped.
func TestOnlyPhysicalOrdersShip(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	o, _ := f.paidByWallet(t, "follower@demo.test", 700)
	admin := commUser(t, f.ts, "admin@demo.test")
	v, err := f.ts.store.OrderOf(context.Background(), f.shop.ID, "", o.ID)
	if err != nil || strings.Join(v.Next, ",") != "REFUNDED" {
		t.Fatalf("a digital order's next moves: %v %v", v.Next, err)
	}
	r := f.ts.do(t, "PUT", "/api/store/"+f.shop.ID+"/orders/"+o.ID+"/status", body(map[string]any{"status": "PROCESSING"}), admin)
	if r.Status != http.StatusConflict {
		t.Fatalf("a digital order to PROCESSING: %d %s", r.Status, r.Body)
	}
	page := f.ts.do(t, "GET", "/apps/demo/manage/orders", nil, withSession(sessionFor(t, f.ts, "creator@demo.test")))
	card := page.Body[strings.Index(page.Body, `data-order="`+o.OrderNumber+`"`):]
	if end := strings.Index(card, `<li class="order-card`); end > 0 {
		card = card[:end]
	}
	if strings.Contains(card, "Mark Processing") || !strings.Contains(card, "Refund") {
		t.Fatalf("the digital order's card: %.600s", card)
	}
	// A physical order still offers Mark Processing: TestCheckoutWithoutJavaScript.
}

// Members who are not staff never see the creator's notification kinds.
func TestFansSeeNoCreatorSettings(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	fan := ts.do(t, "GET", "/apps/demo/profile", nil, withSession(sessionFor(t, ts, "follower@demo.test")))
	if !strings.Contains(fan.Body, "Notification settings") || strings.Contains(fan.Body, "NEW_ORDER") || strings.Contains(fan.Body, "DONATION\"") ||
		strings.Contains(fan.Body, "NEW_MEMBER") {
		t.Fatal("a follower's profile offers the creator's notification settings")
	}
	creator := ts.do(t, "GET", "/apps/demo/profile", nil, withSession(sessionFor(t, ts, "creator@demo.test")))
	if !strings.Contains(creator.Body, `value="NEW_ORDER"`) {
		t.Fatal("the creator's profile lacks their notification settings")
	}
	demo, _ := ts.store.AppByIDOrName(context.Background(), "demo")
	r := ts.do(t, "GET", "/api/notifications/preferences/"+demo.ID, nil, withSession(sessionFor(t, ts, "follower@demo.test")))
	if r.Status != 200 || strings.Contains(r.Body, "NEW_ORDER") || !strings.Contains(r.Body, "NEW_POST") {
		t.Fatalf("a follower's preferences: %d %s", r.Status, r.Body)
	}
}

// The footer order is a list with Up and Down buttons that save the form
// (no JavaScript needed); the studio asks for no version; link-in-bio is
// on for a new app, its switches in the links form.
func TestStudioProfileWords(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	tok := sessionFor(t, ts, "creator@demo.test")
	page := ts.do(t, "GET", "/apps/demo/studio", nil, withSession(tok))
	for _, bad := range []string{">Version<", `name="version"`, "HOME, COMMUNITY"} {
		if strings.Contains(page.Body, bad) {
			t.Errorf("the studio shows %q", bad)
		}
	}
	links := page.Body[strings.Index(page.Body, `action="/apps/demo/studio/links"`):]
	links = links[:strings.Index(links, "</form>")]
	if !strings.Contains(links, `name="linksEnabled"`) || !strings.Contains(links, `name="showLinkInBio"`) {
		t.Error("the link-in-bio switches are not beside the links")
	}
	if !strings.Contains(page.Body, `aria-label="Move Store up"`) {
		t.Fatal("no Move up button for the Store tab")
	}
	f := "displayName=Demo&lang=en&footerOrder=HOME&footerOrder=COMMUNITY&footerOrder=STORE&footerOrder=EVENTS&footerOrder=CHAT&move=up%3ASTORE"
	r := ts.do(t, "POST", "/apps/demo/studio/profile", strings.NewReader(f), form(withSession(tok)))
	if r.Status != 303 {
		t.Fatalf("move: %d %.300s", r.Status, r.Body)
	}
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	if got := strings.Join(app.Settings.UI.FooterOrder, ","); got != "HOME,STORE,COMMUNITY,EVENTS,CHAT" || app.Version == "" {
		t.Fatalf("after Store up: %s, version %q", got, app.Version)
	}
	creator, _ := ts.store.UserByEmail(ctx, "creator@demo.test")
	fresh, err := ts.store.CreateAppWith(ctx, store.NewApp{Name: "fresh-links", CreatorID: creator.ID})
	if err != nil || !fresh.Settings.Features.Links.Enabled || !fresh.Settings.LandingPage.ShowLinkInBio {
		t.Fatalf("a new app's link-in-bio: %+v %v", fresh.Settings.LandingPage, err)
	}
}

// Donation tiers fill the amount they ask for (links without JavaScript).
func TestDonationTiersPrefill(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	tok := withSession(sessionFor(t, ts, "follower@demo.test"))
	page := ts.do(t, "GET", "/apps/demo/donate", nil, tok)
	if !strings.Contains(page.Body, `class="tier-pick" href="/apps/demo/donate?amount=25.00"`) {
		t.Fatalf("the Silver tier is no link: %d", page.Status)
	}
	if r := ts.do(t, "GET", "/apps/demo/donate?amount=25.00", nil, tok); !strings.Contains(r.Body, `value="25.00"`) {
		t.Fatal("the tier's amount is not filled in")
	}
}

// The analytics table adds up as printed: gross - refunds = net on every
// row, and the sources add up to net.
func TestAnalyticsAddsUp(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), nil)
	o, _ := f.paidByWallet(t, "follower@demo.test", 1000)
	if _, err := f.ts.store.RefundOrderAmount(context.Background(), o.AppID, o.ID, 300, "Part"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	a, err := f.ts.store.AppAnalytics(context.Background(), o.AppID, store.AnalyticsRange{From: now.AddDate(0, 0, -400), To: now.AddDate(0, 0, 1), Bucket: store.BucketMonth})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(a.Revenue, a.RevenueTotal) {
		if r.Gross-r.Refunds != r.Net || r.Orders+r.Memberships+r.Donations+r.Tickets != r.Net {
			t.Fatalf("row does not add up: %+v", r)
		}
	}
	if a.RevenueTotal.Refunds < 300 {
		t.Fatalf("the refund is missing: %+v", a.RevenueTotal)
	}
	page := f.ts.do(t, "GET", "/apps/demo/studio/analytics", nil, withSession(sessionFor(t, f.ts, "creator@demo.test")))
	if !strings.Contains(page.Body, "<th>Gross</th><th>Refunds</th><th>Net</th>") {
		t.Fatal("the analytics table has no gross, refunds, net")
	}
}
