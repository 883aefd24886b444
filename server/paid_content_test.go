package server

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"marquee/store"
)

// TestPaidContentStaysPaid (issue 27 item 9): under subscription gating
// (required), one rule (access.ContentFor) decides what a viewer may see,
// and every path obeys it: the landing page and its JSON show short
// teasers without media, gated media does not load, notifications (list
// and web push) say that something is new without quoting it, search
// refuses, and the feed and sitemap leave the content out. A subscriber
// sees it all.
func TestPaidContentStaysPaid(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ts := f.ts
	ts.cfg.PushAllowLoopbackHTTP = true
	// The receiver is on loopback, which the push job's own client refuses
	// (TestPushNeverReachesPrivateAddresses): this test lets it through.
	ts.push.Client = &http.Client{Timeout: 15 * time.Second}
	db := ts.store.DB()
	startJobs(t, ts, db)
	f.set(t, "demo", "features.subscriptionGating.settings.required", "true")

	// Push for a gated follower and for a subscriber.
	pr := newPushReceiver(t)
	auth := base64.RawURLEncoding.EncodeToString(pr.auth)
	follower, subscriber := commUser(t, ts, "follower@demo.test"), commUser(t, ts, "subscriber@demo.test")
	for who, h := range map[string]map[string]string{"follower": follower, "subscriber": subscriber} {
		r := ts.do(t, "POST", "/api/notifications/enable-push/demo", body(map[string]string{"endpoint": pr.srv.URL + "/" + who, "p256dh": pr.p256dh(), "auth": auth}), h)
		if r.Status != 201 {
			t.Fatalf("enable push for %s: %d %s", who, r.Status, r.Body)
		}
	}

	// The creator posts a long text with a photo (the form's path) and an event.
	secret := "Stems for the new single are up. " + strings.Repeat("Only members read this far into the post. ", 6) + "THE-END-OF-THE-POST"
	creatorTok := sessionFor(t, ts, "creator@demo.test")
	form, ct := multipartBody(t, [][2]string{{"content", secret}}, formFile{"media", "stem.png", "image/png", pngBytes(t)})
	if r := ts.do(t, "POST", "/apps/demo/create-post", form, withSession(creatorTok, "Content-Type", ct)); r.Status != 303 {
		t.Fatalf("creator posts: %d %s", r.Status, r.Body)
	}
	var post store.Message
	if err := db.NewSelect().Model(&post).Where("content = ?", secret).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	view, err := ts.store.MessageView(t.Context(), &post, 0)
	if err != nil || len(view.Attachments) != 1 {
		t.Fatalf("post view: %+v %v", view, err)
	}
	mediaID := view.Attachments[0].Media.ID
	start := time.Now().Add(72 * time.Hour).UTC()
	r := ts.do(t, "POST", "/api/events/apps/demo/events", body(map[string]any{"name": "Secret listening party", "startDate": start.Format(time.RFC3339),
		"endDate": start.Add(time.Hour).Format(time.RFC3339)}), withSession(creatorTok, "Content-Type", "application/json"))
	if r.Status != 201 {
		t.Fatalf("creator creates an event: %d %s", r.Status, r.Body)
	}

	t.Run("landing: teasers without media for the gated, everything for a subscriber", func(t *testing.T) {
		type landing struct {
			Data struct {
				RecentPosts []struct {
					ID          string
					Content     string
					Attachments []json.RawMessage
				}
				UpcomingEvents []struct {
					Media  []json.RawMessage
					Banner json.RawMessage
				}
				FeaturedStoreItems []struct{ Media []json.RawMessage }
			}
		}
		find := func(l landing) (string, int, bool) {
			for _, p := range l.Data.RecentPosts {
				if p.ID == post.ID {
					return p.Content, len(p.Attachments), true
				}
			}
			return "", 0, false
		}
		for _, who := range []map[string]string{follower, nil} {
			var l landing
			commJSON(t, ts.do(t, "GET", "/api/app/demo/landing", nil, who), &l)
			text, atts, ok := find(l)
			if !ok || utf8.RuneCountInString(text) > 120 || strings.Contains(text, "THE-END-OF-THE-POST") || atts != 0 {
				t.Errorf("gated landing JSON: found %v, %d characters, %d attachments: %q", ok, utf8.RuneCountInString(text), atts, text)
			}
			for _, e := range l.Data.UpcomingEvents {
				if len(e.Media) != 0 || (len(e.Banner) > 0 && string(e.Banner) != "null") {
					t.Errorf("gated landing JSON carries event media: %+v", e)
				}
			}
			for _, it := range l.Data.FeaturedStoreItems {
				if len(it.Media) != 0 {
					t.Errorf("gated landing JSON carries item media")
				}
			}
			page := ts.do(t, "GET", "/apps/demo", nil, who)
			if page.Status != 200 || strings.Contains(page.Body, "THE-END-OF-THE-POST") || strings.Contains(page.Body, mediaID) {
				t.Errorf("gated landing page (%v): %d, carries the whole post or its photo", who != nil, page.Status)
			}
			if !strings.Contains(page.Body, "Stems for the new single are up.") {
				t.Errorf("gated landing page lacks the teaser")
			}
		}
		var l landing
		commJSON(t, ts.do(t, "GET", "/api/app/demo/landing", nil, subscriber), &l)
		if text, atts, ok := find(l); !ok || text != secret || atts != 1 {
			t.Errorf("subscriber landing: %v %q %d", ok, text, atts)
		}
	})

	t.Run("gated media does not load", func(t *testing.T) {
		if r := ts.do(t, "GET", "/media/i/"+mediaID+"/original", nil, follower); r.Status != 404 {
			t.Errorf("gated follower loads the photo: %d", r.Status)
		}
		if r := ts.do(t, "GET", "/media/i/"+mediaID+"/original", nil, nil); r.Status != 404 {
			t.Errorf("visitor loads the photo: %d", r.Status)
		}
		if r := ts.do(t, "GET", "/media/i/"+mediaID+"/original", nil, subscriber); r.Status != 200 {
			t.Errorf("subscriber cannot load the photo: %d", r.Status)
		}
	})

	t.Run("notifications say something is new, not what", func(t *testing.T) {
		type list struct {
			Data struct {
				Notifications []struct{ Content, Kind, Link string }
			}
		}
		read := func(who map[string]string) list {
			var l list
			commJSON(t, ts.do(t, "GET", "/api/notifications/unread/demo", nil, who), &l)
			return l
		}
		eventually(t, "the fan-out of the post and the event", func() bool {
			kinds := map[string]bool{}
			for _, n := range read(follower).Data.Notifications {
				kinds[n.Kind] = true
			}
			return kinds[store.KindNewPost] && kinds[store.KindNewEvent]
		})
		for _, n := range read(follower).Data.Notifications {
			if strings.Contains(n.Content, "Stems") || strings.Contains(n.Content, "Secret listening party") {
				t.Errorf("gated follower reads %q", n.Content)
			}
			switch n.Kind {
			case store.KindNewPost:
				if n.Content != "New post for members" || n.Link != "/apps/demo" {
					t.Errorf("gated new-post notice: %+v", n)
				}
			case store.KindNewEvent:
				if n.Content != "New event for members" || n.Link != "/apps/demo" {
					t.Errorf("gated new-event notice: %+v", n)
				}
			}
		}
		seen := map[string]bool{}
		for _, n := range read(subscriber).Data.Notifications {
			seen[n.Content] = true
		}
		if !seen["New event: Secret listening party"] {
			t.Errorf("the subscriber's notices: %v", seen)
		}
	})

	t.Run("web push obeys the same rule", func(t *testing.T) {
		type payload struct{ Body, URL string }
		var got map[string][]payload
		eventually(t, "two pushes each", func() bool {
			pr.mu.Lock()
			defer pr.mu.Unlock()
			return len(pr.payloads) >= 4
		})
		pr.mu.Lock()
		defer pr.mu.Unlock()
		if len(pr.errs) > 0 {
			t.Fatalf("receiver: %v", pr.errs)
		}
		got = map[string][]payload{}
		for _, raw := range pr.payloads {
			var p payload
			json.Unmarshal([]byte(raw), &p)
			who := "subscriber"
			if !strings.Contains(p.Body, ":") {
				who = "gated"
			}
			got[who] = append(got[who], p)
		}
		if len(got["gated"]) != 2 || len(got["subscriber"]) != 2 {
			t.Fatalf("pushes: %+v", got)
		}
		for _, p := range got["gated"] {
			if (p.Body != "New post for members" && p.Body != "New event for members") || p.URL != "http://main.test/apps/demo" {
				t.Errorf("gated push: %+v", p)
			}
		}
	})

	t.Run("search, feed and sitemap leave the content out", func(t *testing.T) {
		if r := ts.do(t, "GET", "/api/search/apps/demo?q=Stems", nil, follower); r.Status != 403 {
			t.Errorf("gated search: %d", r.Status)
		}
		if r := ts.do(t, "GET", "/apps/demo/search?q=Stems", nil, follower); r.Status != 302 {
			t.Errorf("gated search page: %d", r.Status)
		}
		if r := ts.do(t, "GET", "/apps/demo/feed.xml", nil, nil); r.Status != 404 || strings.Contains(r.Body, "Stems") {
			t.Errorf("gated feed: %d", r.Status)
		}
		if r := ts.do(t, "GET", "/apps/demo/sitemap.xml", nil, nil); r.Status != 200 || strings.Contains(r.Body, "/posts/") || strings.Contains(r.Body, "/events/") {
			t.Errorf("gated sitemap lists content: %d %s", r.Status, r.Body)
		}
		r := ts.do(t, "GET", "/api/search/apps/demo?q=Stems", nil, subscriber)
		if r.Status != 200 || !strings.Contains(r.Body, post.ID) {
			t.Errorf("subscriber search: %d", r.Status)
		}
	})
}
