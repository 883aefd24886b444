package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// TestContractLeftovers (issue 27 item 8): SPEC's profile-picture upload
// with appId sets the picture; suggestedAmounts is always an array; a
// deleted event's notifications lead to the events list; a gated member is
// sent to the landing page from every deeper path SPEC names, /profile
// included, and finds Sign Out and Unfollow there.
func TestContractLeftovers(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	ts := f.ts
	ctx := context.Background()

	t.Run("profile picture uploaded with appId becomes the picture", func(t *testing.T) {
		who := commUser(t, ts, "jonah@demo.test")
		img := pngBytes(t)
		r, pm := mediaCreate(t, ts, who, mediaReq(f.appID, "image/png", len(img), "profile"))
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		if r := localPut(t, ts, pm.PresignedUploadURL, "image/png", img); r.Status != 200 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		if r := ts.do(t, "POST", "/api/auth/profile-picture", body(map[string]any{"mediaId": pm.Media.ID}), who); r.Status != 200 {
			t.Fatalf("set: %d %s", r.Status, r.Body)
		}
		u, err := ts.store.UserByEmail(ctx, "jonah@demo.test")
		if err != nil || u.ProfileMediaID == nil || *u.ProfileMediaID != pm.Media.ID {
			t.Fatalf("picture: %+v %v", u.ProfileMediaID, err)
		}
	})

	t.Run("suggestedAmounts is an array even when unset", func(t *testing.T) {
		if _, err := ts.store.DB().NewUpdate().Table("apps").Set("settings = ?",
			`{"features":{"donations":{"enabled":true,"settings":{"suggestedAmounts":null}}}}`).Where("id = ?", f.appID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		ts.store.InvalidateLanding(ctx, f.appID)
		r := ts.do(t, "GET", "/api/app/demo/landing", nil, nil)
		var out struct {
			Data struct {
				Settings struct {
					Features struct {
						Donations struct {
							Settings struct {
								SuggestedAmounts json.RawMessage `json:"suggestedAmounts"`
							} `json:"settings"`
						} `json:"donations"`
					} `json:"features"`
				} `json:"settings"`
			} `json:"data"`
		}
		commJSON(t, r, &out)
		if got := string(out.Data.Settings.Features.Donations.Settings.SuggestedAmounts); got != "[]" {
			t.Fatalf("suggestedAmounts = %s, want []", got)
		}
	})
}

// TestDeletedEventNotificationsLeadToTheList: the notices of a deleted
// event (written before, and fanned out after, the delete) link the events
// list, which exists, not the event's page, which is gone.
func TestDeletedEventNotificationsLeadToTheList(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	creator := withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/json")
	follower := commUser(t, ts, "follower@demo.test")
	newEvent := func(name string) string {
		start := time.Now().Add(48 * time.Hour).UTC()
		r := ts.do(t, "POST", "/api/events/apps/demo/events", body(map[string]any{"name": name, "startDate": start.Format(time.RFC3339),
			"endDate": start.Add(time.Hour).Format(time.RFC3339)}), creator)
		var out struct{ Data struct{ ID string } }
		commJSON(t, r, &out)
		return out.Data.ID
	}
	// The first event's fan-out runs before the delete, the second's after.
	first, second := newEvent("Cancelled soon"), newEvent("Cancelled sooner")
	var pending []store.JobOutbox
	if err := db.NewSelect().Model(&pending).Where("kind = ?", store.JobNotifyFanOut).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	runFanOut := func(eventID string) {
		for _, j := range pending {
			var n store.Notice
			if err := json.Unmarshal([]byte(j.Args), &n); err != nil {
				t.Fatal(err)
			}
			if n.Source == "event:"+eventID {
				if _, err := ts.store.FanOut(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	runFanOut(first)
	for _, id := range []string{first, second} {
		if r := ts.do(t, "DELETE", "/api/events/"+id, nil, creator); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
	}
	runFanOut(second)
	var l struct {
		Data struct {
			Notifications []struct{ Content, Link string }
		}
	}
	commJSON(t, ts.do(t, "GET", "/api/notifications/unread/demo?limit=50", nil, follower), &l)
	found := 0
	for _, n := range l.Data.Notifications {
		if strings.Contains(n.Content, "Cancelled soon") {
			found++
			if n.Link != "/apps/demo/events" {
				t.Errorf("%q links %s", n.Content, n.Link)
			}
			if r := ts.do(t, "GET", n.Link, nil, follower); r.Status != 200 {
				t.Errorf("%s answers %d", n.Link, r.Status)
			}
		}
	}
	if found < 2 {
		t.Fatalf("notices of the deleted events: %+v", l.Data.Notifications)
	}
}

// TestGateCoversEveryDeeperPath: a gated member goes home from every
// deeper path SPEC names, the profile included; cart and checkout stay
// open, as does the wallet page (Add funds is how a fan with $0 joins,
// issue 40 item 3), and the landing page offers the way out.
func TestGateCoversEveryDeeperPath(t *testing.T) {
	t.Parallel()
	f := newMemberFixture(t)
	f.set(t, "demo", "features.subscriptionGating.settings.required", "true")
	tok := sessionFor(t, f.ts, "follower@demo.test")
	for _, p := range []string{"/community", "/posts/" + f.postID, "/create-post", "/create-story", "/store", "/orders", "/events",
		"/create-event", "/chat", "/profile", "/notifications", "/search?q=x"} {
		r := f.ts.do(t, "GET", "/apps/demo"+p, nil, withSession(tok))
		if r.Status != http.StatusFound || r.Header.Get("Location") != "/apps/demo" {
			t.Errorf("gated %s: %d %q", p, r.Status, r.Header.Get("Location"))
		}
	}
	for _, p := range []string{"/cart", "/checkout/plan/" + f.planItemID, "/transactions", "/membership"} {
		if r := f.ts.do(t, "GET", "/apps/demo"+p, nil, withSession(tok)); r.Status != 200 {
			t.Errorf("gated %s: %d", p, r.Status)
		}
	}
	home := f.ts.do(t, "GET", "/apps/demo", nil, withSession(tok))
	for _, want := range []string{`action="/apps/demo/signout"`, `action="/apps/demo/unfollow"`} {
		if !strings.Contains(home.Body, want) {
			t.Errorf("gated landing lacks %s", want)
		}
	}
}

// TestFeedPagesByNumberStayStable: a client that pages the feed by number
// only (SPEC.md: page and limit) neither sees a post twice nor misses one
// when posts are added or deleted between its pages.
func TestFeedPagesByNumberStayStable(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ids := commLoad(t, ts)
	creator := withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/json")
	for _, who := range []struct {
		name    string
		headers map[string]string
	}{{"member", commUser(t, ts, "follower@demo.test")}, {"visitor", nil}} {
		t.Run(who.name, func(t *testing.T) {
			page := func(n int) []string {
				var out struct {
					Data struct {
						Posts      []struct{ ID string }
						Pagination struct{ HasNext bool }
					}
				}
				commJSON(t, ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts?type=POST&limit=4&page="+strconv.Itoa(n), nil, who.headers), &out)
				var got []string
				for _, p := range out.Data.Posts {
					got = append(got, p.ID)
				}
				return got
			}
			var all struct {
				Data struct{ Posts []struct{ ID string } }
			}
			commJSON(t, ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts?type=POST&limit=50&page=1", nil, nil), &all)
			var want []string
			for _, p := range all.Data.Posts {
				want = append(want, p.ID)
			}
			if len(want) < 12 {
				t.Fatalf("the demo feed has %d posts, the test needs 12", len(want))
			}
			seen := page(1)
			// A new post lands on top, then one of page 1 is deleted.
			newPostAs(t, ts, ids.demoCommunity, "creator@demo.test", "inserted while paging "+who.name)
			seen = append(seen, page(2)...)
			if r := ts.do(t, "DELETE", "/api/messages/"+seen[1], nil, creator); r.Status != 200 {
				t.Fatalf("delete: %d %s", r.Status, r.Body)
			}
			seen = append(seen, page(3)...)
			if strings.Join(seen, ",") != strings.Join(want[:12], ",") {
				t.Fatalf("pages 1-3 after an insert and a delete:\n got %v\nwant %v", seen, want[:12])
			}
		})
	}
}
