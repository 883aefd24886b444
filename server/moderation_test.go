package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store"
)

// modFixture is the demo app with sessions for its roles and helpers to
// post and report over HTTP.
type modFixture struct {
	t                         *testing.T
	ts                        *testServer
	appID, communityID        string
	creator, moderator, admin map[string]string
	subscriber, follower      map[string]string
	subscriberID, followerID  string
}

func newModFixture(t *testing.T) *modFixture {
	t.Helper()
	ts := newTestServer(t, demoDB(t))
	demo, err := ts.store.Landing(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	fx := &modFixture{t: t, ts: ts, appID: demo.ID, communityID: demo.Community.ID}
	h := func(email string) map[string]string {
		return withSession(sessionFor(t, ts, email), "Content-Type", "application/json")
	}
	fx.creator, fx.moderator, fx.admin = h("creator@demo.test"), h("moderator@demo.test"), h("admin@demo.test")
	fx.subscriber, fx.follower = h("subscriber@demo.test"), h("follower@demo.test")
	fx.subscriberID, fx.followerID = ts.userID(t, "subscriber@demo.test"), ts.userID(t, "follower@demo.test")
	return fx
}

func (fx *modFixture) call(method, target string, body any, h map[string]string) response {
	fx.t.Helper()
	var s string
	switch b := body.(type) {
	case nil:
	case string:
		s = b
	default:
		raw, _ := json.Marshal(b)
		s = string(raw)
	}
	return fx.ts.do(fx.t, method, target, strings.NewReader(s), h)
}

// post creates a post as h and returns its id.
func (fx *modFixture) post(h map[string]string, content string) string {
	fx.t.Helper()
	r := fx.call("POST", "/api/messages", map[string]any{"content": content, "type": "POST", "communityId": fx.communityID}, h)
	var out struct {
		Data struct{ ID string } `json:"data"`
	}
	commJSON(fx.t, r, &out)
	if r.Status != http.StatusCreated || out.Data.ID == "" {
		fx.t.Fatalf("post as %v: %d %s", h, r.Status, r.Body)
	}
	return out.Data.ID
}

// member makes a new account following demo and returns its headers and id.
func (fx *modFixture) member(email string) (map[string]string, string) {
	fx.t.Helper()
	ctx := context.Background()
	name := strings.NewReplacer("@", "_", ".", "_").Replace(email)
	u, err := fx.ts.store.CreateUser(ctx, email, name, "x")
	if err != nil {
		fx.t.Fatal(err)
	}
	if _, err := fx.ts.store.Follow(ctx, fx.appID, u.ID); err != nil {
		fx.t.Fatal(err)
	}
	return withSession(sessionFor(fx.t, fx.ts, email), "Content-Type", "application/json"), u.ID
}

func (fx *modFixture) report(h map[string]string, targetType, id, reason string) response {
	return fx.call("POST", "/api/reports", map[string]any{"appId": fx.appID, "targetType": targetType, "targetId": id, "reason": reason}, h)
}

func (fx *modFixture) act(h map[string]string, action, targetType, id, reason string, days int) response {
	return fx.call("POST", "/api/moderation/apps/"+fx.appID+"/actions",
		map[string]any{"action": action, "targetType": targetType, "targetId": id, "reason": reason, "days": days}, h)
}

func (fx *modFixture) count(model any, where string, args ...any) int {
	fx.t.Helper()
	n, err := fx.ts.store.DB().NewSelect().Model(model).Where(where, args...).Count(context.Background())
	if err != nil {
		fx.t.Fatal(err)
	}
	return int(n)
}

// 100 identical reports sent at once by one member make one report; every
// answer says it was received.
func TestReportOncePerReporterUnderConcurrency(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	postID := fx.post(fx.subscriber, "a post to report once")
	var wg sync.WaitGroup
	statuses := make([]int, 100)
	bodies := make([]string, 100)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := fx.report(fx.follower, "POST", postID, "SPAM")
			statuses[i], bodies[i] = r.Status, r.Body
		}()
	}
	wg.Wait()
	created := 0
	for i, st := range statuses {
		if st == http.StatusCreated {
			created++
		} else if st != http.StatusOK {
			t.Fatalf("report %d: %d %s", i, st, bodies[i])
		}
		if !strings.Contains(bodies[i], "Report received") {
			t.Errorf("report %d does not say it was received: %s", i, bodies[i])
		}
	}
	if created != 1 {
		t.Errorf("%d answers said created, want 1", created)
	}
	if n := fx.count((*store.Report)(nil), "target_id = ?", postID); n != 1 {
		t.Errorf("%d report rows, want 1", n)
	}
	// One report is under the threshold: the post is still shown.
	if r := fx.call("GET", "/api/messages/"+postID, nil, nil); r.Status != http.StatusOK {
		t.Errorf("post after one report: %d", r.Status)
	}
}

// Reports are checked: a known reason, text for OTHER, a target of the app,
// not oneself, signed in.
func TestReportValidation(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	postID := fx.post(fx.subscriber, "validation target")
	cases := []struct {
		name   string
		h      map[string]string
		body   map[string]any
		status int
		msg    string
	}{
		{"visitor", map[string]string{"Content-Type": "application/json"}, map[string]any{"appId": fx.appID, "targetType": "POST", "targetId": postID, "reason": "SPAM"}, 401, "Authentication required"},
		{"unknown reason", fx.follower, map[string]any{"appId": fx.appID, "targetType": "POST", "targetId": postID, "reason": "UGLY"}, 400, msgReportReason},
		{"other without text", fx.follower, map[string]any{"appId": fx.appID, "targetType": "POST", "targetId": postID, "reason": "OTHER"}, 400, msgReportText},
		{"unknown type", fx.follower, map[string]any{"appId": fx.appID, "targetType": "SHOP", "targetId": postID, "reason": "SPAM"}, 400, "targetType"},
		{"wrong type for id", fx.follower, map[string]any{"appId": fx.appID, "targetType": "COMMENT", "targetId": postID, "reason": "SPAM"}, 404, "Not found"},
		{"missing target", fx.follower, map[string]any{"appId": fx.appID, "targetType": "POST", "targetId": store.NewID(), "reason": "SPAM"}, 404, "Not found"},
		{"oneself", fx.subscriber, map[string]any{"appId": fx.appID, "targetType": "POST", "targetId": postID, "reason": "SPAM"}, 400, msgReportSelf},
		{"other with text", fx.follower, map[string]any{"appId": fx.appID, "targetType": "POST", "targetId": postID, "reason": "OTHER", "text": "off topic"}, 201, "Report received"},
		{"a member", fx.follower, map[string]any{"appId": fx.appID, "targetType": "MEMBER", "targetId": fx.subscriberID, "reason": "HARASSMENT"}, 201, "Report received"},
	}
	for _, c := range cases {
		r := fx.call("POST", "/api/reports", c.body, c.h)
		if r.Status != c.status || !strings.Contains(r.Body, c.msg) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, r.Status, r.Body, c.status, c.msg)
		}
	}
	// A post of another app is missing in this one.
	acme, err := fx.ts.store.Landing(context.Background(), "acme")
	if err == nil {
		r := fx.call("POST", "/api/reports", map[string]any{"appId": acme.ID, "targetType": "POST", "targetId": postID, "reason": "SPAM"}, fx.follower)
		if r.Status != http.StatusNotFound {
			t.Errorf("demo post reported in acme: %d %s", r.Status, r.Body)
		}
	}
}

// The report form works without JavaScript: a plain POST, then the form
// says the report was received.
func TestReportFormWithoutJavaScript(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	postID := fx.post(fx.subscriber, "reported through the form")
	page := fx.call("GET", "/apps/demo/report?type=POST&id="+postID, nil, fx.follower)
	if page.Status != 200 || !strings.Contains(page.Body, "reported through the form") || !strings.Contains(page.Body, `name="reason"`) {
		t.Fatalf("report page: %d %.400s", page.Status, page.Body)
	}
	h := withSession(strings.TrimPrefix(fx.follower["Cookie"], sessionCookie+"="), "Content-Type", "application/x-www-form-urlencoded")
	form := url.Values{"targetType": {"POST"}, "targetId": {postID}, "reason": {"OTHER"}}
	r := fx.call("POST", "/apps/demo/report", form.Encode(), h)
	if r.Status != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "error=") {
		t.Fatalf("OTHER without text: %d %s", r.Status, r.Header.Get("Location"))
	}
	form.Set("text", "it is an advert")
	r = fx.call("POST", "/apps/demo/report", form.Encode(), h)
	loc := r.Header.Get("Location")
	if r.Status != http.StatusSeeOther || !strings.Contains(loc, "done=1") {
		t.Fatalf("report form: %d %s", r.Status, loc)
	}
	done := fx.call("GET", loc, nil, fx.follower)
	if !strings.Contains(done.Body, "Report received") {
		t.Errorf("after the form: %.400s", done.Body)
	}
	if n := fx.count((*store.Report)(nil), "target_id = ? AND text = ?", postID, "it is an advert"); n != 1 {
		t.Errorf("%d reports stored, want 1", n)
	}
	// Visitors are sent to sign in.
	if r := fx.call("GET", "/apps/demo/report?type=POST&id="+postID, nil, nil); r.Status != http.StatusFound ||
		!strings.Contains(r.Header.Get("Location"), "/authenticate/signin") {
		t.Errorf("visitor report page: %d %s", r.Status, r.Header.Get("Location"))
	}
}

// 50 members report one post at once with a threshold of 3: it is hidden
// exactly once (one audit line), and stays visible to its author (marked)
// and the moderators only.
func TestReportThresholdHidesExactlyOnce(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	postID := fx.post(fx.subscriber, "zanzibar spam post for the threshold")
	reporters := make([]map[string]string, 50)
	for i := range reporters {
		reporters[i], _ = fx.member(fmt.Sprintf("reporter%d@mod.test", i))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for _, h := range reporters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := fx.report(h, "POST", postID, "SPAM")
			mu.Lock()
			defer mu.Unlock()
			switch r.Status {
			case http.StatusCreated:
				created++
			case http.StatusNotFound:
				// Once hidden, the post is gone for other members: a
				// report that arrives after the hide finds nothing.
			default:
				t.Errorf("report: %d %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	if created < 3 {
		t.Errorf("%d reports accepted, want at least the threshold (3)", created)
	}
	if n := fx.count((*store.Report)(nil), "target_id = ?", postID); n != created {
		t.Errorf("%d reports stored, %d accepted", n, created)
	}
	if n := fx.count((*store.ModerationEntry)(nil), "target_id = ? AND action = ?", postID, store.ActionReportHide); n != 1 {
		t.Errorf("%d AUTO_HIDE audit lines, want exactly 1", n)
	}
	m, err := fx.ts.store.MessageByID(context.Background(), postID)
	if err != nil || m.Hidden != store.HiddenByReports {
		t.Fatalf("post hidden = %q (%v), want REPORTS", m.Hidden, err)
	}
	for name, h := range map[string]map[string]string{"visitor": nil, "follower": fx.follower, "reporter": reporters[0]} {
		if r := fx.call("GET", "/api/messages/"+postID, nil, h); r.Status != http.StatusNotFound {
			t.Errorf("%s reads the hidden post: %d", name, r.Status)
		}
	}
	author := fx.call("GET", "/api/messages/"+postID, nil, fx.subscriber)
	if author.Status != 200 || !strings.Contains(author.Body, `"hidden":"REPORTS"`) {
		t.Errorf("author: %d %.300s", author.Status, author.Body)
	}
	if r := fx.call("GET", "/api/messages/"+postID, nil, fx.moderator); r.Status != 200 || !strings.Contains(r.Body, `"hidden":"REPORTS"`) {
		t.Errorf("moderator: %d %.300s", r.Status, r.Body)
	}
	page := fx.call("GET", "/apps/demo/posts/"+postID, nil, fx.subscriber)
	if page.Status != 200 || !strings.Contains(page.Body, "Hidden while moderators review it") || page.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("author's post page: %d %q %.200s", page.Status, page.Header.Get("Cache-Control"), page.Body)
	}
	// The queue groups the 50 reports under one target.
	q := fx.call("GET", "/api/moderation/apps/"+fx.appID, nil, fx.moderator)
	var out struct {
		Data ModerationData `json:"data"`
	}
	commJSON(t, q, &out)
	if len(out.Data.Queue) != 1 || out.Data.Queue[0].Count != created || out.Data.Queue[0].Reasons["SPAM"] != created || out.Data.Queue[0].Target.Hidden != "REPORTS" {
		t.Errorf("queue: %d %+v", q.Status, out.Data.Queue)
	}
}

// hiddenPaths lists every read path a hidden post must vanish from for
// viewers other than its author and the moderators.
func (fx *modFixture) visibleOn(content, postID string) map[string]bool {
	fx.t.Helper()
	seen := map[string]bool{}
	check := func(name, target string, h map[string]string, needle string) {
		r := fx.call("GET", target, nil, h)
		if r.Status >= 500 {
			fx.t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
		seen[name] = strings.Contains(r.Body, needle)
	}
	check("feed API (visitor)", "/api/community/"+fx.communityID+"/posts?type=POST", nil, postID)
	check("feed API (follower)", "/api/community/"+fx.communityID+"/posts?type=POST", fx.follower, postID)
	check("community page (visitor, no JS)", "/apps/demo/community", nil, content)
	check("community page (follower, no JS)", "/apps/demo/community", fx.follower, content)
	check("post page (visitor)", "/apps/demo/posts/"+postID, nil, content)
	check("post page (follower)", "/apps/demo/posts/"+postID, fx.follower, content)
	check("landing API", "/api/app/demo/landing", nil, postID)
	check("landing page (visitor)", "/apps/demo", nil, content)
	check("landing page (follower)", "/apps/demo", fx.follower, content)
	check("search API", "/api/search/apps/demo?q=quokka", fx.follower, postID)
	check("search page", "/apps/demo/search?q=quokka", fx.follower, postID)
	check("Atom feed", "/apps/demo/feed.xml", nil, postID)
	check("sitemap", "/apps/demo/sitemap.xml", nil, postID)
	return seen
}

// A hidden post vanishes from every read path (API, pages without JS,
// search, landing, feeds, sitemaps, pages cached for visitors and
// members), and a hidden comment's notification vanishes from its
// recipient's list; showing them again brings them back.
func TestHiddenContentOnEveryReadPath(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	content := "quokka festival announcement"
	postID := fx.post(fx.subscriber, content)
	// Every path shows it first, which also fills the page caches.
	for path, ok := range fx.visibleOn(content, postID) {
		if !ok {
			t.Errorf("before hiding, %s does not show the post", path)
		}
	}
	// A comment by the follower notifies the post's author.
	r := fx.call("POST", "/api/messages", map[string]any{"content": "buy cheap quokkas now", "parentMessageId": postID}, fx.follower)
	if r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	var comment struct {
		Data struct{ ID string } `json:"data"`
	}
	commJSON(t, r, &comment)
	notices := func() string {
		return fx.call("GET", "/api/notifications/unread/"+fx.appID, nil, fx.subscriber).Body
	}
	if !strings.Contains(notices(), "buy cheap quokkas") {
		t.Fatalf("no reply notification: %s", notices())
	}
	if r := fx.act(fx.moderator, "HIDE", "COMMENT", comment.Data.ID, "spam", 0); r.Status != 200 {
		t.Fatalf("hide comment: %d %s", r.Status, r.Body)
	}
	if strings.Contains(notices(), "buy cheap quokkas") {
		t.Error("the hidden comment's notification is still listed")
	}
	if body := fx.call("GET", "/api/messages/"+postID+"/replies", nil, fx.follower).Body; strings.Contains(body, comment.Data.ID) {
		t.Error("the hidden comment is still in the replies")
	}

	if r := fx.act(fx.moderator, "HIDE", "POST", postID, "off topic", 0); r.Status != 200 {
		t.Fatalf("hide post: %d %s", r.Status, r.Body)
	}
	for path, ok := range fx.visibleOn(content, postID) {
		if ok {
			t.Errorf("hidden post still shown on %s", path)
		}
	}
	// The author and the moderators still open it, marked.
	for name, h := range map[string]map[string]string{"author": fx.subscriber, "moderator": fx.moderator, "creator": fx.creator} {
		r := fx.call("GET", "/apps/demo/posts/"+postID, nil, h)
		if r.Status != 200 || !strings.Contains(r.Body, content) || !strings.Contains(r.Body, "hidden-mark") {
			t.Errorf("%s's post page: %d", name, r.Status)
		}
	}
	// After the author looked, a follower still gets the 404: the author's
	// view was never cached.
	if r := fx.call("GET", "/apps/demo/posts/"+postID, nil, fx.follower); r.Status != http.StatusNotFound {
		t.Errorf("follower after the author: %d", r.Status)
	}
	// In the feed, the author finds their hidden post in its place, marked,
	// by the API and on the page without JavaScript; another member of the
	// same role does not, before or after the author looked (the page cache
	// shares one render per role).
	other, _ := fx.member("other-subscriber@mod.test")
	if err := fx.ts.store.SetMemberRole(context.Background(), fx.appID, fx.ts.userID(t, "other-subscriber@mod.test"), store.RoleSubscriber); err != nil {
		t.Fatal(err)
	}
	feedAPI := "/api/community/" + fx.communityID + "/posts?type=POST"
	for round := 0; round < 2; round++ {
		if body := fx.call("GET", "/apps/demo/community", nil, other).Body; strings.Contains(body, content) {
			t.Errorf("round %d: another subscriber's community page shows the hidden post", round)
		}
		if body := fx.call("GET", feedAPI, nil, other).Body; strings.Contains(body, postID) {
			t.Errorf("round %d: another subscriber's feed API lists the hidden post", round)
		}
		var feed struct {
			Data struct {
				Posts []store.MessageView `json:"posts"`
			} `json:"data"`
		}
		commJSON(t, fx.call("GET", feedAPI, nil, fx.subscriber), &feed)
		found := false
		for _, p := range feed.Data.Posts {
			if p.ID == postID {
				found = p.Hidden == store.HiddenByModerator
			}
		}
		if !found {
			t.Errorf("round %d: the author's feed API lacks their hidden post, marked", round)
		}
		page := fx.call("GET", "/apps/demo/community", nil, fx.subscriber)
		if !strings.Contains(page.Body, content) || !strings.Contains(page.Body, "Hidden pending review") {
			t.Errorf("round %d: the author's community page lacks their hidden post, marked", round)
		}
	}

	if r := fx.act(fx.moderator, "UNHIDE", "POST", postID, "", 0); r.Status != 200 {
		t.Fatalf("unhide: %d %s", r.Status, r.Body)
	}
	for path, ok := range fx.visibleOn(content, postID) {
		if !ok {
			t.Errorf("shown again, %s still leaves the post out", path)
		}
	}
	fx.hiddenEventsAndStories()

	// Every action is in the audit log with who and why.
	log := fx.call("GET", "/api/moderation/apps/"+fx.appID, nil, fx.admin).Body
	for _, want := range []string{`"action":"HIDE"`, `"action":"UNHIDE"`, `"reason":"off topic"`, `"actorName":"`} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
}

// A ban stops every write with a clear 403, ends the membership (the
// member leaves member lists and attendee lists), and stops rejoining by
// following, also from a new account with the same e-mail; lifting it
// lets the member follow again.
func TestBanStopsWritesAndRejoining(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	troll, trollID := fx.member("troll@mod.test")
	if err := fx.ts.store.SetMemberRole(ctx, fx.appID, trollID, store.RoleSubscriber); err != nil {
		t.Fatal(err)
	}
	postID := fx.post(troll, "troll post")
	creatorPost := fx.post(fx.creator, "creator post")
	start := "2030-01-01T18:00:00Z"
	r := fx.call("POST", "/api/events/apps/"+fx.appID+"/events", map[string]any{"name": "Ban test event", "startDate": start, "endDate": "2030-01-01T20:00:00Z"}, fx.creator)
	var ev struct {
		Data struct{ ID string } `json:"data"`
	}
	commJSON(t, r, &ev)
	if r := fx.call("POST", "/api/events/"+ev.Data.ID+"/join", "{}", troll); r.Status != 200 {
		t.Fatalf("join before the ban: %d %s", r.Status, r.Body)
	}

	// A moderator bans the author from the queue's report of their post.
	if r := fx.report(fx.follower, "POST", postID, "HARASSMENT"); r.Status != 201 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	if r := fx.act(fx.moderator, "BAN", "POST", postID, "harassing members", 0); r.Status != 200 || !strings.Contains(r.Body, "is banned") {
		t.Fatalf("ban: %d %s", r.Status, r.Body)
	}
	if m, _ := fx.ts.store.MembershipOf(ctx, fx.appID, trollID); m != nil {
		t.Errorf("banned member still holds %s", m.Role)
	}
	if n := fx.count((*store.Attendee)(nil), "event_id = ? AND user_id = ?", ev.Data.ID, trollID); n != 0 {
		t.Errorf("banned member still attends")
	}
	if body := fx.call("GET", "/api/events/"+ev.Data.ID+"/attendees", nil, fx.creator).Body; strings.Contains(body, trollID) {
		t.Errorf("banned member in the attendee list")
	}
	if n := fx.count((*store.Report)(nil), "target_id = ? AND status = ?", postID, store.ReportOpen); n != 0 {
		t.Errorf("%d reports still open after the ban", n)
	}

	shop, err := fx.ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	refusedWrites := []struct{ name, method, target, body string }{
		{"post", "POST", "/api/messages", fmt.Sprintf(`{"content":"again","type":"POST","communityId":%q}`, fx.communityID)},
		{"comment", "POST", "/api/messages", fmt.Sprintf(`{"content":"again","parentMessageId":%q}`, creatorPost)},
		{"react", "POST", "/api/messages/" + creatorPost + "/reactions", `{"reaction":"heart"}`},
		{"join event", "POST", "/api/events/" + ev.Data.ID + "/join", `{}`},
		{"follow again", "POST", "/api/notifications/follow/" + fx.appID, `{}`},
		{"buy", "POST", "/api/store/" + shop.Store.ID + "/cart/items", `{"storeItemId":"x","quantity":1}`},
		{"checkout", "POST", "/api/store/" + shop.Store.ID + "/orders/checkout", `{}`},
		{"donate", "POST", "/api/donations/create", fmt.Sprintf(`{"appId":%q,"amount":500,"currency":"USD"}`, fx.appID)},
	}
	for _, w := range refusedWrites {
		r := fx.call(w.method, w.target, w.body, troll)
		if r.Status != http.StatusForbidden || !strings.Contains(r.Body, "You are banned from this app") || !strings.Contains(r.Body, "harassing members") {
			t.Errorf("%s while banned: %d %s", w.name, r.Status, r.Body)
		}
	}
	// The follow form without JavaScript is refused too.
	form := withSession(strings.TrimPrefix(troll["Cookie"], sessionCookie+"="), "Content-Type", "application/x-www-form-urlencoded")
	if r := fx.call("POST", "/apps/demo/follow", "", form); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "You are banned") {
		t.Errorf("follow form while banned: %d", r.Status)
	}
	// So is the post form: it says why, keeping what was written.
	if r := fx.call("POST", "/apps/demo/create-post", "content=still+here", form); r.Status != http.StatusForbidden ||
		!strings.Contains(r.Body, "You are banned from this app") || !strings.Contains(r.Body, "harassing members") {
		t.Errorf("post form while banned: %d %.400s", r.Status, r.Body)
	}
	mpForm := withSession(strings.TrimPrefix(troll["Cookie"], sessionCookie+"="), "Content-Type", "multipart/form-data; boundary=XyZ")
	mpBody := "--XyZ\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\nstill here\r\n--XyZ--\r\n"
	if r := fx.call("POST", "/apps/demo/create-post", mpBody, mpForm); r.Status != http.StatusForbidden ||
		!strings.Contains(r.Body, "You are banned from this app") {
		t.Errorf("multipart post form while banned: %d %.400s", r.Status, r.Body)
	}
	// The form's page says so before anything is written.
	if r := fx.call("GET", "/apps/demo/create-post", nil, troll); !strings.Contains(r.Body, `role="alert">You are banned from this app`) {
		t.Errorf("post form page while banned: %d", r.Status)
	}
	// Reading stays possible.
	if r := fx.call("GET", "/apps/demo/community", nil, troll); r.Status != 200 {
		t.Errorf("banned member reads the community: %d", r.Status)
	}
	if m, _ := fx.ts.store.MembershipOf(ctx, fx.appID, trollID); m != nil {
		t.Errorf("banned member rejoined as %s", m.Role)
	}

	// The account goes; a new one with the same e-mail (spelt otherwise) is
	// held by the same ban.
	if _, err := fx.ts.store.DB().NewDelete().Model((*store.User)(nil)).Where("id = ?", trollID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := fx.ts.store.CreateUser(ctx, "Troll@Mod.test", "troll_again", "x")
	if err != nil {
		t.Fatal(err)
	}
	again := withSession(sessionFor(t, fx.ts, u.Email), "Content-Type", "application/json")
	if r := fx.call("POST", "/api/notifications/follow/"+fx.appID, "{}", again); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "banned") {
		t.Errorf("new account with the banned e-mail follows: %d %s", r.Status, r.Body)
	}

	// Lifting the ban (the studio lists it under the gone account's id)
	// lets the address back in.
	if r := fx.act(fx.admin, "LIFT", "MEMBER", trollID, "second chance", 0); r.Status != 200 {
		t.Fatalf("lift: %d %s", r.Status, r.Body)
	}
	if r := fx.call("POST", "/api/notifications/follow/"+fx.appID, "{}", again); r.Status != 200 {
		t.Errorf("follow after the ban was lifted: %d %s", r.Status, r.Body)
	}
	log := fx.call("GET", "/api/moderation/apps/"+fx.appID, nil, fx.moderator).Body
	for _, want := range []string{`"action":"BAN"`, `"action":"LIFT"`, `"reason":"harassing members"`, `"reason":"second chance"`} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
}

// A silenced member reads, follows and buys, but cannot post, comment or
// react; a silence for some days ends by itself.
func TestSilenceAllowsReadingAndBuying(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	loud, loudID := fx.member("loud@mod.test")
	creatorPost := fx.post(fx.creator, "creator post for silence")
	if r := fx.act(fx.moderator, "SILENCE", "MEMBER", loudID, "flooding", 7); r.Status != 200 || !strings.Contains(r.Body, "is silenced") {
		t.Fatalf("silence: %d %s", r.Status, r.Body)
	}
	if m, _ := fx.ts.store.MembershipOf(ctx, fx.appID, loudID); m == nil {
		t.Error("a silence ended the membership")
	}
	for _, w := range []struct{ name, target, body string }{
		{"comment", "/api/messages", fmt.Sprintf(`{"content":"again","parentMessageId":%q}`, creatorPost)},
		{"react", "/api/messages/" + creatorPost + "/reactions", `{"reaction":"heart"}`},
	} {
		r := fx.call("POST", w.target, w.body, loud)
		if r.Status != http.StatusForbidden || !strings.Contains(r.Body, "You are silenced in this app") || !strings.Contains(r.Body, "until") {
			t.Errorf("%s while silenced: %d %s", w.name, r.Status, r.Body)
		}
	}
	demo, err := fx.ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	var item store.StoreItem
	if err := fx.ts.store.DB().NewSelect().Model(&item).Where("app_id = ? AND type = ? AND deleted_at IS NULL", fx.appID, store.ItemDigital).Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if r := fx.call("POST", "/api/store/"+demo.Store.ID+"/cart/items", fmt.Sprintf(`{"storeItemId":%q,"quantity":1}`, item.ID), loud); r.Status >= 300 {
		t.Errorf("silenced member cannot buy: %d %s", r.Status, r.Body)
	}
	if r := fx.call("GET", "/api/messages/"+creatorPost, nil, loud); r.Status != 200 {
		t.Errorf("silenced member cannot read: %d", r.Status)
	}
	// The page offers no comment box and no like.
	var ban store.Ban
	if err := fx.ts.store.DB().NewSelect().Model(&ban).Where("user_id = ?", loudID).Scan(ctx); err != nil || ban.EndsAt == nil {
		t.Fatalf("silence stored without an end: %+v %v", ban, err)
	}
	// Once the end passes, the member writes again.
	if _, err := fx.ts.store.DB().NewUpdate().Model((*store.Ban)(nil)).Set("ends_at = ?", ban.CreatedAt.Add(-1)).Where("id = ?", ban.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r := fx.call("POST", "/api/messages/"+creatorPost+"/reactions", `{"reaction":"heart"}`, loud); r.Status >= 300 {
		t.Errorf("react after the silence ended: %d %s", r.Status, r.Body)
	}
}

// The role x action table of every moderation call: each action on a fresh
// target, for each role of the demo app. Reviewing is MODERATOR and up;
// banning only reaches members ranked below the actor; the rules are the
// creator's and admins'.
func TestModerationRoleActionTable(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	// The table files one report per action and role from one member: far
	// past a person's report limit (TestReportLimit covers that).
	fx.ts.limits.Reports = Rate{10000, time.Minute}
	ctx := context.Background()
	headers := map[string]map[string]string{store.RolePublic: {"Content-Type": "application/json"}}
	for _, ru := range roleUsers {
		if ru.email != "" {
			headers[ru.role] = withSession(sessionFor(t, fx.ts, ru.email), "Content-Type", "application/json")
		}
	}
	n := 0
	// target makes a fresh post by a fresh follower and reports it.
	target := func() (string, string) {
		n++
		h, id := fx.member(fmt.Sprintf("target%d@mod.test", n))
		if err := fx.ts.store.SetMemberRole(ctx, fx.appID, id, store.RoleSubscriber); err != nil {
			t.Fatal(err)
		}
		postID := fx.post(h, fmt.Sprintf("table target %d", n))
		if r := fx.report(fx.follower, "POST", postID, "SPAM"); r.Status != 201 {
			t.Fatalf("report: %d %s", r.Status, r.Body)
		}
		return postID, id
	}
	actions := []string{ModDismiss, ModHide, ModUnhide, ModDelete, ModWarn, ModSilence, ModBan, ModLift}
	for _, ru := range roleUsers {
		for _, action := range actions {
			postID, authorID := target()
			targetType, id := "POST", postID
			if action == ModLift {
				if _, err := fx.ts.store.BanMember(ctx, store.NewBan{AppID: fx.appID, UserID: authorID, ActorID: fx.subscriberID, Kind: store.BanKindBan}); err != nil {
					t.Fatal(err)
				}
				targetType, id = "MEMBER", authorID
			}
			r := fx.act(headers[ru.role], action, targetType, id, "table", 1)
			allowed := store.RoleRank(ru.role) >= store.RoleRank(store.RoleModerator)
			if allowed && r.Status != 200 {
				t.Errorf("%s as %s: %d %s, want 200", action, ru.role, r.Status, r.Body)
			}
			if !allowed && r.Status != 401 && r.Status != 403 {
				t.Errorf("%s as %s: %d %s, want 401/403", action, ru.role, r.Status, r.Body)
			}
			if !allowed && ru.role != store.RolePublic && !strings.Contains(r.Body, msgReviewOnly) {
				t.Errorf("%s as %s: %s, want %q", action, ru.role, r.Body, msgReviewOnly)
			}
		}
		// Reading the queue and setting the rules.
		q := fx.call("GET", "/api/moderation/apps/"+fx.appID, nil, headers[ru.role])
		if want := store.RoleRank(ru.role) >= store.RoleRank(store.RoleModerator); (q.Status == 200) != want {
			t.Errorf("queue as %s: %d", ru.role, q.Status)
		}
		s := fx.call("PUT", "/api/moderation/apps/"+fx.appID+"/settings", `{"reportThreshold":4,"holdNewAccountLinks":false}`, headers[ru.role])
		if want := store.RoleRank(ru.role) >= store.RoleRank(store.RoleAdmin); (s.Status == 200) != want {
			t.Errorf("rules as %s: %d %s", ru.role, s.Status, s.Body)
		}
	}
	// Nobody bans someone of their rank or above.
	for _, c := range []struct{ actor, target string }{
		{store.RoleModerator, "moderator@demo.test"}, {store.RoleModerator, "admin@demo.test"},
		{store.RoleAdmin, "creator@demo.test"}, {store.RoleCreator, "creator@demo.test"},
	} {
		id := fx.ts.userID(t, c.target)
		if r := fx.act(headers[c.actor], ModBan, "MEMBER", id, "", 0); r.Status != http.StatusForbidden {
			t.Errorf("%s bans %s: %d %s", c.actor, c.target, r.Status, r.Body)
		}
	}
	if r := fx.act(headers[store.RoleAdmin], ModBan, "MEMBER", fx.ts.userID(t, "moderator@demo.test"), "", 1); r.Status != 200 {
		t.Errorf("admin bans a moderator: %d %s", r.Status, r.Body)
	}
	// Each allowed action left exactly one audit line with its actor.
	for _, action := range []string{store.ActionDismiss, store.ActionHide, store.ActionUnhide, store.ActionDelete, store.ActionWarn, store.ActionSilence, store.ActionLift} {
		if got := fx.count((*store.ModerationEntry)(nil), "app_id = ? AND action = ? AND actor_id <> ''", fx.appID, action); got != 3 {
			t.Errorf("%d %s audit lines, want 3 (moderator, admin, creator)", got, action)
		}
	}
}

// With the app's hold on, a post with links from an account younger than a
// day (or unverified) waits for approval: out of the feed, in the queue,
// shown once a moderator approves it. Older verified accounts, posts
// without links and apps without the hold are not held.
func TestNewAccountLinksWaitForApproval(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	newbie, newbieID := fx.member("newbie@mod.test")
	if err := fx.ts.store.SetMemberRole(ctx, fx.appID, newbieID, store.RoleSubscriber); err != nil {
		t.Fatal(err)
	}
	// Hold off: a link posts at once.
	free := fx.post(newbie, "before the rule: see https://example.com/a")
	if m, _ := fx.ts.store.MessageByID(ctx, free); m.Hidden != "" {
		t.Fatalf("held without the rule: %q", m.Hidden)
	}
	if r := fx.call("PUT", "/api/moderation/apps/"+fx.appID+"/settings", `{"reportThreshold":3,"holdNewAccountLinks":true}`, fx.admin); r.Status != 200 {
		t.Fatalf("rules: %d %s", r.Status, r.Body)
	}
	r := fx.call("POST", "/api/messages", map[string]any{"content": "cheap pills at www.pills.example", "type": "POST", "communityId": fx.communityID}, newbie)
	var held struct {
		Data    store.MessageView `json:"data"`
		Message string            `json:"message"`
	}
	commJSON(t, r, &held)
	if r.Status != http.StatusCreated || held.Data.Hidden != store.HiddenForApproval || !strings.Contains(held.Message, "approval") {
		t.Fatalf("held post: %d %s", r.Status, r.Body)
	}
	plain := fx.post(newbie, "no links in this one")
	if m, _ := fx.ts.store.MessageByID(ctx, plain); m.Hidden != "" {
		t.Errorf("a post without links was held")
	}
	// An account older than a day with a verified e-mail is not held.
	if _, err := fx.ts.store.DB().NewUpdate().Model((*store.User)(nil)).Set("created_at = created_at - interval '2 days'").Set("email_verified = true").
		Where("id = ?", fx.subscriberID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	old := fx.post(fx.subscriber, "my site https://luna.example")
	if m, _ := fx.ts.store.MessageByID(ctx, old); m.Hidden != "" {
		t.Errorf("an old verified account's link was held")
	}
	feed := fx.call("GET", "/api/community/"+fx.communityID+"/posts?type=POST", nil, fx.follower).Body
	if strings.Contains(feed, held.Data.ID) || !strings.Contains(feed, plain) {
		t.Errorf("feed: held post shown or plain one missing")
	}
	q := fx.call("GET", "/api/moderation/apps/"+fx.appID, nil, fx.moderator)
	var out struct {
		Data ModerationData `json:"data"`
	}
	commJSON(t, q, &out)
	found := false
	for _, it := range out.Data.Queue {
		if it.Target.ID == held.Data.ID && it.Target.Hidden == store.HiddenForApproval {
			found = true
		}
	}
	if !found {
		t.Fatalf("held post not in the queue: %+v", out.Data.Queue)
	}
	if r := fx.act(fx.moderator, "APPROVE", "POST", held.Data.ID, "", 0); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if feed := fx.call("GET", "/api/community/"+fx.communityID+"/posts?type=POST", nil, fx.follower).Body; !strings.Contains(feed, held.Data.ID) {
		t.Errorf("approved post not in the feed")
	}
	for _, action := range []string{store.ActionHold, store.ActionApprove, store.ActionSettings} {
		if n := fx.count((*store.ModerationEntry)(nil), "app_id = ? AND action = ?", fx.appID, action); n != 1 {
			t.Errorf("%d %s audit lines, want 1", n, action)
		}
	}
}

// Role actions are audited too: giving an event attendee the moderator
// role (and taking it back) writes ROLE lines the moderation page lists.
func TestAttendeeRoleChangesAreAudited(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	r := fx.call("POST", "/api/events/apps/"+fx.appID+"/events", map[string]any{"name": "Audit event", "startDate": "2030-02-01T18:00:00Z", "endDate": "2030-02-01T20:00:00Z"}, fx.creator)
	var ev struct {
		Data struct{ ID string } `json:"data"`
	}
	commJSON(t, r, &ev)
	if r := fx.call("POST", "/api/events/"+ev.Data.ID+"/join", "{}", fx.follower); r.Status != 200 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	for _, role := range []string{"MODERATOR", "ATTENDEE"} {
		if r := fx.call("PUT", "/api/events/"+ev.Data.ID+"/attendees/"+fx.followerID, map[string]any{"role": role}, fx.moderator); r.Status != 200 {
			t.Fatalf("set %s: %d %s", role, r.Status, r.Body)
		}
	}
	if n := fx.count((*store.ModerationEntry)(nil), "app_id = ? AND action = ? AND target_user_id = ?", fx.appID, store.ActionRole, fx.followerID); n != 2 {
		t.Errorf("%d ROLE audit lines, want 2", n)
	}
	page := fx.call("GET", "/apps/demo/studio/moderation", nil, fx.moderator)
	if !strings.Contains(page.Body, "Audit event: MODERATOR") || !strings.Contains(page.Body, "@moderator") {
		t.Errorf("moderation page does not list the role change: %d", page.Status)
	}
}

// hiddenEventsAndStories: a hidden event and a hidden story leave every
// read path (lists, pages without JavaScript, the landing, search, the
// calendar feed, the sitemap), cached pages included; the hidden event's
// page answers 404 to members and stays open, marked, to moderators.
func (fx *modFixture) hiddenEventsAndStories() {
	t := fx.t
	t.Helper()
	ctx := context.Background()
	start := time.Now().Add(48 * time.Hour).UTC()
	name := "Wombat gathering"
	r := fx.call("POST", "/api/events/apps/"+fx.appID+"/events", map[string]any{"name": name,
		"startDate": start.Format(time.RFC3339), "endDate": start.Add(time.Hour).Format(time.RFC3339)}, fx.creator)
	var ev struct {
		Data struct{ ID string } `json:"data"`
	}
	commJSON(t, r, &ev)
	if r.Status != http.StatusCreated {
		t.Fatalf("create event: %d %s", r.Status, r.Body)
	}
	var story store.Message
	if err := fx.ts.store.DB().NewSelect().Model(&story).Where("app_id = ? AND type = ? AND created_at > ? AND hidden = ''", fx.appID,
		store.MessageStory, time.Now().Add(-store.StoryLifetime+time.Hour)).Limit(1).Scan(ctx); err != nil {
		t.Fatalf("no story to hide: %v", err)
	}
	paths := func() map[string]bool {
		seen := map[string]bool{}
		check := func(name, target string, h map[string]string, needle string) {
			r := fx.call("GET", target, nil, h)
			if r.Status >= 500 {
				t.Fatalf("%s: %d %s", name, r.Status, r.Body)
			}
			seen[name] = r.Status == http.StatusOK && strings.Contains(r.Body, needle)
		}
		for who, h := range map[string]map[string]string{"visitor": nil, "follower": fx.follower} {
			check("events page ("+who+", no JS)", "/apps/demo/events", h, name)
			check("event page ("+who+", no JS)", "/apps/demo/events/"+ev.Data.ID, h, name)
			check("landing API ("+who+")", "/api/app/demo/landing", h, ev.Data.ID)
			check("landing page ("+who+")", "/apps/demo", h, name)
			check("stories API ("+who+")", "/api/community/"+fx.communityID+"/stories", h, story.ID)
			check("story feed API ("+who+")", "/api/community/"+fx.communityID+"/posts?type=STORY", h, story.ID)
			check("community page strip ("+who+", no JS)", "/apps/demo/community", h, story.ID)
		}
		// The events API is for members (a visitor gets 401).
		check("events API", "/api/events/apps/"+fx.appID+"/events", fx.follower, ev.Data.ID)
		check("event API", "/api/events/"+ev.Data.ID, fx.follower, name)
		check("event search", "/api/search/apps/demo?q=wombat", fx.follower, ev.Data.ID)
		check("calendar feed", "/apps/demo/events.ics", fx.follower, name)
		check("sitemap", "/apps/demo/sitemap.xml", nil, ev.Data.ID)
		return seen
	}
	for path, ok := range paths() {
		if !ok {
			t.Errorf("before hiding, %s does not show the event or story", path)
		}
	}
	for _, target := range []struct{ typ, id string }{{"EVENT", ev.Data.ID}, {"STORY", story.ID}} {
		if r := fx.act(fx.moderator, "HIDE", target.typ, target.id, "review", 0); r.Status != 200 {
			t.Fatalf("hide %s: %d %s", target.typ, r.Status, r.Body)
		}
	}
	for path, ok := range paths() {
		if ok {
			t.Errorf("hidden, %s still shows the event or story", path)
		}
	}
	if r := fx.call("GET", "/apps/demo/events/"+ev.Data.ID, nil, fx.moderator); r.Status != 200 || !strings.Contains(r.Body, name) {
		t.Errorf("moderator's view of the hidden event: %d", r.Status)
	}
	if r := fx.call("GET", "/apps/demo/events/"+ev.Data.ID, nil, fx.follower); r.Status != http.StatusNotFound {
		t.Errorf("follower's view of the hidden event after the moderator's: %d", r.Status)
	}
}

// TestStoryReportWithoutJS: the stories strip links each member's stories
// (?story=USER_ID), which the server renders open in the viewer, with a
// Report link to the report form; the form files a STORY report, all
// without JavaScript.
func TestStoryReportWithoutJS(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	var story store.Message
	if err := fx.ts.store.DB().NewSelect().Model(&story).Where("app_id = ? AND type = ? AND created_at > ? AND hidden = '' AND sender_id <> ?", fx.appID,
		store.MessageStory, time.Now().Add(-store.StoryLifetime+time.Hour), fx.followerID).OrderExpr("created_at ASC").Limit(1).Scan(ctx); err != nil {
		t.Fatalf("no story: %v", err)
	}
	strip := fx.call("GET", "/apps/demo/community", nil, fx.follower)
	if !strings.Contains(strip.Body, `href="?story=`+story.SenderID+`"`) || strings.Contains(strip.Body, `class="story-viewer"`) {
		t.Fatalf("the strip does not link the stories, or opens the viewer: %d", strip.Status)
	}
	open := fx.call("GET", "/apps/demo/community?story="+story.SenderID, nil, fx.follower)
	link := "/apps/demo/report?type=STORY&amp;id=" + story.ID
	if open.Status != 200 || !strings.Contains(open.Body, `class="story-viewer"`) || !strings.Contains(open.Body, link) {
		t.Fatalf("opened strip: %d, viewer or report link missing", open.Status)
	}
	form := fx.call("GET", "/apps/demo/report?type=STORY&id="+story.ID, nil, fx.follower)
	if form.Status != 200 || !strings.Contains(form.Body, `name="targetId"`) {
		t.Fatalf("report form: %d", form.Status)
	}
	h := withSession(strings.TrimPrefix(fx.follower["Cookie"], sessionCookie+"="), "Content-Type", "application/x-www-form-urlencoded")
	r := fx.call("POST", "/apps/demo/report", "targetType=STORY&targetId="+story.ID+"&reason=SPAM", h)
	if r.Status != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "done=1") {
		t.Fatalf("report post: %d %s", r.Status, r.Header.Get("Location"))
	}
	if n := fx.count((*store.Report)(nil), "target_type = ? AND target_id = ? AND reporter_id = ?", store.TargetStory, story.ID, fx.followerID); n != 1 {
		t.Fatalf("story reports %d, want 1", n)
	}
}

// reportThreshold 0 is what api/openapi.yaml says it is, the default (3):
// the call takes it and answers the threshold in force; out of range is a
// 400, and the form refuses a threshold that is not a number rather than
// taking it as 0 (issue 41 item 15).
func TestReportThresholdZeroIsTheDefault(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	settings := "/api/moderation/apps/" + fx.appID + "/settings"
	threshold := func() int {
		app, err := fx.ts.store.AppByIDOrName(ctx, fx.appID)
		if err != nil {
			t.Fatal(err)
		}
		return app.Settings.Moderation.Threshold()
	}
	if r := fx.call("PUT", settings, `{"reportThreshold":5,"holdNewAccountLinks":false}`, fx.admin); r.Status != 200 || threshold() != 5 {
		t.Fatalf("threshold 5: %d %s, in force %d", r.Status, r.Body, threshold())
	}
	r := fx.call("PUT", settings, `{"reportThreshold":0,"holdNewAccountLinks":false}`, fx.admin)
	var out struct {
		Data store.ModerationSettings `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Body), &out); r.Status != 200 || err != nil || out.Data.ReportThreshold != store.DefaultReportThreshold {
		t.Fatalf("threshold 0: %d %s", r.Status, r.Body)
	}
	if got := threshold(); got != store.DefaultReportThreshold {
		t.Errorf("threshold in force after 0: %d", got)
	}
	for _, bad := range []string{"-1", "1001"} {
		if r := fx.call("PUT", settings, `{"reportThreshold":`+bad+`,"holdNewAccountLinks":false}`, fx.admin); r.Status != 400 || !strings.Contains(r.Body, store.MsgReportThreshold) {
			t.Errorf("threshold %s: %d %s", bad, r.Status, r.Body)
		}
	}
	form := withSession(sessionFor(t, fx.ts, "admin@demo.test"), "Content-Type", "application/x-www-form-urlencoded")
	r = fx.ts.do(t, "POST", "/apps/demo/studio/moderation/settings", strings.NewReader("reportThreshold=lots"), form)
	if loc := r.Header.Get("Location"); r.Status != 303 || !strings.Contains(loc, "error=") {
		t.Errorf("form threshold lots: %d %s", r.Status, loc)
	}
	if r := fx.ts.do(t, "POST", "/apps/demo/studio/moderation/settings", strings.NewReader("reportThreshold=7"), form); r.Status != 303 || threshold() != 7 {
		t.Errorf("form threshold 7: %d, in force %d", r.Status, threshold())
	}
}
