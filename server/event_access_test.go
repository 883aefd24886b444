package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// An event's details have an access setting (issue 40 item 2): an event
// for the second tier and above shows its name, time and banner to every
// viewer of the app's events, but its description, place and media reach
// no visitor, follower or first-tier member by any path (pages, the JSON
// API, the landing, search, calendar files, media URLs), and only its
// readers may join it. Authors below the staff choose only readers they
// are among; the form without JavaScript takes the setting too.
func TestEventDetailsForEachTier(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ts := f.ts
	ctx := context.Background()
	creator := commUser(t, ts, "creator@demo.test")
	img := pngBytes(t)
	r, cm := mediaCreate(t, ts, creator, mediaReq(f.app.ID, "image/png", len(img), "post"))
	if r.Status != 201 {
		t.Fatalf("create media: %d %s", r.Status, r.Body)
	}
	if up := localPut(t, ts, cm.Data.PresignedUploadURL, "image/png", img); up.Status != 200 {
		t.Fatalf("upload: %d", up.Status)
	}
	mediaID := cm.Data.Media.ID
	var created struct{ Data EventDetail }
	r = ts.do(t, "POST", "/api/events/apps/"+f.app.ID+"/events", strings.NewReader(eventBody(map[string]any{
		"name": "Backstage listening night", "description": "Kestrel-vault address and the door code", "location": "Kestrel-vault studio 7b",
		"mediaIds": []string{mediaID}, "access": map[string]any{"audience": "MEMBERS", "minTierId": f.tiers[1].ID}})), creator)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	commJSON(t, r, &created)
	ev := created.Data
	if ev.Locked || ev.Access.Audience != store.AccessMembers || ev.AccessTier == nil || ev.AccessTier.Name != "Backstage Pass" || ev.Description == "" {
		t.Fatalf("the creator's answer: %+v", ev.EventView)
	}
	_, tier2Session := f.fan(t, "eventtwo", 500_00)
	if r := ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", body(map[string]any{"itemId": f.tiers[1].ItemID, "paymentMethod": "musepay"}),
		jsonHeaders(withSession(tier2Session))); r.Status != 200 {
		t.Fatalf("join tier 2: %d %s", r.Status, r.Body)
	}
	paths := []string{
		"/apps/demo", "/api/app/demo/landing", "/apps/demo/events", "/api/events/apps/" + f.app.ID + "/events",
		"/apps/demo/events/" + ev.ID, "/api/events/" + ev.ID, "/apps/demo/events/" + ev.ID + "/calendar.ics", "/apps/demo/events.ics",
		"/api/search/apps/demo?q=Kestrel", "/apps/demo/search?q=Kestrel",
	}
	viewers := []struct {
		name  string
		h     map[string]string
		reads bool
	}{
		{"tier-2 member", withSession(tier2Session), true},
		{"visitor", nil, false},
		{"follower", withSession(sessionFor(t, ts, "follower@demo.test")), false},
		{"first-tier member", withSession(sessionFor(t, ts, "subscriber@demo.test")), false},
		{"visitor again", nil, false},
	}
	for _, v := range viewers {
		saw := false
		for _, p := range paths {
			got := ts.do(t, "GET", p, nil, v.h)
			if strings.Contains(got.Body, "Kestrel-vault") {
				saw = true
				if !v.reads {
					t.Errorf("%s: %s shows the locked details", v.name, p)
				}
			}
		}
		if v.reads && !saw {
			t.Errorf("%s cannot read the details", v.name)
		}
		media := ts.do(t, "GET", "/media/i/"+mediaID+"/original", nil, v.h)
		if v.reads != (media.Status == 200) {
			t.Errorf("%s: the event's picture answers %d", v.name, media.Status)
		}
	}
	// What a locked viewer gets: the name and the way to unlock.
	var locked struct{ Data EventDetail }
	commJSON(t, ts.do(t, "GET", "/api/events/"+ev.ID, nil, withSession(sessionFor(t, ts, "subscriber@demo.test"))), &locked)
	if !locked.Data.Locked || locked.Data.Name != "Backstage listening night" || locked.Data.Location != "" || len(locked.Data.Media) != 0 || locked.Data.Permissions.CanJoin {
		t.Fatalf("locked answer: %+v %+v", locked.Data.EventView, locked.Data.Permissions)
	}
	page := ts.do(t, "GET", "/apps/demo/events/"+ev.ID, nil, withSession(sessionFor(t, ts, "follower@demo.test")))
	if !strings.Contains(page.Body, "Join Backstage Pass to unlock") || !strings.Contains(page.Body, "Backstage listening night") {
		t.Fatalf("locked page: %.600s", page.Body)
	}
	// Only its readers join it.
	if r := ts.do(t, "POST", "/api/events/"+ev.ID+"/join", nil, jsonHeaders(withSession(sessionFor(t, ts, "follower@demo.test")))); r.Status != 403 {
		t.Fatalf("a follower joins a tier's event: %d %s", r.Status, r.Body)
	}
	if r := ts.do(t, "POST", "/api/events/"+ev.ID+"/join", nil, jsonHeaders(withSession(tier2Session))); r.Status != 200 {
		t.Fatalf("a tier-2 member joins: %d %s", r.Status, r.Body)
	}
	// Made public by its creator, the details are everyone's again.
	if r := ts.do(t, "PUT", "/api/events/"+ev.ID, body(map[string]any{"access": map[string]any{"audience": "PUBLIC"}}), creator); r.Status != 200 {
		t.Fatalf("make public: %d %s", r.Status, r.Body)
	}
	if got := ts.do(t, "GET", "/apps/demo/events/"+ev.ID, nil, nil); !strings.Contains(got.Body, "Kestrel-vault studio 7b") {
		t.Fatalf("the public event's page lacks its place")
	}

	// A follower who may create events cannot lock one for members.
	if err := ts.store.SetAppField(ctx, "demo", "features.events.settings.content_settings.create_permission", "FOLLOWER"); err != nil {
		t.Fatal(err)
	}
	follower := jsonHeaders(withSession(sessionFor(t, ts, "follower@demo.test")))
	if r := ts.do(t, "POST", "/api/events/apps/"+f.app.ID+"/events", strings.NewReader(eventBody(map[string]any{"access": map[string]any{"audience": "MEMBERS"}})), follower); r.Status != 403 || !strings.Contains(r.Body, `"access"`) {
		t.Fatalf("a follower's members event: %d %s", r.Status, r.Body)
	}
	// The form without JavaScript offers and stores the setting.
	tok := sessionFor(t, ts, "creator@demo.test")
	if form := ts.do(t, "GET", "/apps/demo/create-event", nil, withSession(tok)); !strings.Contains(form.Body, `value="TIER:`+f.tiers[2].ID+`"`) {
		t.Fatalf("the create-event form offers no tiers")
	}
	values := [][2]string{{"name", "Followers picnic"}, {"description", "Bring a blanket"}, {"type", "MEETUP"}, {"location", "Park"},
		{"startDate", isoIn(48 * time.Hour)[:10]}, {"startTime", "18:00"}, {"endDate", isoIn(72 * time.Hour)[:10]}, {"endTime", "20:00"}, {"access", "FOLLOWERS"}}
	formBody, ct := multipartBody(t, values)
	res := ts.do(t, "POST", "/apps/demo/create-event", formBody, withSession(tok, "Content-Type", ct))
	if res.Status != 303 {
		t.Fatalf("form: %d %.400s", res.Status, res.Body)
	}
	var e store.Event
	if err := ts.store.DB().NewSelect().Model(&e).Where("name = ?", "Followers picnic").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if e.AccessAudience != store.AccessFollowers {
		t.Fatalf("the form's event access: %q", e.AccessAudience)
	}
}
