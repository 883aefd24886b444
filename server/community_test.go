package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
)

// commUser signs a demo user in and returns the cookie header for ts.do.
func commUser(t *testing.T, ts *testServer, email string) map[string]string {
	t.Helper()
	var u store.User
	if err := ts.store.DB().NewSelect().Model(&u).Where("email = ?", email).Scan(context.Background()); err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	token, err := ts.store.CreateSession(context.Background(), u.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"Cookie": sessionCookie + "=" + token, "Content-Type": "application/json"}
}

func commJSON(t *testing.T, r response, into any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Body), into); err != nil {
		t.Fatalf("decode %d %q: %v", r.Status, r.Body, err)
	}
}

func commExpect(t *testing.T, name string, r response, status int, contains string) {
	t.Helper()
	if r.Status != status || !strings.Contains(r.Body, contains) {
		t.Errorf("%s: got %d %s, want %d containing %q", name, r.Status, r.Body, status, contains)
	}
}

type commIDs struct {
	demoCommunity, acmeCommunity string
	demoPost, acmePost           string
}

func commLoad(t *testing.T, ts *testServer) commIDs {
	t.Helper()
	ctx := context.Background()
	var ids commIDs
	for _, x := range []struct {
		name      string
		community *string
		post      *string
	}{{"demo", &ids.demoCommunity, &ids.demoPost}, {"acme", &ids.acmeCommunity, &ids.acmePost}} {
		app, err := ts.store.AppByIDOrName(ctx, x.name)
		if err != nil {
			t.Fatal(err)
		}
		com, err := ts.store.CommunityOfApp(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		*x.community = com.ID
		p, err := ts.store.CommunityPosts(ctx, com.ID, store.MessagePost, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		*x.post = p.Messages[0].ID
	}
	return ids
}

func body(v any) *strings.Reader {
	b, _ := json.Marshal(v)
	return strings.NewReader(string(b))
}

func TestCommunityReadCalls(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)
		ids := commLoad(t, ts)

		var page struct {
			Success bool
			Data    struct {
				Posts      []store.MessageView
				Pagination store.Pagination
			}
		}
		r := ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts?page=1&limit=20&type=POST", nil, nil)
		commJSON(t, r, &page)
		p := page.Data.Pagination
		if r.Status != 200 || !page.Success || len(page.Data.Posts) != 20 || p.Total != 30 || p.TotalPages != 2 || !p.HasNext || p.HasPrev {
			t.Fatalf("page 1: %d %+v", r.Status, p)
		}
		for _, m := range page.Data.Posts {
			if m.Type != store.MessagePost || m.CommunityID != ids.demoCommunity {
				t.Fatalf("feed holds %s of %s", m.Type, m.CommunityID)
			}
			for _, a := range m.Attachments {
				if a.Media.SignedURL == "" {
					t.Fatal("attachment without signedUrl")
				}
			}
		}
		r = ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts?page=2&limit=20", nil, nil)
		commJSON(t, r, &page)
		if len(page.Data.Posts) != 10 || page.Data.Pagination.HasNext || !page.Data.Pagination.HasPrev {
			t.Fatalf("page 2: %+v", page.Data.Pagination)
		}
		r = ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts?limit=100000", nil, nil)
		commJSON(t, r, &page)
		if page.Data.Pagination.Limit != 100 || page.Data.Pagination.Page != 1 {
			t.Fatalf("bounds: %+v", page.Data.Pagination)
		}
		commExpect(t, "page below 1", ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts?page=-3", nil, nil), 400, msgBadPage)
		commExpect(t, "bad type", ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/posts?type=NOPE", nil, nil), 400, "type must be")
		commExpect(t, "unknown community", ts.do(t, "GET", "/api/community/nope/posts", nil, nil), 404, "Community not found")

		var stories struct {
			Data struct{ Users []store.StoryGroup }
		}
		r = ts.do(t, "GET", "/api/community/"+ids.demoCommunity+"/stories", nil, nil)
		commJSON(t, r, &stories)
		if r.Status != 200 || len(stories.Data.Users) != 3 {
			t.Fatalf("stories: %d %s", r.Status, r.Body)
		}
		for _, g := range stories.Data.Users {
			if len(g.Stories) == 0 || g.User.Username == "" {
				t.Fatalf("empty group %+v", g)
			}
			for _, s := range g.Stories {
				if s.Type != store.MessageStory || s.Media == nil || s.Media.SignedURL == "" {
					t.Fatalf("story %+v", s)
				}
			}
		}
		r = ts.do(t, "GET", "/api/community/"+ids.acmeCommunity+"/stories", nil, nil)
		commJSON(t, r, &stories)
		if len(stories.Data.Users) != 0 {
			t.Fatal("acme has no stories")
		}

		// Single message with replies, and both replies lists.
		first := page.Data.Posts // page 2; take the newest post instead
		_ = first
		var single struct {
			Data store.MessageView
		}
		r = ts.do(t, "GET", "/api/messages/"+ids.demoPost+"?include=sender,attachments,reactions,tags,replies", nil, nil)
		commJSON(t, r, &single)
		if r.Status != 200 || single.Data.ID != ids.demoPost || len(single.Data.Replies) != 3 || single.Data.Count.Replies != 3 ||
			single.Data.Count.Reactions != 5 || len(single.Data.Tags) != 2 || single.Data.Sender.Username != "creator" {
			t.Fatalf("single: %d %+v", r.Status, single.Data)
		}
		var replies struct {
			Data struct {
				Replies    []store.MessageView
				Pagination store.Pagination
			}
		}
		r = ts.do(t, "GET", "/api/messages/"+ids.demoPost+"/replies?page=1&limit=50", nil, nil)
		commJSON(t, r, &replies)
		if len(replies.Data.Replies) != 3 || replies.Data.Replies[0].Type != store.MessageReply {
			t.Fatalf("replies: %s", r.Body)
		}
		r = ts.do(t, "GET", "/api/messages?parentMessageId="+ids.demoPost+"&page=1&limit=2&type=REPLY", nil, nil)
		commJSON(t, r, &replies)
		if len(replies.Data.Replies) != 2 || !replies.Data.Pagination.HasNext {
			t.Fatalf("replies page: %s", r.Body)
		}
		commExpect(t, "no parent", ts.do(t, "GET", "/api/messages", nil, nil), 400, "parentMessageId is required")
		commExpect(t, "unknown message", ts.do(t, "GET", "/api/messages/nope", nil, nil), 404, "Post not found")
		commExpect(t, "reactions list", ts.do(t, "GET", "/api/messages/"+ids.demoPost+"/reactions", nil, nil), 200, "❤️")

		// Pages: feed, post (indexable), not found, cross-app post.
		feed := ts.do(t, "GET", "/apps/demo/community", nil, nil)
		commExpect(t, "feed page", feed, 200, "Load More Posts")
		for _, want := range []string{`data-island="StoriesViewer"`, `data-island="Feed"`, "2 stories", "Tonight&#x27;s session got weir..."} {
			if !strings.Contains(feed.Body, want) {
				t.Errorf("feed page lacks %q", want)
			}
		}
		post := ts.do(t, "GET", "/apps/demo/posts/"+ids.demoPost, nil, nil)
		commExpect(t, "post page", post, 200, `property="og:image"`)
		for _, want := range []string{"<title>Tonight", `name="description"`, "A borrowed cello", `data-island="Comments"`, `data-island="LikeButton"`} {
			if !strings.Contains(post.Body, want) {
				t.Errorf("post page lacks %q", want)
			}
		}
		commExpect(t, "post missing", ts.do(t, "GET", "/apps/demo/posts/nope", nil, nil), 404, "Post not found")
		commExpect(t, "post of other app", ts.do(t, "GET", "/apps/demo/posts/"+ids.acmePost, nil, nil), 404, "Go Back")
		commExpect(t, "create post page", ts.do(t, "GET", "/apps/demo/create-post", nil, commUser(t, ts, "creator@demo.test")), 200, "Feature this post")
		commExpect(t, "create story page", ts.do(t, "GET", "/apps/demo/create-story", nil, commUser(t, ts, "follower@demo.test")), 200, "Cannot create story: insufficient permissions or community not loaded")

		// Community off: the page says so, the API answers as missing.
		ctx := context.Background()
		acme, _ := ts.store.AppByIDOrName(ctx, "acme")
		acme.Settings.Features.Community.Enabled = false
		if _, err := db.NewUpdate().Model(acme).Column("settings").WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		ts.store.InvalidateLanding(ctx, acme.ID)
		off := ts.do(t, "GET", "/apps/acme/community", nil, nil)
		commExpect(t, "community off", off, 200, "This app doesn&#x27;t have community features enabled.")
		if !strings.Contains(off.Body, "Woodworking and electronics builds from the Acme workshop.") || !strings.Contains(off.Body, "maker, woodworking") {
			t.Error("community-off page lacks description or keywords")
		}
		commExpect(t, "off api", ts.do(t, "GET", "/api/community/"+ids.acmeCommunity+"/posts", nil, nil), 404, "community features")
	})
}

func TestCommunityWriteCalls(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)
		ids := commLoad(t, ts)
		creator, subscriber := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "subscriber@demo.test")
		follower, member := commUser(t, ts, "follower@demo.test"), commUser(t, ts, "member@demo.test")
		moderator, acmeCreator := commUser(t, ts, "moderator@demo.test"), commUser(t, ts, "creator@acme.test")
		jsonOnly := map[string]string{"Content-Type": "application/json"}
		post := func(b map[string]any) map[string]any {
			if _, ok := b["communityId"]; !ok {
				b["communityId"] = ids.demoCommunity
			}
			return b
		}

		// Posts: who may, and validation.
		commExpect(t, "visitor post", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "hi"})), jsonOnly), 401, "Authentication required")
		commExpect(t, "non-member post", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "hi"})), member), 403, "Cannot create post")
		commExpect(t, "follower post (rule is SUBSCRIBER)", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "hi"})), follower), 403, "insufficient permissions")
		commExpect(t, "acme creator in demo", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "hi"})), acmeCreator), 403, "Cannot create post")
		commExpect(t, "empty post", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "   "})), subscriber), 400, "Please add some content or media to your post")
		commExpect(t, "bad type", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "x", "type": "NOPE"})), subscriber), 400, "type must be")
		commExpect(t, "no community", ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "x", "type": "POST"}), subscriber), 400, "Community not loaded")
		commExpect(t, "unknown community", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "x", "communityId": "nope"})), subscriber), 404, "Community not found")
		commExpect(t, "bad json", ts.do(t, "POST", "/api/messages", strings.NewReader("{"), subscriber), 400, "Invalid request body")
		commExpect(t, "too long", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": strings.Repeat("a", 5001)})), subscriber), 400, "too long")
		commExpect(t, "story without media", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"type": "STORY"})), subscriber), 400, "No uploaded media")
		commExpect(t, "follower story", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"type": "STORY"})), follower), 403, "Cannot create story")
		commExpect(t, "foreign attachment", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "x", "attachmentIds": []string{"nope"}})), subscriber), 400, "Attachment not found")
		commExpect(t, "foreign tag", ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "x", "tagIds": []string{"nope"}})), subscriber), 400, "Tag not found")

		var created struct {
			Success bool
			Data    store.MessageView
		}
		r := ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "  Subscriber says hello  ", "isFeatured": true})), subscriber)
		commJSON(t, r, &created)
		if r.Status != 201 || created.Data.Content != "Subscriber says hello" || created.Data.IsFeatured || created.Data.Sender.Username != "subscriber" {
			t.Fatalf("subscriber post: %d %+v", r.Status, created.Data)
		}
		subPost := created.Data.ID
		r = ts.do(t, "POST", "/api/messages", body(post(map[string]any{"content": "Creator news", "isFeatured": true})), creator)
		commJSON(t, r, &created)
		if r.Status != 201 || !created.Data.IsFeatured {
			t.Fatalf("creator featured post: %d %s", r.Status, r.Body)
		}
		// The landing's recent posts follow at once (cache invalidated).
		var landing struct {
			Data struct{ RecentPosts []store.MessageView }
		}
		commJSON(t, ts.do(t, "GET", "/api/app/demo/landing", nil, nil), &landing)
		if landing.Data.RecentPosts[0].ID != created.Data.ID {
			t.Fatalf("landing does not lead with the new post: %s", landing.Data.RecentPosts[0].Content)
		}

		// Replies: membership needed; tenancy across apps.
		reply := func(parent string, extra map[string]any) *strings.Reader {
			b := map[string]any{"content": "Nice one", "type": "REPLY", "parentMessageId": parent}
			for k, v := range extra {
				b[k] = v
			}
			return body(b)
		}
		commExpect(t, "visitor reply", ts.do(t, "POST", "/api/messages", reply(subPost, nil), jsonOnly), 401, "Authentication required")
		commExpect(t, "non-member reply", ts.do(t, "POST", "/api/messages", reply(subPost, nil), member), 403, "Follow this app")
		commExpect(t, "empty reply", ts.do(t, "POST", "/api/messages", reply(subPost, map[string]any{"content": " \n "}), follower), 400, "Comment cannot be empty")
		commExpect(t, "reply to unknown", ts.do(t, "POST", "/api/messages", reply("nope", nil), follower), 404, "Post not found")
		commExpect(t, "reply across apps", ts.do(t, "POST", "/api/messages", reply(ids.acmePost, map[string]any{"communityId": ids.demoCommunity}), follower), 404, "Post not found")
		commExpect(t, "demo follower replies in acme", ts.do(t, "POST", "/api/messages", reply(ids.acmePost, nil), follower), 403, "Follow this app")
		r = ts.do(t, "POST", "/api/messages", reply(subPost, nil), follower)
		commJSON(t, r, &created)
		if r.Status != 201 || created.Data.Type != store.MessageReply || *created.Data.ParentMessageID != subPost {
			t.Fatalf("follower reply: %d %s", r.Status, r.Body)
		}
		replyID := created.Data.ID
		commExpect(t, "reply to a reply", ts.do(t, "POST", "/api/messages", reply(replyID, nil), follower), 404, "Post not found")

		// Reactions: once per user, own removal only, count never below 0.
		commExpect(t, "visitor like", ts.do(t, "POST", "/api/messages/"+subPost+"/reactions", body(map[string]any{"reaction": "❤️"}), jsonOnly), 401, "Authentication required")
		commExpect(t, "non-member like", ts.do(t, "POST", "/api/messages/"+subPost+"/reactions", body(map[string]any{"reaction": "❤️"}), member), 403, "")
		commExpect(t, "bad reaction", ts.do(t, "POST", "/api/messages/"+subPost+"/reactions", body(map[string]any{"reaction": "👎"}), follower), 400, "heart")
		commExpect(t, "bad media", ts.do(t, "POST", "/api/messages/"+subPost+"/reactions", body(map[string]any{"reaction": "heart", "mediaId": "nope"}), follower), 400, "not part")
		var liked struct{ Data store.ReactionView }
		commJSON(t, ts.do(t, "POST", "/api/messages/"+subPost+"/reactions", body(map[string]any{"reaction": "❤️"}), follower), &liked)
		var again struct{ Data store.ReactionView }
		r = ts.do(t, "POST", "/api/messages/"+subPost+"/reactions", body(map[string]any{"reaction": "heart"}), follower)
		commJSON(t, r, &again)
		if r.Status != 201 || again.Data.ID != liked.Data.ID {
			t.Fatalf("second like duplicated: %s vs %s", again.Data.ID, liked.Data.ID)
		}
		var list struct{ Data []store.ReactionView }
		commJSON(t, ts.do(t, "GET", "/api/messages/"+subPost+"/reactions", nil, nil), &list)
		if len(list.Data) != 1 {
			t.Fatalf("reactions: %+v", list.Data)
		}
		commExpect(t, "remove someone else's", ts.do(t, "DELETE", "/api/messages/"+subPost+"/reactions/"+liked.Data.ID, nil, subscriber), 403, "your own")
		// Through another message the reaction is not found: nothing is
		// removed, and removing what is not there is answered as done.
		commExpect(t, "remove via other message", ts.do(t, "DELETE", "/api/messages/"+ids.demoPost+"/reactions/"+liked.Data.ID, nil, follower), 200, "Reaction removed")
		commJSON(t, ts.do(t, "GET", "/api/messages/"+subPost+"/reactions", nil, nil), &list)
		if len(list.Data) != 1 {
			t.Fatalf("reaction removed through another message: %+v", list.Data)
		}
		commExpect(t, "remove own", ts.do(t, "DELETE", "/api/messages/"+subPost+"/reactions/"+liked.Data.ID, nil, follower), 200, "Reaction removed")
		commExpect(t, "remove twice", ts.do(t, "DELETE", "/api/messages/"+subPost+"/reactions/"+liked.Data.ID, nil, follower), 200, "Reaction removed")
		commJSON(t, ts.do(t, "GET", "/api/messages/"+subPost+"/reactions", nil, nil), &list)
		if len(list.Data) != 0 {
			t.Fatalf("reaction not removed: %+v", list.Data)
		}

		// Delete: author and moderators; others refused.
		commExpect(t, "visitor delete", ts.do(t, "DELETE", "/api/messages/"+subPost, nil, nil), 401, "")
		commExpect(t, "follower deletes other's", ts.do(t, "DELETE", "/api/messages/"+subPost, nil, follower), 403, "cannot delete")
		commExpect(t, "acme creator deletes demo post", ts.do(t, "DELETE", "/api/messages/"+subPost, nil, acmeCreator), 403, "cannot delete")
		commExpect(t, "author deletes reply", ts.do(t, "DELETE", "/api/messages/"+replyID, nil, follower), 200, "deleted")
		commExpect(t, "moderator deletes", ts.do(t, "DELETE", "/api/messages/"+subPost, nil, moderator), 200, "deleted")
		commExpect(t, "deleted is gone", ts.do(t, "GET", "/api/messages/"+subPost, nil, nil), 404, "Post not found")
		commExpect(t, "creator deletes own", ts.do(t, "DELETE", "/api/messages/"+landing.Data.RecentPosts[0].ID, nil, creator), 200, "deleted")
		commJSON(t, ts.do(t, "GET", "/api/app/demo/landing", nil, nil), &landing)
		if landing.Data.RecentPosts[0].ID == created.Data.ID || landing.Data.RecentPosts[0].Content == "Creator news" {
			t.Fatal("landing still shows the deleted post")
		}
	})
}
