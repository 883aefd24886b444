package server

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

func form(h map[string]string) map[string]string {
	out := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

func jsonHeaders(h map[string]string) map[string]string {
	out := map[string]string{"Content-Type": "application/json"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// newCreator signs up a user and returns their session headers.
func newCreator(t *testing.T, ts *testServer, email, username string) (string, map[string]string) {
	t.Helper()
	u, err := ts.store.CreateUser(context.Background(), email, username, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	return u.ID, withSession(sessionFor(t, ts, email))
}

// A signed-in user creates an app from /apps by the CLI's name rules; they
// become its CREATOR and land in its studio. The live check says the same.
func TestCreateAppFromApps(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	uid, h := newCreator(t, ts, "maker@studio.test", "maker")

	// Visitors see the placeholder and a sign-up link, no form.
	r := ts.do(t, "GET", "/apps", nil, nil)
	if r.Status != 200 || !strings.Contains(r.Body, "Create your app") || strings.Contains(r.Body, `action="/apps"`) {
		t.Fatalf("visitor /apps: %d %.300s", r.Status, r.Body)
	}
	r = ts.do(t, "GET", "/apps", nil, h)
	if r.Status != 200 || !strings.Contains(r.Body, `action="/apps"`) || !strings.Contains(r.Body, `name="displayName"`) {
		t.Fatalf("signed-in /apps: %d %.300s", r.Status, r.Body)
	}

	for _, c := range []struct{ name, want string }{
		{"Bad Name", "use 2 to 40 lowercase letters"},
		{"api", "is reserved"},
		{"demo", msgAppNameTaken},
		{"abcdefghijklmnopqrstuvwxyz", "shape of an id"},
	} {
		r := ts.do(t, "GET", "/api/apps/availability?name="+url.QueryEscape(c.name), nil, h)
		var out struct{ Data AppAvailability }
		if err := json.Unmarshal([]byte(r.Body), &out); err != nil || r.Status != 200 || out.Data.Available || !strings.Contains(out.Data.Message, c.want) {
			t.Errorf("availability %q: %d %s", c.name, r.Status, r.Body)
		}
		// The form refuses it with the same words, beside the field.
		r = ts.do(t, "POST", "/apps", strings.NewReader("name="+url.QueryEscape(c.name)+"&displayName=X"), form(h))
		if r.Status != 400 && r.Status != 409 || !strings.Contains(r.Body, "field-error") && !strings.Contains(r.Body, c.want) {
			t.Errorf("form %q: %d %.300s", c.name, r.Status, r.Body)
		}
	}
	r = ts.do(t, "GET", "/api/apps/availability?name=my-studio", nil, h)
	if !strings.Contains(r.Body, `"available":true`) {
		t.Fatalf("free name: %s", r.Body)
	}
	if r := ts.do(t, "GET", "/api/apps/availability?name=my-studio", nil, nil); r.Status != 401 {
		t.Fatalf("visitor availability: %d", r.Status)
	}

	r = ts.do(t, "POST", "/apps", strings.NewReader("name=my-studio&displayName=My+Studio"), form(h))
	// It starts unpublished, on its launch checklist (issue 43 item 1).
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/apps/my-studio/studio/launch?notice=created" {
		t.Fatalf("create: %d %s %.300s", r.Status, r.Header.Get("Location"), r.Body)
	}
	app, err := ts.store.AppByIDOrName(ctx, "my-studio")
	if err != nil {
		t.Fatal(err)
	}
	if app.CreatorID != uid || app.Settings.Basic.DisplayName != "My Studio" {
		t.Fatalf("app: %+v", app)
	}
	if m, _ := ts.store.MembershipOf(ctx, app.ID, uid); m == nil || m.Role != store.RoleCreator {
		t.Fatalf("membership: %+v", m)
	}
	r = ts.do(t, "GET", "/apps/my-studio/studio/launch?notice=created", nil, h)
	if r.Status != 200 || !strings.Contains(r.Body, "Your app is ready") || !strings.Contains(r.Body, "Profile and look") {
		t.Fatalf("studio: %d %.500s", r.Status, r.Body)
	}
	// /apps lists it with a way into the studio.
	r = ts.do(t, "GET", "/apps", nil, h)
	if !strings.Contains(r.Body, `href="/apps/my-studio/studio/launch"`) { // unpublished: its checklist
		t.Fatalf("your apps: %.500s", r.Body)
	}

	// SELF_SERVE_APPS=false keeps creation to the CLI.
	off := newTestServerWith(t, storetest.Postgres(t), func(c *Config) { c.DisableSelfServe = true })
	_, oh := newCreator(t, off, "maker@studio.test", "maker")
	if r := off.do(t, "GET", "/apps", nil, oh); strings.Contains(r.Body, "Create your app") {
		t.Fatalf("self-serve off still offers creation")
	}
	if r := off.do(t, "POST", "/api/apps", strings.NewReader(`{"name":"nope-app"}`), jsonHeaders(oh)); r.Status != 403 {
		t.Fatalf("self-serve off create: %d %s", r.Status, r.Body)
	}
}

// Of 50 concurrent creations of one name exactly one app exists; the
// others are told the name is taken.
func TestCreateAppConcurrent(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	_, h := newCreator(t, ts, "racer@studio.test", "racer")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := ts.do(t, "POST", "/api/apps", strings.NewReader(`{"name":"race-app","displayName":"Race"}`), jsonHeaders(h))
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[201] != 1 || codes[409] != 49 {
		t.Fatalf("statuses: %v", codes)
	}
	n, err := ts.store.DB().NewSelect().Model((*store.App)(nil)).Where("name = ?", "race-app").Count(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("apps named race-app: %d %v", n, err)
	}
}

// An operator's suspension takes every page and call of the app offline,
// and lifting it brings them back.
func TestSuspendApp(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	if _, err := ts.store.SetAppSuspended(ctx, "demo", true); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/apps/demo", "/apps/demo/community", "/api/app/demo/landing"} {
		if r := ts.do(t, "GET", target, nil, nil); r.Status != 404 || !strings.Contains(r.Body, msgAppSuspended) {
			t.Errorf("%s while suspended: %d %.200s", target, r.Status, r.Body)
		}
	}
	h := withSession(sessionFor(t, ts, "creator@demo.test"))
	if r := ts.do(t, "GET", "/apps/demo/studio", nil, h); r.Status != 404 {
		t.Errorf("studio while suspended: %d", r.Status)
	}
	if _, err := ts.store.SetAppSuspended(ctx, "demo", false); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "GET", "/apps/demo", nil, nil); r.Status != 200 {
		t.Errorf("after lifting: %d", r.Status)
	}
}

// Only the creator and admins open the studio; the others are refused.
func TestStudioAccess(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	for email, want := range map[string]int{"": 401, "member@demo.test": 403, "follower@demo.test": 403, "subscriber@demo.test": 403,
		"moderator@demo.test": 403, "admin@demo.test": 200, "creator@demo.test": 200} {
		var h map[string]string
		if email != "" {
			h = withSession(sessionFor(t, ts, email))
		}
		for _, p := range []string{"/apps/demo/studio", "/apps/demo/studio/members", "/apps/demo/studio/analytics", "/api/studio/apps/demo/members"} {
			if r := ts.do(t, "GET", p, nil, h); r.Status != want {
				t.Errorf("%s as %q: %d, want %d", p, email, r.Status, want)
			}
		}
		// The profile leads those who may open it to the studio.
		if email != "" {
			r := ts.do(t, "GET", "/apps/demo/profile", nil, h)
			if strings.Contains(r.Body, `href="/apps/demo/studio"`) != (want == 200) {
				t.Errorf("profile of %s: studio link shown %v", email, !(want == 200))
			}
		}
	}
}

// Profile and look, links and features: refused input comes back beside
// its field with what was typed; saved input reaches the landing page,
// whose visitor cache is dropped.
func TestStudioProfileAndFeatures(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	h := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	if r := ts.do(t, "GET", "/apps/demo", nil, nil); r.Status != 200 { // warm the visitor cache
		t.Fatal(r.Status)
	}

	bad := "displayName=Fresh+Name&bio=%3Cp%3EHi%3C%2Fp%3E&lang=english&version=2.0.0&footerOrder=HOME,STORE,COMMUNITY,EVENTS,CHAT"
	r := ts.do(t, "POST", "/apps/demo/studio/profile", strings.NewReader(bad), h)
	if r.Status != 400 || !strings.Contains(r.Body, "Language must be a language code") || !strings.Contains(r.Body, `value="Fresh Name"`) {
		t.Fatalf("bad lang: %d %.400s", r.Status, r.Body)
	}
	good := strings.Replace(bad, "lang=english", "lang=pt-BR", 1)
	r = ts.do(t, "POST", "/apps/demo/studio/profile", strings.NewReader(good), h)
	if r.Status != 303 || r.Header.Get("Location") != "/apps/demo/studio?notice=saved" {
		t.Fatalf("save profile: %d %s %.300s", r.Status, r.Header.Get("Location"), r.Body)
	}
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	st := app.Settings
	if st.Basic.DisplayName != "Fresh Name" || st.Basic.Lang != "pt-BR" || app.Version != "2.0.0" || app.Bio != "<p>Hi</p>" ||
		strings.Join(st.UI.FooterOrder, ",") != "HOME,STORE,COMMUNITY,EVENTS,CHAT" {
		t.Fatalf("saved profile: %+v %q %q", st, app.Version, app.Bio)
	}
	if r := ts.do(t, "GET", "/apps/demo", nil, nil); !strings.Contains(r.Body, "Fresh Name") || !strings.Contains(r.Body, `<html lang="pt-BR">`) {
		t.Fatalf("landing still shows the old name or language: %.200s", r.Body)
	}

	// Links: rows in the order of their numbers, one switched off, an
	// empty row dropped; a bad address is refused.
	links := "linkPosition=2&linkTitle=Shop&linkUrl=https%3A%2F%2Fshop.example&linkEnabled=0" +
		"&linkPosition=1&linkTitle=Blog&linkUrl=https%3A%2F%2Fblog.example" +
		"&linkPosition=3&linkTitle=&linkUrl="
	if r := ts.do(t, "POST", "/apps/demo/studio/links", strings.NewReader(links+"&linksEnabled=1"), h); r.Status != 303 {
		t.Fatalf("links: %d %.300s", r.Status, r.Body)
	}
	got, _ := ts.store.LinksOfApp(ctx, app.ID)
	if len(got) != 2 || got[0].Title != "Blog" || got[0].Enabled || got[1].Title != "Shop" || !got[1].Enabled {
		t.Fatalf("links saved: %+v", got)
	}
	// The switches sit beside the links, in their form.
	app, _ = ts.store.AppByIDOrName(ctx, "demo")
	if !app.Settings.Features.Links.Enabled || app.Settings.LandingPage.ShowLinkInBio {
		t.Fatalf("link switches: %+v %+v", app.Settings.Features.Links, app.Settings.LandingPage)
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/links", strings.NewReader("linkTitle=X&linkUrl=javascript%3Aalert(1)"), h); r.Status != 400 || !strings.Contains(r.Body, "must start with http") {
		t.Fatalf("bad link: %d %.300s", r.Status, r.Body)
	}

	// Features: donation amounts and tiers, gating with its preview.
	feats := "community=1&allowReactions=1&store=1&events=1&donations=1&suggestedAmounts=5%2C+10%2C+12.50" +
		"&tierName=Bronze&tierAmount=10&tierDescription=Thanks" +
		"&tierName=Gold&tierAmount=100&tierDescription=" +
		"&tierName=&tierAmount=&tierDescription=" +
		"&gating=landing&gatingDescription=Members+get+everything"
	if r := ts.do(t, "POST", "/apps/demo/studio/features", strings.NewReader(strings.Replace(feats, "tierAmount=100", "tierAmount=lots", 1)), h); r.Status != 400 ||
		!strings.Contains(r.Body, "Each tier needs an amount") || !strings.Contains(r.Body, `value="Gold"`) {
		t.Fatalf("bad tier: %d %.300s", r.Status, r.Body)
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/features", strings.NewReader(feats), h); r.Status != 303 {
		t.Fatalf("features: %d %.300s", r.Status, r.Body)
	}
	var land struct {
		Data struct {
			Settings                 store.AppSettings    `json:"settings"`
			DonationTiers            []store.DonationTier `json:"donationTiers"`
			SuggestedDonationAmounts []int64              `json:"suggestedDonationAmounts"`
		}
	}
	r = ts.do(t, "GET", "/api/app/demo/landing", nil, nil)
	if err := json.Unmarshal([]byte(r.Body), &land); err != nil {
		t.Fatal(err)
	}
	f := land.Data.Settings.Features
	if f.Community.Settings.AllowComments || !f.Community.Settings.AllowReactions || f.Chat.Enabled || !f.Donations.Enabled ||
		!f.SubscriptionGating.Enabled || !f.SubscriptionGating.Settings.LandingPageOnly || f.SubscriptionGating.Settings.Required ||
		f.SubscriptionGating.Settings.Description != "Members get everything" {
		t.Fatalf("features saved: %+v", f)
	}
	if fmt := land.Data.SuggestedDonationAmounts; len(fmt) != 3 || fmt[2] != 1250 {
		t.Fatalf("amounts: %v", fmt)
	}
	if tiers := land.Data.DonationTiers; len(tiers) != 2 || tiers[0].Name != "Bronze" || tiers[0].RequiredAmount != 1000 || tiers[1].RequiredAmount != 10000 || tiers[0].Description != "Thanks" {
		t.Fatalf("tiers: %+v", tiers)
	}
	r = ts.do(t, "GET", "/apps/demo/studio/features", nil, h)
	if !strings.Contains(r.Body, "banner, bio, links and plans only") {
		t.Fatalf("gating preview: %.300s", r.Body)
	}
	// Every save is in the one audit log (the moderation screen's), with who
	// made it; the members screen links to it.
	if r = ts.do(t, "GET", "/apps/demo/studio/members", nil, h); !strings.Contains(r.Body, "/apps/demo/studio/moderation#log-title") {
		t.Errorf("the members screen does not link the audit log")
	}
	r = ts.do(t, "GET", "/apps/demo/studio/moderation", nil, h)
	for _, want := range []string{"settings.profile", "settings.links", "settings.features", "@creator"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("audit log lacks %q", want)
		}
	}
}

// A plan needs a billing cycle to be published; a draft (an item without
// one) is not offered until it gets one; archiving takes a plan off sale
// while its members keep it.
func TestStudioPlans(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	h := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")

	r := ts.do(t, "POST", "/apps/demo/studio/plans", strings.NewReader("name=Inner+Circle&price=7&description=Close&benefits=Early+access%0ALive+Q%26A"), h)
	if r.Status != 400 || !strings.Contains(r.Body, "Choose a billing cycle") || !strings.Contains(r.Body, `value="Inner Circle"`) {
		t.Fatalf("plan without cycle: %d %.300s", r.Status, r.Body)
	}
	r = ts.do(t, "POST", "/apps/demo/studio/plans", strings.NewReader("name=Inner+Circle&price=7&billingCycle=MONTHLY&description=Close&benefits=Early+access%0ALive+Q%26A"), h)
	if r.Status != 303 {
		t.Fatalf("plan: %d %.300s", r.Status, r.Body)
	}
	plans, _ := ts.store.StudioPlans(ctx, demo.ID)
	var inner store.StudioPlan
	for _, p := range plans {
		if p.Name == "Inner Circle" {
			inner = p
		}
	}
	if inner.Cycle != store.CycleMonthly || inner.Price != 700 || len(inner.Benefits) != 2 || inner.Benefits[1] != "Live Q&A" {
		t.Fatalf("plan saved: %+v", inner)
	}
	offered := func(itemID string) bool {
		items, err := ts.store.SubscriptionItems(ctx, demo.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.ID == itemID {
				return true
			}
		}
		return false
	}
	if !offered(inner.ItemID) {
		t.Fatal("the new plan is not offered")
	}
	// Members choosing a plan see its benefits: on the gated screen's plan
	// list and on the plan's checkout page.
	if err := ts.store.SetAppField(ctx, "demo", "features.subscriptionGating.settings.required", "true"); err != nil {
		t.Fatal(err)
	}
	fanPage := withSession(sessionFor(t, ts, "follower@demo.test"))
	for _, path := range []string{"/apps/demo", "/apps/demo/checkout/plan/" + inner.ItemID} {
		r := ts.do(t, "GET", path, nil, fanPage)
		if r.Status != 200 || !strings.Contains(r.Body, `class="plan-benefits"`) || !strings.Contains(r.Body, "Early access") || !strings.Contains(r.Body, "Live Q&amp;A") {
			t.Errorf("%s: %d, the plan's benefits are not shown", path, r.Status)
		}
	}
	if err := ts.store.SetAppField(ctx, "demo", "features.subscriptionGating.settings.required", "false"); err != nil {
		t.Fatal(err)
	}

	// A SUBSCRIPTION item made in the item editor has no cycle: a draft.
	shop, _ := ts.store.ShopOfApp(ctx, demo.ID)
	draft, err := ts.store.SaveItem(ctx, shop, "", store.ItemInput{Name: "Draft plan", Type: store.ItemSubscription, Price: 300})
	if err != nil {
		t.Fatal(err)
	}
	if offered(draft.ID) {
		t.Fatal("a plan without a billing cycle is offered")
	}
	if r := ts.do(t, "GET", "/apps/demo/studio/plans", nil, h); !strings.Contains(r.Body, "Draft: choose a billing cycle to publish") {
		t.Fatalf("draft not shown as a draft")
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/plans/"+draft.ID, strings.NewReader("name=Draft+plan&price=3&billingCycle=YEARLY"), h); r.Status != 303 || !offered(draft.ID) {
		t.Fatalf("publish draft: %d %.300s", r.Status, r.Body)
	}

	// A member takes the plan, then it is archived: off sale, and theirs.
	fan := ts.userID(t, "follower@demo.test")
	if _, _, err := ts.store.CreditWallet(ctx, demo.ID, fan, 5000, "test:plans", "gift"); err != nil {
		t.Fatal(err)
	}
	fh := jsonHeaders(withSession(sessionFor(t, ts, "follower@demo.test")))
	if r := ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", strings.NewReader(`{"itemId":"`+inner.ItemID+`","paymentMethod":"musepay"}`), fh); r.Status != 200 {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/plans/"+inner.ItemID+"/archive", nil, h); r.Status != 303 {
		t.Fatalf("archive: %d %.300s", r.Status, r.Body)
	}
	if offered(inner.ItemID) {
		t.Fatal("an archived plan is offered")
	}
	if ok, _ := ts.store.HasValidSubscription(ctx, demo.ID, fan, time.Now()); !ok {
		t.Fatal("archiving ended the member's membership")
	}
	plans, _ = ts.store.StudioPlans(ctx, demo.ID)
	for _, p := range plans {
		if p.ItemID == inner.ItemID && (!p.Archived || p.Members != 1) {
			t.Fatalf("archived plan: %+v", p)
		}
	}
	if r := ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", strings.NewReader(`{"itemId":"`+inner.ItemID+`","paymentMethod":"musepay"}`), jsonHeaders(withSession(sessionFor(t, ts, "member@demo.test")))); r.Status < 400 {
		t.Fatalf("subscribed to an archived plan: %d", r.Status)
	}
}

// Roles change within what the actor may grant: admins below admin, the
// creator up to admin, nobody to CREATOR or SUBSCRIBER, nobody their own
// or a higher role. Every change is audited; of 50 concurrent changes of
// one member exactly one happens.
func TestStudioMemberRoles(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	creator := jsonHeaders(withSession(sessionFor(t, ts, "creator@demo.test")))
	admin := jsonHeaders(withSession(sessionFor(t, ts, "admin@demo.test")))
	fan, mod := ts.userID(t, "follower@demo.test"), ts.userID(t, "moderator@demo.test")
	put := func(h map[string]string, userID, role string) response {
		return ts.do(t, "PUT", "/api/studio/apps/demo/members/"+userID, strings.NewReader(`{"role":"`+role+`"}`), h)
	}
	for _, c := range []struct {
		h          map[string]string
		user, role string
		want       int
	}{
		{admin, fan, store.RoleAdmin, 403},
		{admin, fan, store.RoleCreator, 403},
		{admin, fan, store.RoleSubscriber, 403},
		{admin, ts.userID(t, "creator@demo.test"), store.RoleFollower, 403},
		{admin, ts.userID(t, "admin@demo.test"), store.RoleFollower, 403},
		{creator, ts.userID(t, "creator@demo.test"), store.RoleAdmin, 403},
		{admin, mod, store.RoleFollower, 200},
		{creator, fan, store.RoleAdmin, 200},
		{admin, fan, store.RoleFollower, 403}, // now an admin, like the actor
	} {
		if r := put(c.h, c.user, c.role); r.Status != c.want {
			t.Errorf("set %s to %s: %d %s, want %d", c.user, c.role, r.Status, r.Body, c.want)
		}
	}
	if m, _ := ts.store.MembershipOf(ctx, demo.ID, fan); m.Role != store.RoleAdmin {
		t.Fatalf("fan: %+v", m)
	}

	// Search and role filter.
	var list struct {
		Data StudioMembers
	}
	r := ts.do(t, "GET", "/api/studio/apps/demo/members?q=MODERATOR%40demo&role=FOLLOWER", nil, admin)
	if err := json.Unmarshal([]byte(r.Body), &list); err != nil || len(list.Data.Members) != 1 || list.Data.Members[0].Email != "moderator@demo.test" {
		t.Fatalf("search: %d %s", r.Status, r.Body)
	}
	if g := list.Data.Grantable; len(g) != 2 || g[0] != store.RoleModerator || g[1] != store.RoleFollower {
		t.Fatalf("an admin may grant: %v", g)
	}

	// Remove by the form, without JavaScript.
	fh := form(withSession(sessionFor(t, ts, "admin@demo.test")))
	r = ts.do(t, "POST", "/apps/demo/studio/members/"+mod, strings.NewReader("role=NONE&back=%3Frole%3DFOLLOWER"), fh)
	if r.Status != 303 || r.Header.Get("Location") != "/apps/demo/studio/members?role=FOLLOWER&notice=removed" {
		t.Fatalf("remove: %d %s %.300s", r.Status, r.Header.Get("Location"), r.Body)
	}
	if m, _ := ts.store.MembershipOf(ctx, demo.ID, mod); m != nil {
		t.Fatalf("still a member: %+v", m)
	}
	// A refused form says why on the page.
	r = ts.do(t, "POST", "/apps/demo/studio/members/"+ts.userID(t, "creator@demo.test"), strings.NewReader("role=FOLLOWER"), fh)
	if r.Status != 403 || !strings.Contains(r.Body, msgCannotGrant) {
		t.Fatalf("refused form: %d %.300s", r.Status, r.Body)
	}
	audit, _ := ts.store.AuditLog(ctx, demo.ID, 10)
	if len(audit) != 3 || audit[0].Action != "member.remove" || audit[0].Actor != "admin" || audit[0].Target != "moderator" ||
		audit[1].Detail != "FOLLOWER → ADMIN" || audit[1].Actor != "creator" {
		t.Fatalf("audit: %+v", audit)
	}

	// 50 concurrent changes of one member by the creator: one audit line.
	sub := ts.userID(t, "subscriber@demo.test")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := put(creator, sub, store.RoleModerator)
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if codes[200]+codes[409] != 50 || codes[200] < 1 {
		t.Fatalf("statuses: %v", codes)
	}
	n, err := ts.store.DB().NewSelect().Model((*store.ModerationEntry)(nil)).Where("app_id = ? AND target_user_id = ? AND action = 'member.role'", demo.ID, sub).Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("audit lines for the raced change: %d %v", n, err)
	}
	// The role history has each change once, from the role it left: the
	// promotion, the removal and the raced change.
	history, err := ts.store.RoleHistory(ctx, demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string][]string{}
	for _, c := range history {
		changes[c.UserID] = append(changes[c.UserID], c.Previous+">"+c.Role)
	}
	for user, want := range map[string]string{
		fan: "[>FOLLOWER FOLLOWER>ADMIN]", mod: "[>MODERATOR MODERATOR>FOLLOWER FOLLOWER>]", sub: "[>SUBSCRIBER SUBSCRIBER>MODERATOR]",
	} {
		if got := fmt.Sprint(changes[user]); got != want {
			t.Errorf("role history of %s: %s, want %s", user, got, want)
		}
	}
}

// The title image and banner are uploaded images of the app; anything else
// is refused, and removing one works as a plain form.
func TestStudioImages(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	acme, _ := ts.store.AppByIDOrName(ctx, "acme")
	h := form(withSession(sessionFor(t, ts, "creator@demo.test")))
	owner := ts.userID(t, "creator@demo.test")
	media := func(appID, status string) string {
		m := &store.Media{ID: store.NewID(), AppID: &appID, OwnerID: owner, Name: "b.png", Type: store.MediaImage, Size: 10, MimeType: "image/png",
			MediaKey: "banner", Status: status, CreatedAt: time.Now()}
		m.Path = "apps/" + appID + "/banner/" + m.ID + ".png"
		if _, err := ts.store.DB().NewInsert().Model(m).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	for _, id := range []string{media(demo.ID, "PENDING"), media(acme.ID, store.MediaUploaded), "nope"} {
		if r := ts.do(t, "POST", "/apps/demo/studio/images", strings.NewReader("which=banner&mediaId="+id), h); r.Status != 400 || !strings.Contains(r.Body, "Image not found") {
			t.Errorf("banner %s: %d %.200s", id, r.Status, r.Body)
		}
	}
	good := media(demo.ID, store.MediaUploaded)
	if r := ts.do(t, "POST", "/apps/demo/studio/images", strings.NewReader("which=banner&mediaId="+good), h); r.Status != 303 {
		t.Fatalf("banner: %d %.200s", r.Status, r.Body)
	}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); app.BannerMediaID == nil || *app.BannerMediaID != good {
		t.Fatalf("banner not set: %+v", app.BannerMediaID)
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/images", strings.NewReader("which=title&mediaId="), h); r.Status != 303 {
		t.Fatalf("remove title: %d", r.Status)
	}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); app.TitleMediaID != nil {
		t.Fatalf("title not removed")
	}
}

// TestRemovingAMemberEndsTheirMembership: a member who holds a paid
// membership and is removed from the app loses access at once (the gate
// closes), nothing renews it (the wallet is not charged again), and they
// are told; the removal is in the one audit log.
func TestRemovingAMemberEndsTheirMembership(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ctx := context.Background()
	st := f.ts.store
	f.set(t, "demo", "features.subscriptionGating.settings.required", "true")
	f.credit(t, "follower@demo.test", 5000)
	f.ts.run(t, []scenario{{method: "POST", path: "/api/subscriptions/apps/demo/subscribe", as: "follower@demo.test",
		body: `{"itemId":"` + f.planItemID + `"}`, status: 200}})
	sub := f.sub(t, "follower@demo.test")
	fan := f.userID(t, "follower@demo.test")
	if ok, _ := st.HasValidSubscription(ctx, f.appID, fan, time.Now()); !ok {
		t.Fatal("no access after subscribing")
	}
	balance := f.balance(t, "follower@demo.test")
	creator := jsonHeaders(withSession(sessionFor(t, f.ts, "creator@demo.test")))
	if r := f.ts.do(t, "DELETE", "/api/studio/apps/demo/members/"+fan, nil, creator); r.Status != 200 {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	ended := f.sub(t, "follower@demo.test")
	if ended.Status != store.SubCanceled || ended.EndedAt == nil || !ended.CancelAtPeriodEnd {
		t.Fatalf("membership after removal: %+v", ended)
	}
	if ok, _ := st.HasValidSubscription(ctx, f.appID, fan, time.Now()); ok {
		t.Error("access kept after removal")
	}
	f.ts.run(t, []scenario{{name: "the gate is closed", path: "/api/community/" + f.communityID + "/posts", as: "follower@demo.test", status: 403}})
	for _, at := range []time.Time{sub.CurrentPeriodEnd.Add(-30 * time.Minute), sub.CurrentPeriodEnd.Add(time.Hour)} {
		if res, err := st.RenewDueSubscriptions(ctx, store.RenewOptions{Now: at}); err != nil || res.Renewed != 0 {
			t.Fatalf("renewal run after removal: %+v %v", res, err)
		}
	}
	if b := f.balance(t, "follower@demo.test"); b != balance {
		t.Errorf("charged after removal: %d -> %d", balance, b)
	}
	n, _ := st.DB().NewSelect().Table("notifications").Where("app_id = ? AND user_id = ? AND content LIKE ?", f.appID, fan, "%no longer a member%").Count(ctx)
	if n != 1 {
		t.Errorf("removal notices %d, want 1", n)
	}
	n, _ = st.DB().NewSelect().Model((*store.ModerationEntry)(nil)).Where("app_id = ? AND action = 'member.remove' AND target_user_id = ?", f.appID, fan).Count(ctx)
	if n != 1 {
		t.Errorf("removal audit lines %d, want 1", n)
	}
}

// TestStudioRoleSelectHasNoEmptyChoice: each member's role select offers
// real roles only: a role the actor may not grant (a paying subscriber's)
// shows as the current one, and sending it back changes nothing.
func TestStudioRoleSelectHasNoEmptyChoice(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	h := withSession(sessionFor(t, ts, "creator@demo.test"))
	page := ts.do(t, "GET", "/apps/demo/studio/members?role=SUBSCRIBER", nil, h)
	if page.Status != 200 || strings.Count(page.Body, `<option value="">`) != 1 || !strings.Contains(page.Body, "(current)") {
		t.Fatalf("members page: %d, %d empty options (want only the filter's), current role shown: %v", page.Status,
			strings.Count(page.Body, `<option value="">`), strings.Contains(page.Body, "(current)"))
	}
	sub := ts.userID(t, "subscriber@demo.test")
	r := ts.do(t, "POST", "/apps/demo/studio/members/"+sub, strings.NewReader("role=SUBSCRIBER"),
		withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/x-www-form-urlencoded"))
	if r.Status != http.StatusSeeOther {
		t.Fatalf("unchanged role: %d %.300s", r.Status, r.Body)
	}
	if m, _ := ts.store.MembershipOf(ctx, demo.ID, sub); m == nil || m.Role != store.RoleSubscriber {
		t.Fatalf("role after an unchanged submit: %+v", m)
	}
}

// TestStudioStoriesSwitch: the Features form turns stories off (no strip,
// no stories by the API, no new ones, no "Add story") and on again.
func TestStudioStoriesSwitch(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.Landing(ctx, "demo")
	h := withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/x-www-form-urlencoded")
	creator := jsonHeaders(withSession(sessionFor(t, ts, "creator@demo.test")))
	feats := "community=1&allowReactions=1&allowComments=1&store=1&events=1&donations=1&gating=off"
	stories := func() (int, string) {
		var out struct {
			Data struct {
				Users []any `json:"users"`
			} `json:"data"`
		}
		r := ts.do(t, "GET", "/api/community/"+demo.Community.ID+"/stories", nil, nil)
		commJSON(t, r, &out)
		page := ts.do(t, "GET", "/apps/demo/community", nil, withSession(sessionFor(t, ts, "creator@demo.test")))
		return len(out.Data.Users), page.Body
	}
	if n, page := stories(); n == 0 || !strings.Contains(page, `class="story-thumb`) || !strings.Contains(page, "Add story") {
		t.Fatalf("before: %d groups, strip shown %v", n, strings.Contains(page, `class="story-thumb`))
	}
	if r := ts.do(t, "GET", "/apps/demo/studio/features", nil, h); !strings.Contains(r.Body, `name="stories"`) {
		t.Fatal("the Features form has no stories switch")
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/features", strings.NewReader(feats), h); r.Status != 303 {
		t.Fatalf("stories off: %d %.300s", r.Status, r.Body)
	}
	if n, page := stories(); n != 0 || strings.Contains(page, `class="story-thumb`) || strings.Contains(page, "Add story") {
		t.Fatalf("off: %d groups, strip shown %v", n, strings.Contains(page, `class="story-thumb`))
	}
	r := ts.do(t, "POST", "/api/messages", strings.NewReader(`{"type":"STORY","communityId":"`+demo.Community.ID+`","attachmentIds":["x"]}`), creator)
	if r.Status != 403 {
		t.Fatalf("new story while off: %d %s", r.Status, r.Body)
	}
	if r := ts.do(t, "GET", "/api/community/"+demo.Community.ID+"/posts?type=STORY", nil, creator); r.Status != 200 || strings.Contains(r.Body, `"type":"STORY"`) {
		t.Fatalf("story feed while off: %d", r.Status)
	}
	if r := ts.do(t, "POST", "/apps/demo/studio/features", strings.NewReader(feats+"&stories=1"), h); r.Status != 303 {
		t.Fatalf("stories on: %d", r.Status)
	}
	if n, _ := stories(); n == 0 {
		t.Fatal("stories did not come back")
	}
}

// TestStudioImageUploadWithoutJS: the studio's title image and banner go
// up with a plain multipart form post when JavaScript is off: the page
// offers the file field, the post stores the image and sets it.
func TestStudioImageUploadWithoutJS(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	token := sessionFor(t, ts, "creator@demo.test")
	page := ts.do(t, "GET", "/apps/demo/studio", nil, withSession(token))
	if !strings.Contains(strings.ToLower(page.Body), `enctype="multipart/form-data"`) || !strings.Contains(page.Body, `name="file"`) {
		t.Fatalf("the studio offers no upload form without JavaScript: %d", page.Status)
	}
	for _, which := range []string{"banner", "title"} {
		body, ct := multipartBody(t, [][2]string{{"which", which}}, formFile{"file", which + ".png", "image/png", pngBytes(t)})
		r := ts.do(t, "POST", "/apps/demo/studio/images", body, withSession(token, "Content-Type", ct))
		if r.Status != http.StatusSeeOther {
			t.Fatalf("%s upload: %d %.300s", which, r.Status, r.Body)
		}
	}
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	for which, id := range map[string]*string{"banner": app.BannerMediaID, "title": app.TitleMediaID} {
		if id == nil {
			t.Fatalf("%s not set", which)
		}
		var m store.Media
		if err := ts.store.DB().NewSelect().Model(&m).Where("id = ?", *id).Scan(ctx); err != nil || m.Status != store.MediaUploaded || m.MediaKey != which {
			t.Fatalf("%s media: %+v %v", which, m, err)
		}
	}
}

// The analytics' date-range picker and the CSV exports over HTTP: from, to
// (inclusive days) and bucket pick the periods; a bad date, bucket or order
// of dates is refused beside its field (400 on the page, which still shows
// the default range; 400 from the API); more than a year of days is shown
// by week; the exports keep to the range, download as CSV, and a member's
// text that a spreadsheet would read as a formula is defused.
func TestStudioAnalyticsRangeAndExports(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	creator := withSession(sessionFor(t, ts, "creator@demo.test"))
	api := jsonHeaders(withSession(sessionFor(t, ts, "creator@demo.test")))

	var got struct {
		Data store.Analytics
	}
	r := ts.do(t, "GET", "/api/studio/apps/demo/analytics?from=2026-11-01&to=2026-11-14&bucket=week", nil, api)
	if err := json.Unmarshal([]byte(r.Body), &got); r.Status != 200 || err != nil {
		t.Fatalf("analytics: %d %.300s", r.Status, r.Body)
	}
	var periods []string
	for _, p := range got.Data.Members {
		periods = append(periods, p.Period)
	}
	if got.Data.From != "2026-11-01" || got.Data.To != "2026-11-14" || got.Data.Bucket != "week" || len(got.Data.Revenue) != 3 ||
		fmt.Sprint(periods) != "[2026-10-26 2026-11-02 2026-11-09]" {
		t.Errorf("weekly range: %+v %v", got.Data, periods)
	}
	r = ts.do(t, "GET", "/api/studio/apps/demo/analytics?from=2024-01-01&to=2025-06-30", nil, api)
	if err := json.Unmarshal([]byte(r.Body), &got); r.Status != 200 || err != nil || got.Data.Bucket != "week" {
		t.Errorf("a year and a half of days: %d %s %.200s", r.Status, got.Data.Bucket, r.Body)
	}
	for q, field := range map[string]string{
		"from=2026-13-01":               "from",
		"to=26.11.2026":                 "to",
		"bucket=year":                   "bucket",
		"from=2026-11-10&to=2026-11-01": "from",
		"from=2020-01-01&to=2026-11-01": "from",
	} {
		r := ts.do(t, "GET", "/api/studio/apps/demo/analytics?"+q, nil, api)
		if r.Status != 400 || !strings.Contains(r.Body, `"`+field+`"`) {
			t.Errorf("%s: %d %.300s", q, r.Status, r.Body)
		}
	}
	// The page: the picker keeps the range; a bad date is said beside it.
	r = ts.do(t, "GET", "/apps/demo/studio/analytics?from=2026-11-01&to=2026-11-14&bucket=month", nil, creator)
	if r.Status != 200 || !strings.Contains(r.Body, `value="2026-11-01"`) || !strings.Contains(r.Body, `value="2026-11-14"`) ||
		!strings.Contains(r.Body, "<svg") || !strings.Contains(r.Body, "2026-11</td>") {
		t.Errorf("page with a range: %d %.500s", r.Status, r.Body)
	}
	r = ts.do(t, "GET", "/apps/demo/studio/analytics?from=someday", nil, creator)
	if r.Status != 400 || !strings.Contains(r.Body, "Dates look like 2026-11-26") || !strings.Contains(r.Body, "revenue-table") {
		t.Errorf("page with a bad date: %d %.500s", r.Status, r.Body)
	}

	// Exports keep to the range and defuse formulas.
	fan := ts.userID(t, "follower@demo.test")
	in := func(at time.Time, cents int64, msg string) {
		d := &store.Donation{ID: store.NewID(), AppID: demo.ID, UserID: fan, Amount: cents, Currency: "USD", Status: store.DonationPaid,
			Message: msg, CreatedAt: at, ProcessedAt: &at}
		if _, err := ts.store.DB().NewInsert().Model(d).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	in(time.Date(2031, 3, 5, 10, 0, 0, 0, time.UTC), 1234, "=HYPERLINK(\"http://x\")")
	in(time.Date(2031, 2, 5, 10, 0, 0, 0, time.UTC), 999, "before the range")
	r = ts.do(t, "GET", "/apps/demo/studio/export/donations.csv?from=2031-03-01&to=2031-03-31", nil, creator)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") ||
		r.Header.Get("Content-Disposition") != `attachment; filename="demo-donations.csv"` {
		t.Fatalf("donations export: %d %v", r.Status, r.Header)
	}
	rows, err := csv.NewReader(strings.NewReader(r.Body)).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][0] != "created_at" || rows[1][2] != "follower" || rows[1][4] != "12.34" ||
		rows[1][7] != `'=HYPERLINK("http://x")` {
		t.Errorf("donations export rows: %q %v", rows, err)
	}
	r = ts.do(t, "GET", "/apps/demo/studio/export/orders.csv?from=2031-03-01&to=2031-03-31", nil, creator)
	if rows, err := csv.NewReader(strings.NewReader(r.Body)).ReadAll(); r.Status != 200 || err != nil || len(rows) != 1 || rows[0][0] != "order_number" {
		t.Errorf("orders export of an empty range: %d %q", r.Status, r.Body)
	}
	r = ts.do(t, "GET", "/apps/demo/studio/export/members.csv", nil, creator)
	if r.Status != 200 || !strings.Contains(r.Body, "\nfollower,follower@demo.test,FOLLOWER,") {
		t.Errorf("members export: %d %.300s", r.Status, r.Body)
	}
	if r := ts.do(t, "GET", "/apps/demo/studio/export/secrets.csv", nil, creator); r.Status != 404 {
		t.Errorf("unknown export: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/demo/studio/export/donations.csv?from=nope", nil, creator); r.Status != 400 {
		t.Errorf("export with a bad date: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/demo/studio/export/donations.csv", nil, withSession(sessionFor(t, ts, "moderator@demo.test"))); r.Status == 200 {
		t.Errorf("a moderator downloads the donations: %d", r.Status)
	}
}
