package server

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/store"
)

// Issue 40 item 2, the leak test: a members-only post (and a post for the
// second tier and above) with a unique phrase never reaches a visitor, a
// follower or a member of a lower tier by any path: pages (the shared page
// cache included), the JSON API, search, the Atom feed, the sitemap, the
// notifications (the web push sends the same text) and the newsletter's
// recipients; a member who may read it does. SQLite and PostgreSQL, each
// with two instances sharing one Redis: a page one instance rendered for a
// reader is shared through Redis, and neither instance hands it to others.
func TestLockedPostsNeverLeak(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		deployment := oneRedis(t)
		f := newTierFixtureStore(t, db, deployment)
		other := newTestServerStore(t, db, nil, deployment)
		watchEachOther(t, f.ts, other)
		instances := []*testServer{f.ts, other}
		ctx := context.Background()
		creator := jsonHeaders(withSession(sessionFor(t, f.ts, "creator@demo.test")))
		var communityID string
		if err := f.ts.store.DB().NewSelect().Table("communities").Column("id").Where("app_id = ?", f.app.ID).Limit(1).Scan(ctx, &communityID); err != nil {
			t.Fatal(err)
		}
		post := func(phrase, access string) store.MessageView {
			t.Helper()
			var got struct{ Data store.MessageView }
			r := f.ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"`+phrase+` is the secret","type":"POST","communityId":"`+communityID+`","teaser":"A members teaser","access":`+access+`}`), creator)
			if r.Status != 201 {
				t.Fatalf("post: %d %s", r.Status, r.Body)
			}
			commJSON(t, r, &got)
			return got.Data
		}
		members := post("Zanzibar-quokka-members", `{"audience":"MEMBERS","minTierId":null}`)
		tier2 := post("Ouagadougou-tier-two", `{"audience":"MEMBERS","minTierId":"`+f.tiers[1].ID+`"}`)
		if members.Access.Audience != store.AccessMembers || members.Locked || tier2.Access.MinTierID == nil || *tier2.Access.MinTierID != f.tiers[1].ID {
			t.Fatalf("the author's answer: %+v / %+v", members.Access, tier2.Access)
		}
		if r := f.ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"x","type":"POST","communityId":"`+communityID+`","access":{"audience":"FRIENDS"}}`), creator); r.Status != 400 {
			t.Fatalf("unknown audience: %d", r.Status)
		}
		if r := f.ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"x","type":"POST","communityId":"`+communityID+`","access":{"audience":"PUBLIC","minTierId":"`+f.tiers[1].ID+`"}}`), creator); r.Status != 400 {
			t.Fatalf("a tier without MEMBERS: %d", r.Status)
		}

		// A member of the second tier (reads both), and subscriber@demo.test
		// (first tier: reads the members' post, not the tier-2 one).
		_, tier2Session := f.fan(t, "tiertwo", 500_00)
		if r := f.ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", strings.NewReader(`{"itemId":"`+f.tiers[1].ItemID+`","paymentMethod":"musepay"}`),
			jsonHeaders(withSession(tier2Session))); r.Status != 200 {
			t.Fatalf("join tier 2: %d %s", r.Status, r.Body)
		}
		demo := f.app
		paths := []string{
			"/apps/demo", "/api/app/demo/landing", "/apps/demo/community", "/api/community/" + communityID + "/posts?page=1&limit=20&type=POST",
			"/apps/demo/posts/" + members.ID, "/api/messages/" + members.ID + "?include=sender,attachments,reactions,tags,replies",
			"/api/messages/" + members.ID + "/replies?page=1&limit=50",
			"/apps/demo/posts/" + tier2.ID, "/api/messages/" + tier2.ID + "?include=replies",
			// Searched by another word of the posts (the query itself is
			// echoed on the page).
			"/apps/demo/search?q=secret", "/api/search/apps/demo?q=secret",
			"/apps/demo/feed.xml", "/apps/demo/sitemap.xml", "/api/notifications/unread/" + demo.ID + "?page=1&limit=20",
		}
		// The tier-2 member goes first, filling the page cache with what
		// they may read: no one after them gets their render.
		viewers := []struct {
			name      string
			h         map[string]string
			readsMem  bool
			readsTier bool
		}{
			{"tier-2 member", withSession(tier2Session), true, true},
			{"visitor", nil, false, false},
			{"follower", withSession(sessionFor(t, f.ts, "follower@demo.test")), false, false},
			{"first-tier member", withSession(sessionFor(t, f.ts, "subscriber@demo.test")), true, false},
			{"visitor again", nil, false, false},
		}
		for _, v := range viewers {
			sawMem, sawTier := false, false
			for i, ts := range instances {
				for _, p := range paths {
					r := ts.do(t, "GET", p, nil, v.h)
					if r.Status >= 500 {
						t.Errorf("%s on instance %d: %s answers %d", v.name, i, p, r.Status)
					}
					sawMem = sawMem || strings.Contains(r.Body, "Zanzibar-quokka-members")
					sawTier = sawTier || strings.Contains(r.Body, "Ouagadougou-tier-two")
					if !v.readsMem && strings.Contains(r.Body, "Zanzibar-quokka-members") {
						t.Errorf("%s on instance %d: %s shows the members' post", v.name, i, p)
					}
					if !v.readsTier && strings.Contains(r.Body, "Ouagadougou-tier-two") {
						t.Errorf("%s on instance %d: %s shows the tier-2 post", v.name, i, p)
					}
				}
			}
			if v.readsMem && !sawMem || v.readsTier && !sawTier {
				t.Errorf("%s cannot read what they may (members %v, tier 2 %v)", v.name, sawMem, sawTier)
			}
		}
		// A locked post answers locked, with its teaser and tier, and no media or replies.
		var got struct{ Data store.MessageView }
		commJSON(t, f.ts.do(t, "GET", "/api/messages/"+tier2.ID, nil, withSession(sessionFor(t, f.ts, "subscriber@demo.test"))), &got)
		if !got.Data.Locked || got.Data.Content != "A members teaser" || got.Data.AccessTier == nil || got.Data.AccessTier.Name != "Backstage Pass" {
			t.Fatalf("locked answer: %+v", got.Data)
		}
		page := f.ts.do(t, "GET", "/apps/demo/posts/"+tier2.ID, nil, nil)
		if !strings.Contains(page.Body, "Join Backstage Pass to unlock") || !strings.Contains(page.Body, `href="/apps/demo/membership"`) {
			t.Fatalf("teaser page: %.800s", page.Body)
		}
		// No comment form where replying is refused.
		if strings.Contains(page.Body, `/posts/`+tier2.ID+`/comments"`) || strings.Contains(page.Body, "Comments (") {
			t.Fatal("the teaser page offers to comment on a locked post")
		}
		// Replying to a locked post is refused.
		if r := f.ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"me too","type":"REPLY","parentMessageId":"`+members.ID+`"}`),
			jsonHeaders(withSession(sessionFor(t, f.ts, "follower@demo.test")))); r.Status != 403 {
			t.Fatalf("reply to a locked post: %d", r.Status)
		}

		// The newsletter picks recipients by the post's access.
		for _, tc := range []struct {
			post   store.MessageView
			want   []string
			refuse []string
		}{
			{members, []string{"subscriber@demo.test", "tiertwo@tiers.test"}, []string{"follower@demo.test"}},
			{tier2, []string{"tiertwo@tiers.test"}, []string{"follower@demo.test", "subscriber@demo.test"}},
		} {
			m, err := f.ts.store.MessageByID(ctx, tc.post.ID)
			if err != nil {
				t.Fatal(err)
			}
			app, _ := f.ts.store.AppByIDOrName(ctx, "demo")
			if _, err := f.ts.store.SelectNewsletterRecipients(ctx, m, jobs.NewsletterAudienceOf(app, m)); err != nil {
				t.Fatal(err)
			}
			var emails []string
			if err := f.ts.store.DB().NewSelect().Table("newsletter_recipients").Column("email").Where("message_id = ?", m.ID).Scan(ctx, &emails); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(emails, ",")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("newsletter of %s misses %s: %s", m.ID, w, got)
				}
			}
			for _, w := range tc.refuse {
				if strings.Contains(got, w) {
					t.Errorf("newsletter of %s mails %s: %s", m.ID, w, got)
				}
			}
		}
	})
}

// The composer's access selector works without JavaScript: the create page
// offers everyone, followers, members and each tier, and the form post
// stores the choice and the teaser.
func TestComposerAccessWithoutJavaScript(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ctx := context.Background()
	tok := sessionFor(t, f.ts, "creator@demo.test")
	page := f.ts.do(t, "GET", "/apps/demo/create-post", nil, withSession(tok))
	for _, want := range []string{`name="access"`, `value="FOLLOWERS"`, `value="TIER:` + f.tiers[1].ID + `"`, "Backstage Pass and above", `name="teaser"`} {
		if !strings.Contains(page.Body, want) {
			t.Fatalf("create page lacks %s", want)
		}
	}
	body, ct := multipartBody(t, [][2]string{{"content", "For the backstage crowd"}, {"access", "TIER:" + f.tiers[1].ID}, {"teaser", "Backstage news"}})
	seeOther(t, f.ts.do(t, "POST", "/apps/demo/create-post", body, withSession(tok, "Content-Type", ct)), "/apps/demo/community")
	var m store.Message
	if err := f.ts.store.DB().NewSelect().Model(&m).Where("content = ?", "For the backstage crowd").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if m.AccessAudience != store.AccessMembers || m.AccessMinTierID == nil || *m.AccessMinTierID != f.tiers[1].ID || m.Teaser != "Backstage news" {
		t.Fatalf("stored access: %+v", m)
	}
}

// A locked post's pictures open for its readers only (issue 40 item 2):
// the answer gives every viewer the file's stable URL, never a signed one
// that would open for anyone it is passed to, and that URL, the content
// redirect and the resized copies answer 404 to a visitor, a follower and
// a member of a lower tier, even when a reader copies them.
func TestLockedPostMediaIsForReaders(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ts := f.ts
	ids := commLoad(t, ts)
	creator := commUser(t, ts, "creator@demo.test")
	img := pngBytes(t)
	upload := func() store.MediaView {
		t.Helper()
		r, cm := mediaCreate(t, ts, creator, mediaReq(f.app.ID, "image/png", len(img), "post"))
		if r.Status != 201 {
			t.Fatalf("create media: %d %s", r.Status, r.Body)
		}
		if up := localPut(t, ts, cm.Data.PresignedUploadURL, "image/png", img); up.Status != 200 {
			t.Fatalf("upload: %d %s", up.Status, up.Body)
		}
		return cm.Data.Media
	}
	post := func(access string, mediaID string) store.MessageView {
		t.Helper()
		var got struct{ Data store.MessageView }
		r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Pictures for some", "communityId": ids.demoCommunity,
			"attachmentIds": []string{mediaID}, "access": map[string]any{"audience": "MEMBERS", "minTierId": access}}), creator)
		if r.Status != 201 {
			t.Fatalf("post: %d %s", r.Status, r.Body)
		}
		commJSON(t, r, &got)
		return got.Data
	}
	forMembers := post("", upload().ID)
	forTier2 := post(f.tiers[1].ID, upload().ID)
	for _, p := range []store.MessageView{forMembers, forTier2} {
		if len(p.Attachments) != 1 {
			t.Fatalf("the author's answer: %+v", p)
		}
		u := p.Attachments[0].Media.SignedURL
		if u != "http://main.test/media/i/"+p.Attachments[0].Media.ID+"/original" {
			t.Fatalf("a locked post's file must have its checked URL, not a signed one: %s", u)
		}
	}
	_, tier2Session := f.fan(t, "mediatwo", 500_00)
	if r := ts.do(t, "POST", "/api/subscriptions/apps/demo/subscribe", body(map[string]any{"itemId": f.tiers[1].ItemID, "paymentMethod": "musepay"}),
		jsonHeaders(withSession(tier2Session))); r.Status != 200 {
		t.Fatalf("join tier 2: %d %s", r.Status, r.Body)
	}
	viewers := []struct {
		name             string
		h                map[string]string
		readsMem, reads2 bool
	}{
		{"creator", withSession(sessionFor(t, ts, "creator@demo.test")), true, true},
		{"tier-2 member", withSession(tier2Session), true, true},
		{"first-tier member", withSession(sessionFor(t, ts, "subscriber@demo.test")), true, false},
		{"follower", withSession(sessionFor(t, ts, "follower@demo.test")), false, false},
		{"visitor", nil, false, false},
	}
	for _, v := range viewers {
		for _, tc := range []struct {
			p     store.MessageView
			reads bool
		}{{forMembers, v.readsMem}, {forTier2, v.reads2}} {
			id := tc.p.Attachments[0].Media.ID
			got := ts.do(t, "GET", "/media/i/"+id+"/original", nil, v.h)
			if tc.reads {
				if got.Status != 200 || got.Body != string(img) || !strings.HasPrefix(got.Header.Get("Cache-Control"), "private") {
					t.Errorf("%s cannot load a picture they may see: %d %v", v.name, got.Status, got.Header)
				}
			} else if got.Status != 404 || got.Body == string(img) {
				t.Errorf("%s loads a locked picture: %d", v.name, got.Status)
			}
			content := ts.do(t, "GET", "/api/media/"+id+"/content", nil, v.h)
			if tc.reads {
				if content.Status != 302 || content.Header.Get("Location") != "/media/i/"+id+"/original" {
					t.Errorf("%s: content redirect %d %q (never a signed URL)", v.name, content.Status, content.Header.Get("Location"))
				}
			} else if content.Status != 404 {
				t.Errorf("%s: content of a locked picture answers %d", v.name, content.Status)
			}
		}
	}
	// What a viewer without access gets of the post names no file.
	var locked struct{ Data store.MessageView }
	commJSON(t, ts.do(t, "GET", "/api/messages/"+forTier2.ID+"?include=attachments", nil, withSession(sessionFor(t, ts, "subscriber@demo.test"))), &locked)
	if !locked.Data.Locked || len(locked.Data.Attachments) != 0 || locked.Data.LockedMedia != 1 {
		t.Fatalf("locked answer: %+v", locked.Data)
	}
}

// An author below the staff posts only for readers they are among: the
// composer offers a follower everyone and followers, a first-tier member
// also members and their own tier, and the API refuses the rest (403 on
// the access field); a story takes the setting like a post, with and
// without JavaScript.
func TestAuthorsPostOnlyForReadersTheyAreAmong(t *testing.T) {
	t.Parallel()
	f := newTierFixture(t, demoDB(t))
	ts := f.ts
	ctx := context.Background()
	ids := commLoad(t, ts)
	if err := ts.store.SetAppField(ctx, "demo", "features.community.settings.content_settings.create_permission", "FOLLOWER"); err != nil {
		t.Fatal(err)
	}
	follower, member := sessionFor(t, ts, "follower@demo.test"), sessionFor(t, ts, "subscriber@demo.test")
	for _, tc := range []struct {
		who        string
		tok        string
		offered    []string
		notOffered []string
	}{
		{"follower", follower, []string{`value="PUBLIC"`, `value="FOLLOWERS"`}, []string{`value="MEMBERS"`, `value="TIER:`}},
		{"first-tier member", member, []string{`value="MEMBERS"`, `value="TIER:` + f.tiers[0].ID + `"`}, []string{`value="TIER:` + f.tiers[1].ID + `"`, `value="TIER:` + f.tiers[2].ID + `"`}},
	} {
		for _, page := range []string{"/apps/demo/create-post", "/apps/demo/create-story"} {
			body := ts.do(t, "GET", page, nil, withSession(tc.tok)).Body
			for _, w := range tc.offered {
				if !strings.Contains(body, w) {
					t.Errorf("%s: %s does not offer %s", tc.who, page, w)
				}
			}
			for _, w := range tc.notOffered {
				if strings.Contains(body, w) {
					t.Errorf("%s: %s offers %s", tc.who, page, w)
				}
			}
		}
	}
	postAs := func(tok, access string) response {
		return ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"Mine","type":"POST","communityId":"`+ids.demoCommunity+`","access":`+access+`}`),
			jsonHeaders(withSession(tok)))
	}
	for _, tc := range []struct {
		who, tok, access string
		status           int
	}{
		{"follower", follower, `{"audience":"FOLLOWERS"}`, 201},
		{"follower", follower, `{"audience":"MEMBERS"}`, 403},
		{"follower", follower, `{"audience":"MEMBERS","minTierId":"` + f.tiers[0].ID + `"}`, 403},
		{"member", member, `{"audience":"MEMBERS"}`, 201},
		{"member", member, `{"audience":"MEMBERS","minTierId":"` + f.tiers[0].ID + `"}`, 201},
		{"member", member, `{"audience":"MEMBERS","minTierId":"` + f.tiers[1].ID + `"}`, 403},
	} {
		r := postAs(tc.tok, tc.access)
		if r.Status != tc.status {
			t.Errorf("%s posting for %s: %d %s", tc.who, tc.access, r.Status, r.Body)
		}
		if tc.status == 403 && !strings.Contains(r.Body, `"access"`) {
			t.Errorf("the refusal names no field: %s", r.Body)
		}
	}
	// A story for members, from the form without JavaScript.
	creator := sessionFor(t, ts, "creator@demo.test")
	body, ct := multipartBody(t, [][2]string{{"content", "Backstage story"}, {"access", "MEMBERS"}, {"teaser", "Members see more"}},
		formFile{"media", "story.png", "image/png", pngBytes(t)})
	seeOther(t, ts.do(t, "POST", "/apps/demo/create-story", body, withSession(creator, "Content-Type", ct)), "/apps/demo/community")
	var m store.Message
	if err := ts.store.DB().NewSelect().Model(&m).Where("content = ? AND type = ?", "Backstage story", store.MessageStory).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if m.AccessAudience != store.AccessMembers || m.Teaser != "Members see more" {
		t.Fatalf("the story's access: %+v", m)
	}
}
