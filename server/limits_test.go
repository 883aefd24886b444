package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWriteLimits: with the limits lowered, each kind of write under /api
// stops at its own per-member limit with 429 and Retry-After, and one
// member's limit leaves other members and other kinds of writes alone.
func TestWriteLimits(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ts.limits.Posts = Rate{2, time.Minute}
	ts.limits.Comments = Rate{2, time.Minute}
	ts.limits.Reactions = Rate{3, time.Minute}
	ts.limits.Media = Rate{1, time.Minute}
	ids := commLoad(t, ts)
	demo := appID(t, ts, "demo")
	post := fmt.Sprintf(`{"content":"hello","type":"POST","communityId":%q}`, ids.demoCommunity)
	story := fmt.Sprintf(`{"content":"","type":"STORY","communityId":%q,"attachmentIds":["x"]}`, ids.demoCommunity)
	comment := fmt.Sprintf(`{"content":"nice","parentMessageId":%q}`, ids.demoPost)
	heart := `{"reaction":"heart"}`
	reactions := "/api/messages/" + ids.demoPost + "/reactions"
	media := fmt.Sprintf(`{"name":"a.png","type":"IMAGE","size":100,"mimeType":"image/png","mediaKey":"post","appId":%q}`, demo)
	tooOften := map[string]any{"success": false, "message": present{}}
	ts.run(t, []scenario{
		{name: "post 1", method: "POST", path: "/api/messages", as: "creator@demo.test", body: post, status: 201},
		{name: "post 2", method: "POST", path: "/api/messages", as: "creator@demo.test", body: post, status: 201},
		{name: "post 3 is over the limit", method: "POST", path: "/api/messages", as: "creator@demo.test", body: post, status: 429, json: tooOften, contains: []string{"too often"}},
		{name: "stories count with posts", method: "POST", path: "/api/messages", as: "creator@demo.test", body: story, status: 429},
		{name: "another member still posts", method: "POST", path: "/api/messages", as: "admin@demo.test", body: post, status: 201},
		{name: "the creator still comments", method: "POST", path: "/api/messages", as: "creator@demo.test", body: comment, status: 201},
		{name: "comment 1", method: "POST", path: "/api/messages", as: "follower@demo.test", body: comment, status: 201},
		{name: "comment 2", method: "POST", path: "/api/messages", as: "follower@demo.test", body: comment, status: 201},
		{name: "comment 3 is over the limit", method: "POST", path: "/api/messages", as: "follower@demo.test", body: comment, status: 429, json: tooOften},
		{name: "react", method: "POST", path: reactions, as: "subscriber@demo.test", body: heart, status: 201},
		{name: "unreact (unknown id: idempotent)", method: "DELETE", path: reactions + "/gone", as: "subscriber@demo.test", status: 200},
		{name: "react again", method: "POST", path: reactions, as: "subscriber@demo.test", body: heart, status: 201},
		{name: "reaction 4 is over the limit", method: "POST", path: reactions, as: "subscriber@demo.test", body: heart, status: 429},
		{name: "removal over the limit too", method: "DELETE", path: reactions + "/gone", as: "subscriber@demo.test", status: 429},
		{name: "media 1", method: "POST", path: "/api/media", as: "moderator@demo.test", body: media, status: 201},
		{name: "media 2 is over the limit", method: "POST", path: "/api/media", as: "moderator@demo.test", body: media, status: 429},
		// Reads are never limited.
		{name: "reads still work", path: reactions, as: "subscriber@demo.test", status: 200},
	})
	res := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "again", "parentMessageId": ids.demoPost}), commUser(t, ts, "follower@demo.test"))
	secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if res.Status != http.StatusTooManyRequests || err != nil || secs < 1 || secs > 60 {
		t.Errorf("429 Retry-After: %d %q", res.Status, res.Header.Get("Retry-After"))
	}
}

// TestDefaultWriteLimitsAreGenerous: a busy member's hour of ordinary use
// stays under every default.
func TestDefaultWriteLimitsAreGenerous(t *testing.T) {
	t.Parallel()
	d := DefaultLimits()
	for name, r := range map[string]Rate{"posts": d.Posts, "comments": d.Comments, "reactions": d.Reactions, "media": d.Media} {
		perMinute := float64(r.Limit) / r.Per.Minutes()
		if r.Limit < 50 || perMinute < 5 {
			t.Errorf("%s: %d per %v is tight for normal use", name, r.Limit, r.Per)
		}
	}
}

// TestReportLimit: new reports count against the reporter's own limit
// (429 with Retry-After past it, also through the form without JS);
// repeating a report already filed is not counted and still answers
// "received"; another member still reports.
func TestReportLimit(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ts.limits.Reports = Rate{2, time.Minute}
	ctx := context.Background()
	app, _ := ts.store.AppByIDOrName(ctx, "demo")
	var posts []string
	if err := ts.store.DB().NewSelect().Table("messages").Column("id").Where("app_id = ? AND type = 'POST' AND sender_id NOT IN (?, ?)", app.ID,
		ts.userID(t, "follower@demo.test"), ts.userID(t, "subscriber@demo.test")).OrderExpr("id").Limit(4).Scan(ctx, &posts); err != nil || len(posts) < 4 {
		t.Fatalf("posts %v %v", posts, err)
	}
	report := func(id string) string {
		return fmt.Sprintf(`{"appId":%q,"targetType":"POST","targetId":%q,"reason":"SPAM"}`, app.ID, id)
	}
	ts.run(t, []scenario{
		{name: "report 1", method: "POST", path: "/api/reports", as: "follower@demo.test", body: report(posts[0]), status: 201},
		{name: "report 2", method: "POST", path: "/api/reports", as: "follower@demo.test", body: report(posts[1]), status: 201},
		{name: "a repeat is not counted", method: "POST", path: "/api/reports", as: "follower@demo.test", body: report(posts[0]), status: 200,
			contains: []string{"Report received"}},
		{name: "report 3 is over the limit", method: "POST", path: "/api/reports", as: "follower@demo.test", body: report(posts[2]), status: 429,
			contains: []string{"too often"}},
		{name: "another member still reports", method: "POST", path: "/api/reports", as: "subscriber@demo.test", body: report(posts[2]), status: 201},
	})
	n, err := ts.store.DB().NewSelect().Table("reports").Where("reporter_id = ?", ts.userID(t, "follower@demo.test")).Count(ctx)
	if err != nil || n != 2 {
		t.Fatalf("follower's reports %d %v, want 2", n, err)
	}
	form := url.Values{"targetType": {"POST"}, "targetId": {posts[3]}, "reason": {"SPAM"}}
	r := ts.do(t, "POST", "/apps/demo/report", strings.NewReader(form.Encode()),
		withSession(sessionFor(t, ts, "follower@demo.test"), "Content-Type", "application/x-www-form-urlencoded"))
	if r.Status != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "too+often") {
		t.Fatalf("form over the limit: %d %s", r.Status, r.Header.Get("Location"))
	}
}
