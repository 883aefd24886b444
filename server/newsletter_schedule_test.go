package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/store"
)

// announced counts the new-post fan-out jobs written for a post.
func announced(t *testing.T, ts *testServer, postID string) int {
	t.Helper()
	n, err := ts.store.DB().NewSelect().Model((*store.JobOutbox)(nil)).
		Where("kind = ? AND args LIKE ?", store.JobNotifyFanOut, "%message:"+postID+"%").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestDraftsAndScheduledPostsStayPrivate: a draft and a scheduled post
// reach their author and the app's staff only, on every path (post page,
// API, feed page and API, search, Atom feed, sitemap, the landing); only
// the creator and admins save for later; a post is published by the job
// at its time (once, however many runs overlap: 50 at once) or by Publish
// now (a form without JavaScript), announced as a new post, and is then on
// every path, through the shared page cache too.
func TestDraftsAndScheduledPostsStayPrivate(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testDraftsAndScheduled(t, newTestServer(t, db)) })
}

func testDraftsAndScheduled(t *testing.T, ts *testServer) {
	ctx := context.Background()
	app, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	comm, err := ts.store.CommunityOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	cid := comm.ID
	creator, admin, mod, fol, visitor := ts.as(t, "creator@demo.test"), ts.as(t, "admin@demo.test"), ts.as(t, "moderator@demo.test"), ts.as(t, follower), ts.as(t, "")
	post := func(c *caller, want int, extra string) map[string]any {
		return c.must(want, "POST", "/api/messages", `{"type":"POST","communityId":"`+cid+`"`+extra+`}`)
	}
	draft := dataOf(post(creator, 201, `,"content":"draftphrase one","draft":true`))
	if draft["hidden"] != store.HiddenDraft {
		t.Fatalf("draft answered %v", draft)
	}
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	sched := dataOf(post(admin, 201, `,"content":"schedphrase two","publishAt":"`+at.Format(time.RFC3339)+`"`))
	if sched["hidden"] != store.HiddenScheduled || sched["publishAt"] != at.Format(time.RFC3339) {
		t.Fatalf("scheduled answered %v", sched)
	}
	draftID, schedID := draft["id"].(string), sched["id"].(string)

	// Who may save for later, and what a schedule must be.
	for _, extra := range []string{`,"content":"x","draft":true`, `,"content":"x","publishAt":"` + at.Format(time.RFC3339) + `"`, `,"content":"x","newsletter":true`} {
		post(fol, 403, extra)
		post(mod, 403, extra)
	}
	if out := post(creator, 400, `,"content":"x","publishAt":"`+time.Now().Add(-time.Minute).Format(time.RFC3339)+`"`); out["fields"] == nil {
		t.Fatalf("a past time must name the field: %v", out)
	}
	post(creator, 400, `,"content":"x","publishAt":"tomorrow"`)
	creator.must(400, "POST", "/api/messages", `{"type":"REPLY","parentMessageId":"`+draftID+`","content":"early"}`)

	hidden := []string{"draftphrase one", "schedphrase two"}
	paths := []string{"/apps/demo/community", "/apps/demo", "/apps/demo/feed.xml", "/apps/demo/sitemap.xml",
		"/api/community/" + cid + "/posts", "/api/search/apps/" + app.ID + "?q=draftphrase", "/api/search/apps/" + app.ID + "?q=schedphrase",
		"/apps/demo/search?q=draftphrase"}
	leaks := func(who string, c *caller, phrases []string) {
		t.Helper()
		for _, p := range paths {
			h := map[string]string{}
			if c.token != "" {
				h["Cookie"] = sessionCookie + "=" + c.token
			}
			res := ts.do(t, "GET", p, nil, h)
			for _, phrase := range phrases {
				if strings.Contains(res.Body, phrase) {
					t.Errorf("%s: %s shows %q", who, p, phrase)
				}
			}
		}
		for _, id := range []string{draftID, schedID} {
			if status, _ := c.call("GET", "/api/messages/"+id, ""); status != http.StatusNotFound {
				t.Errorf("%s: GET /api/messages/%s = %d", who, id, status)
			}
			c.page("/apps/demo/posts/"+id, http.StatusNotFound)
		}
	}
	leaks("visitor", visitor, hidden)
	leaks("follower", fol, hidden)
	leaks("subscriber", ts.as(t, subscriber), hidden)

	// The author and the staff see them, marked.
	for _, c := range []*caller{creator, admin, mod} {
		for _, id := range []string{draftID, schedID} {
			c.must(200, "GET", "/api/messages/"+id, "")
		}
	}
	creator.page("/apps/demo/posts/"+draftID, 200, "Draft: only you", "Publish now")
	admin.page("/apps/demo/posts/"+schedID, 200, "Scheduled for ", "(UTC)")
	creator.page("/apps/demo/community", 200, "draftphrase one")
	if announced(t, ts, draftID)+announced(t, ts, schedID) != 0 {
		t.Fatal("an unpublished post must not be announced")
	}
	// A moderator cannot show a draft.
	if err := ts.store.SetHidden(ctx, app.ID, ts.userID(t, "moderator@demo.test"), &store.ReportTarget{Type: store.TargetPost, ID: draftID}, "", store.ActionUnhide, ""); err != nil {
		t.Fatal(err)
	}
	if m, _ := ts.store.MessageByID(ctx, draftID); m.Hidden != store.HiddenDraft {
		t.Fatalf("moderation showed a draft: %q", m.Hidden)
	}

	// A visitor's cached community page, before the job publishes.
	visitor.page("/apps/demo/community", 200)
	if n, err := jobs.PublishDue(ctx, ts.store, time.Now()); err != nil || n != 0 {
		t.Fatalf("nothing is due yet: %d %v", n, err)
	}
	// Fifty overlapping runs once it is due: published once, announced once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := jobs.PublishDue(ctx, ts.store, at.Add(time.Second))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != 1 || announced(t, ts, schedID) != 1 {
		t.Fatalf("published %d times, announced %d times; want 1, 1", total, announced(t, ts, schedID))
	}
	m, _ := ts.store.MessageByID(ctx, schedID)
	if m.Hidden != "" || m.PublishAt != nil || m.CreatedAt.Before(at) {
		t.Fatalf("published post: hidden %q publishAt %v createdAt %v", m.Hidden, m.PublishAt, m.CreatedAt)
	}
	visitor.page("/apps/demo/community", 200, "schedphrase two")
	fol.must(200, "GET", "/api/messages/"+schedID, "")

	// Publish now, without JavaScript: only staff who may schedule.
	fol.call("POST", "/api/messages/"+draftID+"/publish", "")
	if loc := creator.form("/apps/demo/posts/"+draftID+"/publish", url.Values{}); loc != "/apps/demo/posts/"+draftID {
		t.Fatalf("publish form went to %q", loc)
	}
	creator.form("/apps/demo/posts/"+draftID+"/publish", url.Values{}) // again: nothing more
	if announced(t, ts, draftID) != 1 {
		t.Fatalf("draft announced %d times", announced(t, ts, draftID))
	}
	visitor.page("/apps/demo/posts/"+draftID, 200, "draftphrase one")
	fol.page("/apps/demo/community", 200, "draftphrase one")
	visitor.page("/apps/demo/feed.xml", 200, "draftphrase one")
}

// TestScheduleFormInTheAppsTimeZone: the create form without JavaScript
// schedules at a datetime-local value read in the app's time zone, shows
// the zone, and a refused schedule comes back with what was typed.
func TestScheduleFormInTheAppsTimeZone(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	if err := ts.store.SetNewsletterSettings(ctx, app.ID, "America/New_York", app.Settings.Newsletter); err != nil {
		t.Fatal(err)
	}
	creator := ts.as(t, "creator@demo.test")
	creator.page("/apps/demo/create-post", 200, "America/New_York time", `name="publishAt"`, `value="draft"`, `name="newsletter"`)
	ts.as(t, follower).page("/apps/demo/create-post", 200)
	if body := ts.as(t, follower).page("/apps/demo/create-post", 200); strings.Contains(body, `name="publishAt"`) {
		t.Error("a follower is offered scheduling")
	}
	ny, _ := time.LoadLocation("America/New_York")
	local := time.Now().In(ny).Add(72 * time.Hour).Truncate(time.Minute)
	loc := creator.form("/apps/demo/create-post", url.Values{"content": {"tzphrase"}, "when": {"schedule"},
		"publishAt": {local.Format("2006-01-02T15:04")}})
	id := strings.TrimPrefix(loc, "/apps/demo/posts/")
	m, err := ts.store.MessageByID(ctx, id)
	if err != nil {
		t.Fatalf("redirected to %q: %v", loc, err)
	}
	if m.Hidden != store.HiddenScheduled || m.PublishAt == nil || !m.PublishAt.Equal(local) {
		t.Fatalf("scheduled %q at %v, want %v", m.Hidden, m.PublishAt, local.UTC())
	}
	creator.page(loc, 200, local.Format("3:04 PM")+" (America/New_York)")
	// A schedule without a time is refused with the form filled in again.
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": sessionCookie + "=" + creator.token}
	res := ts.do(t, "POST", "/apps/demo/create-post", strings.NewReader(url.Values{"content": {"kept text"}, "when": {"schedule"}}.Encode()), h)
	if res.Status != http.StatusBadRequest || !strings.Contains(res.Body, "kept text") || !strings.Contains(res.Body, "Choose a date and time") {
		t.Fatalf("refused schedule: %d %.400s", res.Status, res.Body)
	}
	// A draft from the form lands on its page.
	loc = creator.form("/apps/demo/create-post", url.Values{"content": {"formdraft"}, "when": {"draft"}})
	creator.page(loc, 200, "Draft: only you", "formdraft")
	_ = fmt.Sprint()
}
