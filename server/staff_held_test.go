package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/store"
)

// A silenced ADMIN is held in the studio as in the community (issue 41
// item 8): they cannot rewrite the public profile (bio, links) nor change
// or end members' roles, by form or by API, and nothing changes.
func TestSilencedStaffStayHeld(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	adminID := fx.ts.userID(t, "admin@demo.test")
	if r := fx.act(fx.creator, "SILENCE", "MEMBER", adminID, "rewrote the bio", 7); r.Status != 200 {
		t.Fatalf("silence the admin: %d %s", r.Status, r.Body)
	}
	before, err := fx.ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range fx.admin {
		if k != "Content-Type" {
			form[k] = v
		}
	}
	writes := []struct {
		name, method, target, body string
		h                          map[string]string
	}{
		{"studio profile form", "POST", "/apps/demo/studio/profile",
			url.Values{"displayName": {"Hijacked"}, "bio": {"silenced admin's bio"}, "lang": {"en"}, "version": {"1.0.0"}}.Encode(), form},
		{"studio links form", "POST", "/apps/demo/studio/links", "linksEnabled=on&showLinkInBio=on", form},
		{"member role form", "POST", "/apps/demo/studio/members/" + fx.followerID, "role=MODERATOR", form},
		{"member role API", "PUT", "/api/studio/apps/" + fx.appID + "/members/" + fx.followerID, `{"role":"MODERATOR"}`, fx.admin},
		{"moderation action", "POST", "/api/moderation/apps/" + fx.appID + "/actions",
			`{"action":"LIFT","targetType":"MEMBER","targetId":"` + adminID + `"}`, fx.admin},
		{"remove member API", "DELETE", "/api/studio/apps/" + fx.appID + "/members/" + fx.followerID, "", fx.admin},
	}
	for _, w := range writes {
		r := fx.ts.do(t, w.method, w.target, strings.NewReader(w.body), w.h)
		if r.Status != http.StatusForbidden || !strings.Contains(r.Body, "silenced") {
			t.Errorf("%s while silenced: %d (want 403 saying silenced)", w.name, r.Status)
		}
	}
	after, err := fx.ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if after.Bio != before.Bio || strings.Contains(after.Bio, "silenced admin") {
		t.Errorf("bio rewritten: %q", after.Bio)
	}
	if m, _ := fx.ts.store.MembershipOf(ctx, fx.appID, fx.followerID); m == nil || m.Role != store.RoleFollower {
		t.Errorf("the follower's membership changed: %+v", m)
	}
	// The creator, not held, still changes roles.
	if r := fx.call("PUT", "/api/studio/apps/"+fx.appID+"/members/"+fx.followerID, `{"role":"MODERATOR"}`, fx.creator); r.Status != 200 {
		t.Errorf("creator's role change: %d %s", r.Status, r.Body)
	}
}

// Reports of members who are banned or silenced in the app do not count
// toward hiding a post (issue 41 item 8): three held members reporting
// leave it shown; it is hidden only when three members in good standing
// have reported it.
func TestHeldMembersReportsDoNotHide(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	postID := fx.post(fx.subscriber, "a perfectly fine post about wombats")
	hidden := func() string {
		var m store.Message
		if err := fx.ts.store.DB().NewSelect().Model(&m).Where("id = ?", postID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		return m.Hidden
	}
	for i, action := range []string{"SILENCE", "SILENCE", "BAN"} {
		h, id := fx.member(fmt.Sprintf("held%d@mod.test", i))
		if r := fx.report(h, "POST", postID, "SPAM"); r.Status != http.StatusCreated {
			t.Fatalf("held member's report: %d %s", r.Status, r.Body)
		}
		if r := fx.act(fx.moderator, action, "MEMBER", id, "brigading", 0); r.Status != 200 {
			t.Fatalf("%s: %d %s", action, r.Status, r.Body)
		}
	}
	// A held member reporting now (a banned one may still report).
	late, lateID := fx.member("held-late@mod.test")
	if r := fx.act(fx.moderator, "SILENCE", "MEMBER", lateID, "brigading", 0); r.Status != 200 {
		t.Fatalf("silence: %d %s", r.Status, r.Body)
	}
	if r := fx.report(late, "POST", postID, "SPAM"); r.Status != http.StatusCreated {
		t.Fatalf("silenced member's report: %d %s", r.Status, r.Body)
	}
	for i := 0; i < 2; i++ {
		h, _ := fx.member(fmt.Sprintf("good%d@mod.test", i))
		if r := fx.report(h, "POST", postID, "SPAM"); r.Status != http.StatusCreated {
			t.Fatalf("report: %d %s", r.Status, r.Body)
		}
		if got := hidden(); got != "" {
			t.Fatalf("hidden (%q) after %d reports in good standing and 4 held", got, i+1)
		}
	}
	h, _ := fx.member("good2@mod.test")
	if r := fx.report(h, "POST", postID, "SPAM"); r.Status != http.StatusCreated {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	if got := hidden(); got != store.HiddenByReports {
		t.Errorf("three reports in good standing: hidden = %q", got)
	}
}

// A ban matches the address as the provider delivers it (issue 41 item 8):
// Gmail's dots, '+tags' and googlemail.com reach the banned mailbox, case
// never matters, and other providers' distinct spellings stay distinct.
func TestBanMatchesTheMailbox(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	_, gmailID := fx.member("J.Doe+first@GMail.com")
	_, otherID := fx.member("Jane.Roe@Example.com")
	for _, id := range []string{gmailID, otherID} {
		if r := fx.act(fx.moderator, "BAN", "MEMBER", id, "spam", 0); r.Status != 200 {
			t.Fatalf("ban: %d %s", r.Status, r.Body)
		}
	}
	for email, banned := range map[string]bool{
		"jdoe@gmail.com": true, "j.d.o.e@gmail.com": true, "JDOE+again@googlemail.com": true, " j.doe@GMAIL.COM ": true,
		"jdoe2@gmail.com": false, "jdoe@gmail.co": false,
		"JANE.ROE@example.com": true, "janeroe@example.com": false, "jane.roe+x@example.com": false,
	} {
		b, err := fx.ts.store.BanOf(ctx, fx.appID, store.NewID(), email, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if (b != nil) != banned {
			t.Errorf("%q: banned %v, want %v", email, b != nil, banned)
		}
	}
	// And a new account at such an address cannot rejoin.
	if _, err := fx.ts.store.CreateUser(ctx, "jdoe+new@googlemail.com", "jdoe_new", "x"); err != nil {
		t.Fatal(err)
	}
	again := withSession(sessionFor(t, fx.ts, "jdoe+new@googlemail.com"), "Content-Type", "application/json")
	if r := fx.call("POST", "/api/notifications/follow/"+fx.appID, "{}", again); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "banned") {
		t.Errorf("rejoin from a gmail variant: %d %s", r.Status, r.Body)
	}
}
