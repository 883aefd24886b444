package server

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/server/jobs"
	"marquee/store"
)

// TestStudioNewsletterSettings: the creator sets the newsletter's sender,
// reply-to, default, digest day and hour and time zone from the studio, by
// the form without JavaScript and by the JSON call; a refused field comes
// back named with everything else as it was sent, and nothing is saved.
// Followers are refused.
func TestStudioNewsletterSettings(t *testing.T) {
	t.Parallel()
	f := newsletterServer(t)
	ts, ctx := f.ts, context.Background()
	page := "/apps/demo/studio/newsletter"

	fan := ts.as(t, follower)
	if r := send(t, fan, "GET", page, ""); r.Status != 403 {
		t.Fatalf("a follower opened the newsletter screen: %d", r.Status)
	}
	if r := send(t, f.creator, "GET", page, ""); r.Status != 200 || !strings.Contains(r.Body, "Newsletter settings") || !strings.Contains(r.Body, `aria-current="page"`) {
		t.Fatalf("screen: %d %.300s", r.Status, r.Body)
	}

	bad := url.Values{"senderName": {"Luna's letters"}, "replyTo": {"not an address"}, "defaultOn": {"on"}, "digestDay": {"2"}, "digestHour": {"7"}, "timeZone": {"Europe/Lisbon"}}
	r := send(t, f.creator, "POST", page, bad.Encode())
	if r.Status != 400 || !strings.Contains(r.Body, "The reply-to address is not an e-mail address") || !strings.Contains(r.Body, `value="Luna&#x27;s letters"`) {
		t.Fatalf("refused form: %d %.500s", r.Status, r.Body)
	}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); app.Settings.Newsletter.SenderName != "" {
		t.Fatal("a refused form saved the sender name")
	}

	good := url.Values{"senderName": {"Luna's letters"}, "replyTo": {"luna@creator.test"}, "defaultOn": {"on"}, "digestDay": {"2"}, "digestHour": {"7"}, "timeZone": {"Europe/Lisbon"}}
	r = send(t, f.creator, "POST", page, good.Encode())
	if r.Status != 303 || !strings.HasSuffix(r.Header.Get("Location"), page+"?notice=saved") {
		t.Fatalf("saved form: %d %s", r.Status, r.Header.Get("Location"))
	}
	got := newsletterScreen(t, f)
	want := store.NewsletterSettings{SenderName: "Luna's letters", ReplyTo: "luna@creator.test", DefaultOn: true, DigestDay: 2, DigestHour: 7}
	if got.Settings != want || got.TimeZone != "Europe/Lisbon" {
		t.Fatalf("saved %+v in %q", got.Settings, got.TimeZone)
	}
	// The composer's "Send by e-mail" now starts ticked.
	if r := send(t, f.creator, "GET", "/apps/demo/create-post", ""); !strings.Contains(r.Body, `name="newsletter" checked=""`) {
		t.Errorf("the composer does not start with the newsletter on")
	}

	// The JSON call: a refused hour is named; a good body saves.
	resp := send(t, f.creator, "PUT", "/api/studio/apps/demo/newsletter", `{"digestDay":1,"digestHour":24}`)
	if resp.Status != 400 || !strings.Contains(resp.Body, `"digestHour"`) {
		t.Fatalf("hour 24: %d %s", resp.Status, resp.Body)
	}
	resp = send(t, f.creator, "PUT", "/api/studio/apps/demo/newsletter", `{"senderName":"  Luna  ","digestDay":5,"digestHour":18,"timeZone":""}`)
	if resp.Status != 200 {
		t.Fatalf("PUT: %d %s", resp.Status, resp.Body)
	}
	n := newsletterOf(t, resp)
	if n.Settings != (store.NewsletterSettings{SenderName: "Luna", DigestDay: 5, DigestHour: 18}) || n.TimeZone != "" {
		t.Fatalf("PUT answered %+v %q", n.Settings, n.TimeZone)
	}
	if r := send(t, fan, "PUT", "/api/studio/apps/demo/newsletter", `{}`); r.Status != 403 {
		t.Errorf("a follower saved newsletter settings: %d", r.Status)
	}
}

// TestStudioNewsletterReport: the screen lists drafts, scheduled and
// mailed posts with their recipients by state and the unsubscribes their
// mail caused, and the members whose address is undeliverable with the
// last error; a test mail of a draft reaches the creator alone, marked as
// a test, and the draft stays a draft.
func TestStudioNewsletterReport(t *testing.T) {
	t.Parallel()
	f := newsletterServer(t)
	ts, ctx := f.ts, context.Background()

	mailed := f.mailPost(t, "Reportphrase mailed\n\nSecond line.")
	runNewsletterJobs(t, ts)
	body, _ := json.Marshal(map[string]any{"type": "POST", "communityId": f.cid, "content": "Reportphrase draft", "draft": true, "newsletter": true})
	draft := dataOf(f.creator.must(201, "POST", "/api/messages", string(body)))["id"].(string)
	body, _ = json.Marshal(map[string]any{"type": "POST", "communityId": f.cid, "content": "Not mailed", "newsletter": false})
	f.creator.must(201, "POST", "/api/messages", string(body))

	// One reader leaves from the mail; another's address is refused for good.
	var rec store.NewsletterRecipient
	if err := ts.store.DB().NewSelect().Model(&rec).Where("message_id = ? AND email = ?", mailed, subscriber).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if r := send(t, ts.as(t, ""), "POST", "/mail/unsubscribe/"+rec.UnsubscribeToken, "List-Unsubscribe=One-Click"); r.Status >= 400 {
		t.Fatalf("unsubscribe: %d", r.Status)
	}
	for i := 0; i < store.BounceLimit; i++ {
		if _, err := ts.store.RecordBounce(ctx, follower, "550 5.1.1 mailbox unknown", time.Now()); err != nil {
			t.Fatal(err)
		}
	}

	n := newsletterScreen(t, f)
	byID := map[string]store.NewsletterPostReport{}
	for _, p := range n.Posts {
		byID[p.MessageID] = p
		if p.Excerpt == "Not mailed" {
			t.Error("a published post that was not mailed is listed")
		}
	}
	st := recipientsOf(t, ts, mailed)
	m := byID[mailed]
	if m.State != store.PostPublished || m.Excerpt != "Reportphrase mailed" || m.Recipients != st["total"] || m.Sent != st[store.RecipientSent] ||
		m.Recipients == 0 || m.Unsubscribes != 1 || m.Failed != 0 || m.Pending != 0 {
		t.Errorf("mailed post %+v, recipients %v", m, st)
	}
	if d := byID[draft]; d.State != store.PostDraft || !d.Newsletter || d.Recipients != 0 {
		t.Errorf("draft %+v", d)
	}
	if len(n.Undeliverable) != 1 || n.Undeliverable[0].Email != follower || n.Undeliverable[0].Bounces != store.BounceLimit ||
		!strings.Contains(n.Undeliverable[0].LastError, "mailbox unknown") {
		t.Errorf("undeliverable %+v", n.Undeliverable)
	}
	if n.TestTo != "creator@demo.test" {
		t.Errorf("tests go to %q", n.TestTo)
	}
	page := send(t, f.creator, "GET", "/apps/demo/studio/newsletter", "")
	for _, want := range []string{"Reportphrase mailed", "Reportphrase draft", "Unsubscribed", "mailbox unknown", "Send a test to creator@demo.test"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the screen lacks %q", want)
		}
	}

	// The test mail, by the form: the creator alone gets it.
	before := f.mp.Total(t)
	r := send(t, f.creator, "POST", "/apps/demo/studio/newsletter/test", url.Values{"messageId": {draft}}.Encode())
	if r.Status != 303 || !strings.Contains(r.Header.Get("Location"), "notice=test-sent") {
		t.Fatalf("test form: %d %s", r.Status, r.Header.Get("Location"))
	}
	runNewsletterTests(t, ts)
	if got := f.mp.Total(t); got != before+1 {
		t.Fatalf("mailpit holds %d mails after the test, want %d", got, before+1)
	}
	if n := f.mailsWith(t, "creator@demo.test", "Reportphrase draft"); n != 1 {
		t.Fatalf("the creator got %d test mails", n)
	}
	for _, s := range f.mp.To(t, "creator@demo.test") {
		if strings.Contains(s.Subject, "Reportphrase draft") && !strings.HasPrefix(s.Subject, "[Test]") {
			t.Errorf("test mail subject %q", s.Subject)
		}
	}
	if got, _ := ts.store.MessageByID(ctx, draft); got.Hidden != store.HiddenDraft {
		t.Errorf("the test published the draft: hidden %q", got.Hidden)
	}
	// A post of another app, or none, is refused by name.
	resp := send(t, f.creator, "POST", "/api/studio/apps/demo/newsletter/test", `{"messageId":"nope"}`)
	if resp.Status != 400 || !strings.Contains(resp.Body, "Post not found") {
		t.Errorf("unknown post: %d %s", resp.Status, resp.Body)
	}
	f.creator.must(202, "POST", "/api/studio/apps/demo/newsletter/test", `{"messageId":"`+mailed+`"}`)
}

// newsletterScreen is the creator's GET of the newsletter call.
func newsletterScreen(t *testing.T, f *newsletterFixture) StudioNewsletter {
	t.Helper()
	r := send(t, f.creator, "GET", "/api/studio/apps/demo/newsletter", "")
	if r.Status != 200 {
		t.Fatalf("newsletter call: %d %s", r.Status, r.Body)
	}
	return newsletterOf(t, r)
}

func newsletterOf(t *testing.T, r response) StudioNewsletter {
	t.Helper()
	var env struct{ Data StudioNewsletter }
	if err := json.Unmarshal([]byte(r.Body), &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}

// send is one request as c: a form body (a=b&...) as a form, a JSON body
// as JSON; it answers whatever came back.
func send(t *testing.T, c *caller, method, path, body string) response {
	t.Helper()
	h := map[string]string{}
	if c.token != "" {
		h["Cookie"] = sessionCookie + "=" + c.token
	}
	if body == "" {
		return c.ts.do(t, method, path, nil, h)
	}
	h["Content-Type"] = "application/x-www-form-urlencoded"
	if strings.HasPrefix(body, "{") {
		h["Content-Type"] = "application/json"
	}
	return c.ts.do(t, method, path, strings.NewReader(body), h)
}

// runNewsletterTests works the queued test mails as the queue would.
func runNewsletterTests(t *testing.T, ts *testServer) {
	t.Helper()
	ctx := context.Background()
	var rows []store.JobOutbox
	if err := ts.store.DB().NewSelect().Model(&rows).Where("kind = ?", store.JobNewsletterTest).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no test mail queued")
	}
	w := &jobs.NewsletterTestWorker{Store: ts.store, Sender: ts.Mailer()}
	for _, r := range rows {
		var args jobs.NewsletterTestArgs
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
			t.Fatal(err)
		}
		if err := w.Send(ctx, args.NewsletterTestJob); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.store.DB().NewDelete().Model((*store.JobOutbox)(nil)).Where("id = ?", r.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
