package server

import (
	"fmt"
	"net/http"
	"strconv"
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
