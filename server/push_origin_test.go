package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
)

// Push subscriptions per origin (issue 42 item 5). A browser has one
// service worker per origin, so a fan who enabled push on the main site
// and on the app's domain holds two subscriptions; each records the origin
// it was made on, and a notice goes once per member: to the subscriptions
// of the app's current origin, or, for a member with none there, to the
// other origin's. Deliveries are counted at the push receiver, per
// endpoint.
func TestPushOncePerMemberAcrossOrigins(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		ts := newTestServer(t, db)
		ts.cfg.PushAllowLoopbackHTTP = true
		ts.push.Client = &http.Client{Timeout: 15 * time.Second} // a loopback receiver
		pr := newPushReceiver(t)
		auth := base64.RawURLEncoding.EncodeToString(pr.auth)
		demo := mustApp(t, ts, "demo")
		const mainOrigin, fansOrigin = "http://main.test", "http://" + fans

		type enabled struct{ ID, Endpoint, Origin string }
		subscribe := func(email, endpoint string, onDomain bool) enabled {
			t.Helper()
			h := withSession(sessionFor(t, ts, email), "Content-Type", "application/json")
			if onDomain {
				h["Host"], h["Origin"] = fans, fansOrigin
			}
			r := ts.do(t, "POST", "/api/notifications/enable-push/demo",
				body(map[string]string{"endpoint": pr.srv.URL + endpoint, "p256dh": pr.p256dh(), "auth": auth}), h)
			if r.Status != http.StatusCreated {
				t.Fatalf("enable push %s %s: %d %s", email, endpoint, r.Status, r.Body)
			}
			var out struct{ Data enabled }
			if err := json.Unmarshal([]byte(r.Body), &out); err != nil {
				t.Fatal(err)
			}
			return out.Data
		}
		origins := func() map[string]string {
			t.Helper()
			var subs []store.PushSubscription
			if err := db.NewSelect().Model(&subs).Where("app_id = ?", demo.ID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, s := range subs {
				out[s.Endpoint[len(pr.srv.URL):]] = s.Origin
			}
			return out
		}

		// Before the domain: the main site's subscriptions.
		if got := subscribe("follower@demo.test", "/follower-main", false); got.Origin != mainOrigin {
			t.Errorf("enable-push on the main site answers origin %q", got.Origin)
		}
		first := subscribe("admin@demo.test", "/admin", false)
		subscribe("moderator@demo.test", "/gone", false)

		// The domain is verified: the follower enables push there too (the
		// domain's own worker, its own endpoint); the subscriber enables it
		// only on the main site (a page open from before); the admin's
		// browser sends the same endpoint again from the domain: one row,
		// the same, now of the domain.
		ts.addVerifiedDomain(t, "demo", fans)
		if got := subscribe("follower@demo.test", "/follower-fans", true); got.Origin != fansOrigin {
			t.Errorf("enable-push on the domain answers origin %q", got.Origin)
		}
		subscribe("subscriber@demo.test", "/subscriber-main", false)
		subscribe("moderator@demo.test", "/moderator-fans", true)
		if again := subscribe("admin@demo.test", "/admin", true); again.ID != first.ID || again.Origin != fansOrigin {
			t.Errorf("the same endpoint again: %+v, first %+v", again, first)
		}
		want := map[string]string{"/follower-main": mainOrigin, "/follower-fans": fansOrigin, "/admin": fansOrigin,
			"/subscriber-main": mainOrigin, "/gone": mainOrigin, "/moderator-fans": fansOrigin}
		if got := origins(); len(got) != len(want) {
			t.Fatalf("subscriptions by endpoint: %v, want %v", got, want)
		} else {
			for ep, o := range want {
				if got[ep] != o {
					t.Errorf("%s recorded origin %q, want %q", ep, got[ep], o)
				}
			}
		}

		// One notice per member, delivered as the push job does.
		deliver := func(round string) map[string]int {
			t.Helper()
			var rows []store.Notification
			for _, email := range []string{"follower@demo.test", "subscriber@demo.test", "admin@demo.test", "moderator@demo.test"} {
				n := store.Notification{ID: store.NewID(), AppID: demo.ID, UserID: idOfUser(t, ts, email), Content: round,
					Kind: store.KindSystem, Link: "/apps/demo/community", CreatedAt: time.Now()}
				if _, err := db.NewInsert().Model(&n).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, n)
			}
			pr.mu.Lock()
			pr.paths, pr.payloads = nil, nil
			pr.mu.Unlock()
			if _, err := ts.push.Deliver(ctx, rows); err != nil {
				t.Fatal(err)
			}
			pr.mu.Lock()
			defer pr.mu.Unlock()
			if len(pr.errs) > 0 {
				t.Fatalf("receiver: %v", pr.errs)
			}
			got := map[string]int{}
			for i, p := range pr.paths {
				got[p]++
				var payload struct{ URL string }
				json.Unmarshal([]byte(pr.payloads[i]), &payload)
				if base := ts.appBaseURL(ctx, demo.ID, "demo"); payload.URL != base+"/community" {
					t.Errorf("%s: the link to %s is %s, want it on %s", round, p, payload.URL, base)
				}
			}
			return got
		}
		check := func(round string, got, want map[string]int) {
			t.Helper()
			if len(got) != len(want) {
				t.Errorf("%s: deliveries %v, want %v", round, got, want)
				return
			}
			for ep, n := range want {
				if got[ep] != n {
					t.Errorf("%s: deliveries %v, want %v", round, got, want)
					return
				}
			}
		}

		// On the domain: the follower once, on the domain's worker; the
		// subscriber, with none there, on the main site's; the admin's
		// one subscription; the moderator on the domain's (the main site's
		// is not tried).
		check("domain verified", deliver("domain verified"),
			map[string]int{"/follower-fans": 1, "/subscriber-main": 1, "/admin": 1, "/moderator-fans": 1})

		// The domain removed: the main site's subscriptions come first
		// again. The moderator's there is gone (410): deleted, and the
		// domain's one gets the notice instead, once.
		if err := ts.removeDomain(ctx, demo.ID, ""); err != nil {
			t.Fatal(err)
		}
		check("domain removed", deliver("domain removed"),
			map[string]int{"/follower-main": 1, "/subscriber-main": 1, "/admin": 1, "/moderator-fans": 1})
		if _, left := origins()["/gone"]; left {
			t.Errorf("the subscription the push service said is gone is still there")
		}
	})
}

// The app's service worker per origin (issue 42 item 5): on the main site
// /apps/{app}/sw.js, whose scope can be the app and nothing wider (its
// folder, and Service-Worker-Allowed says the same), so demo's worker never
// claims /apps/demo2/; on the app's verified domain /sw.js of scope "/".
// The main site's keeps being served once the domain is verified (no 301:
// a browser never follows one to update its worker, and the main site's
// still delivers the pushes of members subscribed there only). The
// manifests say the same scopes. The browser proves the registrations
// (scripts/browser/domains.test.mjs).
func TestServiceWorkerPerOrigin(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	worker := func(where, target string, h map[string]string, allowed string) {
		t.Helper()
		r := ts.do(t, "GET", target, nil, h)
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") ||
			r.Header.Get("Cache-Control") != "no-cache" || !strings.Contains(r.Body, `addEventListener("push"`) {
			t.Fatalf("%s: %s answers %d %s %q", where, target, r.Status, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
		}
		if got := r.Header.Get("Service-Worker-Allowed"); got != allowed {
			t.Errorf("%s: %s allows scope %q, want %q", where, target, got, allowed)
		}
	}
	scope := func(where, target string, h map[string]string, want string) {
		t.Helper()
		var m struct{ Scope, StartURL string }
		r := ts.do(t, "GET", target, nil, h)
		if err := json.Unmarshal([]byte(r.Body), &m); err != nil || r.Status != http.StatusOK {
			t.Fatalf("%s: %s: %d %v", where, target, r.Status, err)
		}
		if m.Scope != want {
			t.Errorf("%s: the manifest's scope is %q, want %q", where, m.Scope, want)
		}
	}
	worker("main site", "/apps/demo/sw.js", nil, "/apps/demo/")
	scope("main site", "/apps/demo/manifest.webmanifest", nil, "/apps/demo/")
	if r := ts.do(t, "GET", "/apps/no-such-app/sw.js", nil, nil); r.Status != http.StatusNotFound {
		t.Errorf("an unknown app's worker: %d", r.Status)
	}

	ts.addVerifiedDomain(t, "demo", fans)
	worker("the domain", "/sw.js", onHost(fans), "/")
	scope("the domain", "/manifest.webmanifest", onHost(fans), "/")
	worker("main site, domain verified", "/apps/demo/sw.js", nil, "/apps/demo/")
	if r := ts.do(t, "GET", "/apps/demo/community", nil, nil); r.Status != http.StatusMovedPermanently {
		t.Errorf("the main site's page of an app with a domain: %d, want 301", r.Status)
	}
	// On the domain the prefixed path is the clean one's.
	if r := ts.do(t, "GET", "/apps/demo/sw.js", nil, onHost(fans)); r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != "/sw.js" {
		t.Errorf("/apps/demo/sw.js on the domain: %d %s", r.Status, r.Header.Get("Location"))
	}
}
