package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/server/mail"
	"marquee/server/mail/mailpittest"
	"marquee/store"
)

// runNewsletterJobs runs the newsletter jobs waiting in the outbox as the
// queue's workers would (each once) and answers how many ran.
func runNewsletterJobs(t *testing.T, ts *testServer) int {
	t.Helper()
	ctx := context.Background()
	ran := 0
	for {
		var rows []store.JobOutbox
		if err := ts.store.DB().NewSelect().Model(&rows).Where("kind IN (?)", bun.List([]string{store.JobNewsletterStart, store.JobNewsletterSend})).
			Order("id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			return ran
		}
		for _, r := range rows {
			var args store.NewsletterJob
			if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
				t.Fatal(err)
			}
			var err error
			if r.Kind == store.JobNewsletterStart {
				_, err = jobs.StartNewsletter(ctx, ts.store, args.MessageID)
			} else {
				_, err = jobs.SendNewsletter(ctx, ts.store, ts.Mailer(), args.MessageID, jobs.NewsletterRun{})
			}
			if err != nil {
				t.Fatalf("%s: %v", r.Kind, err)
			}
			if _, err := ts.store.DB().NewDelete().Model((*store.JobOutbox)(nil)).Where("id = ?", r.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			ran++
		}
	}
}

type newsletterFixture struct {
	ts      *testServer
	mp      *mailpittest.Mailpit
	app     *store.App
	cid     string
	creator *caller
}

func newsletterServer(t *testing.T, mailpitArgs ...string) *newsletterFixture {
	t.Helper()
	mp := mailpittest.Start(t, mailpitArgs...)
	ts := newTestServerWith(t, demoDB(t), func(c *Config) { c.SMTPURL, c.MailFrom = mp.SMTPURL, "Ops <mail@marquee.test>" })
	ctx := context.Background()
	app, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	comm, err := ts.store.CommunityOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	return &newsletterFixture{ts: ts, mp: mp, app: app, cid: comm.ID, creator: ts.as(t, "creator@demo.test")}
}

// mailPost publishes a post with the newsletter on and answers its id.
func (f *newsletterFixture) mailPost(t *testing.T, content string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"type": "POST", "communityId": f.cid, "content": content, "newsletter": true})
	return dataOf(f.creator.must(201, "POST", "/api/messages", string(body)))["id"].(string)
}

func (f *newsletterFixture) mailsWith(t *testing.T, addr, phrase string) int {
	t.Helper()
	n := 0
	for _, s := range f.mp.To(t, addr) {
		if strings.Contains(s.Subject, phrase) {
			n++
		}
	}
	return n
}

// recipientsOf counts a post's recipients by state.
func recipientsOf(t *testing.T, ts *testServer, postID string) map[string]int {
	t.Helper()
	var rows []store.NewsletterRecipient
	if err := ts.store.DB().NewSelect().Model(&rows).Where("message_id = ?", postID).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{"total": len(rows)}
	for _, r := range rows {
		out[r.State]++
	}
	return out
}

// TestNewsletterReachesReadersOnce: a post published with "newsletter":
// true reaches every member who may read it once (not its author, not a
// visitor without membership), however often the jobs run, with fifty
// sends at once; the mail is the app's (name, colour, List-Id, the
// creator's Reply-To, MAIL_FROM's address), has text and HTML with the
// post's text, its images at absolute URLs, links to the post and its
// comments, and RFC 8058 one-click unsubscribe, which stops the next one.
// In a gated app a follower without a subscription gets nothing.
func TestNewsletterReachesReadersOnce(t *testing.T) {
	t.Parallel()
	f := newsletterServer(t)
	ts, mp, ctx := f.ts, f.mp, context.Background()
	settings := store.NewsletterSettings{SenderName: "Luna's letters", ReplyTo: "luna@creator.test"}
	if err := ts.store.SetNewsletterSettings(ctx, f.app.ID, "", settings); err != nil {
		t.Fatal(err)
	}
	id := f.mailPost(t, "Letterphrase one\n\nA second paragraph.")
	if n := runNewsletterJobs(t, ts); n != 2 {
		t.Fatalf("ran %d newsletter jobs, want start and send", n)
	}
	readers := []string{subscriber, follower, "admin@demo.test", "moderator@demo.test"}
	for _, addr := range readers {
		if n := f.mailsWith(t, addr, "Letterphrase one"); n != 1 {
			t.Errorf("%s got %d mails, want 1", addr, n)
		}
	}
	for _, addr := range []string{"creator@demo.test", "member@demo.test"} {
		if n := f.mailsWith(t, addr, "Letterphrase"); n != 0 {
			t.Errorf("%s got %d mails, want none", addr, n)
		}
	}
	st := recipientsOf(t, ts, id)
	if st["total"] == 0 || st[store.RecipientSent] != st["total"] {
		t.Fatalf("recipients %v", st)
	}
	// The jobs again, as after a retry: nothing more.
	if _, err := jobs.StartNewsletter(ctx, ts.store, id); err != nil {
		t.Fatal(err)
	}
	runNewsletterJobs(t, ts)
	total := mp.Total(t)
	if total != st["total"] {
		t.Fatalf("mailpit holds %d mails for %d recipients", total, st["total"])
	}

	msg := mp.Message(t, mp.To(t, subscriber)[0].ID)
	if msg.From.Address != "mail@marquee.test" || msg.From.Name != "Luna's letters" || !strings.Contains(msg.Subject, "Letterphrase one") {
		t.Errorf("from %+v subject %q", msg.From, msg.Subject)
	}
	post := "http://main.test/apps/demo/posts/" + id
	for _, want := range []string{"Letterphrase one", "A second paragraph.", post, post + "#comments", "Unsubscribe from this newsletter"} {
		if !strings.Contains(msg.HTML, want) || (want != "Unsubscribe from this newsletter" && !strings.Contains(msg.Text, want)) {
			t.Errorf("mail lacks %q", want)
		}
	}
	if !strings.Contains(msg.HTML, "<table") || !strings.Contains(msg.HTML, `color-scheme`) {
		t.Error("the HTML part is not the mail layout")
	}
	if rt := netmail.Header(msg.Headers).Get("Reply-To"); !strings.Contains(rt, "luna@creator.test") {
		t.Errorf("Reply-To %q", rt)
	}
	if lid := netmail.Header(msg.Headers).Get("List-Id"); !strings.Contains(lid, "<demo.newsletter.main.test>") {
		t.Errorf("List-Id %q", lid)
	}
	lu := netmail.Header(msg.Headers).Get("List-Unsubscribe")
	if !strings.HasPrefix(lu, "<http://main.test/mail/unsubscribe/") || netmail.Header(msg.Headers).Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Fatalf("unsubscribe headers %q", lu)
	}

	// A seeded post with a picture, mailed: the picture at its absolute URL.
	var withImage store.Message
	if err := ts.store.DB().NewSelect().Model(&withImage).Where("app_id = ? AND type = ? AND hidden = '' AND id IN (SELECT message_id FROM message_attachments)", f.app.ID, store.MessagePost).
		Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.store.DB().NewUpdate().Model((*store.Message)(nil)).Set("newsletter = true").Where("id = ?", withImage.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.StartNewsletter(ctx, ts.store, withImage.ID); err != nil {
		t.Fatal(err)
	}
	runNewsletterJobs(t, ts)
	img := mp.WaitFor(t, "admin@demo.test", 2)
	if !strings.Contains(img.HTML, `<img src="http://main.test/media/`) {
		t.Errorf("no absolute image in %.600s", img.HTML)
	}

	// One-click unsubscribe from the mail stops the next newsletter.
	unsub := strings.TrimSuffix(strings.TrimPrefix(lu, "<http://main.test"), ">")
	if res := ts.do(t, "POST", unsub, strings.NewReader("List-Unsubscribe=One-Click"), formHeaders); res.Status != http.StatusOK {
		t.Fatalf("one-click: %d %s", res.Status, res.Body)
	}
	if res := ts.do(t, "GET", unsub, nil, nil); !strings.Contains(res.Body, "newsletter") {
		t.Errorf("unsubscribe page does not name the newsletter")
	}

	// Fifty sends of the next post at once: each member gets it once.
	id2 := f.mailPost(t, "Letterphrase two")
	if _, err := jobs.StartNewsletter(ctx, ts.store, id2); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := jobs.SendNewsletter(ctx, ts.store, ts.Mailer(), id2, jobs.NewsletterRun{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	runNewsletterJobs(t, ts)
	for _, addr := range readers[1:] {
		if n := f.mailsWith(t, addr, "Letterphrase two"); n != 1 {
			t.Errorf("%s got %d mails of the second post, want 1", addr, n)
		}
	}
	if n := f.mailsWith(t, subscriber, "Letterphrase two"); n != 0 {
		t.Errorf("the unsubscribed member got %d mails", n)
	}
	st2 := recipientsOf(t, ts, id2)
	if st2[store.RecipientSent] != st2["total"] || st2["total"] != st["total"]-1 {
		t.Errorf("second post's recipients %v (first %v)", st2, st)
	}

	// A gated app: only members whose subscription is valid (and staff).
	if _, err := ts.store.DB().NewUpdate().Model((*store.App)(nil)).Where("id = ?", f.app.ID).
		Set("settings = ?", gatedSettings(f.app.Settings)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ts.store.InvalidateLanding(ctx, f.app.ID)
	if _, err := ts.store.SetEmailPreferences(ctx, f.app.ID, ts.userID(t, subscriber), false, nil); err != nil {
		t.Fatal(err)
	}
	f.mailPost(t, "Letterphrase gated")
	runNewsletterJobs(t, ts)
	if n := f.mailsWith(t, follower, "Letterphrase gated"); n != 0 {
		t.Errorf("a follower without a subscription got the gated post")
	}
	if n := f.mailsWith(t, subscriber, "Letterphrase gated"); n != 1 {
		t.Errorf("the subscriber got %d mails of the gated post", n)
	}
}

func gatedSettings(s store.AppSettings) store.AppSettings {
	s.Features.SubscriptionGating.Enabled = true
	s.Features.SubscriptionGating.Settings.Required = true
	return s
}

// crashingTransport sends through SMTP and, at the n-th mail, lets it be
// delivered and then fails as a process killed before it recorded the
// send would: the worst moment for "sent once".
type crashingTransport struct {
	mail.Transport
	mu      sync.Mutex
	n, sent int
}

var errKilled = errors.New("killed mid-send")

func (c *crashingTransport) Send(ctx context.Context, m *mail.Message) error {
	if err := c.Transport.Send(ctx, m); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent++
	if c.sent == c.n {
		panic(errKilled)
	}
	return nil
}

// TestNewsletterResumesAfterAKillWithoutSendingTwice: a send killed right
// after the SMTP server took a mail (before the send was recorded) resumes
// with nobody mailed twice: the one in flight is reported as interrupted,
// everyone else gets the post once.
func TestNewsletterResumesAfterAKillWithoutSendingTwice(t *testing.T) {
	t.Parallel()
	f := newsletterServer(t)
	ts, mp, ctx := f.ts, f.mp, context.Background()
	id := f.mailPost(t, "Killphrase")
	if _, err := jobs.StartNewsletter(ctx, ts.store, id); err != nil {
		t.Fatal(err)
	}
	total := recipientsOf(t, ts, id)["total"]
	if total < 4 {
		t.Fatalf("only %d recipients", total)
	}
	sender := ts.Mailer()
	crashing := *sender
	crashing.Transport = &crashingTransport{Transport: sender.Transport, n: 3}
	func() {
		defer func() {
			if r := recover(); r != errKilled {
				t.Fatalf("the send was not killed: %v", r)
			}
		}()
		_, _ = jobs.SendNewsletter(ctx, ts.store, &crashing, id, jobs.NewsletterRun{})
	}()
	if st := recipientsOf(t, ts, id); st[store.RecipientSending] != 1 || st[store.RecipientSent] != 2 {
		t.Fatalf("after the kill: %v", st)
	}
	// The restarted job (its lease over) finishes the send.
	res, err := jobs.SendNewsletter(ctx, ts.store, sender, id, jobs.NewsletterRun{Lease: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	st := recipientsOf(t, ts, id)
	if res.Interrupted != 1 || st[store.RecipientFailed] != 1 || st[store.RecipientSent] != total-1 {
		t.Fatalf("resumed: %+v, recipients %v", res, st)
	}
	if got := mp.Total(t); got != total {
		t.Fatalf("mailpit holds %d mails for %d recipients (the interrupted one was delivered once)", got, total)
	}
	var rows []store.NewsletterRecipient
	if err := ts.store.DB().NewSelect().Model(&rows).Where("message_id = ?", id).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if n := f.mailsWith(t, r.Email, "Killphrase"); n != 1 {
			t.Errorf("%s got %d mails", r.Email, n)
		}
	}
}

// TestNewsletterFailures: a permanent failure (SMTP 5xx) is counted
// against the address and, the BounceLimit-th time, makes it
// undeliverable: the next newsletter skips it. A temporary one (4xx) is
// retried with back-off and delivered once the server takes mail again.
func TestNewsletterFailures(t *testing.T) {
	t.Parallel()
	f := newsletterServer(t, "--smtp-allowed-recipients", `@demo\.test$`, "--enable-chaos")
	ts, mp, ctx := f.ts, f.mp, context.Background()
	if _, err := ts.store.DB().NewUpdate().Table("users").Set("email = ?", "gone@bounce.test").
		Where("email = ?", follower).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= store.BounceLimit; i++ {
		id := f.mailPost(t, "Bouncephrase")
		runNewsletterJobs(t, ts)
		var r store.NewsletterRecipient
		if err := ts.store.DB().NewSelect().Model(&r).Where("message_id = ? AND email = ?", id, "gone@bounce.test").Scan(ctx); err != nil {
			t.Fatalf("post %d: the address was not selected: %v", i, err)
		}
		if r.State != store.RecipientFailed || !strings.Contains(r.LastError, "5") {
			t.Fatalf("post %d: %s %q", i, r.State, r.LastError)
		}
	}
	var b store.MailBounce
	if err := ts.store.DB().NewSelect().Model(&b).Where("email = ?", "gone@bounce.test").Scan(ctx); err != nil || !b.Undeliverable || b.Bounces != store.BounceLimit {
		t.Fatalf("bounce record %+v %v", b, err)
	}
	id := f.mailPost(t, "Bouncephrase after")
	runNewsletterJobs(t, ts)
	if n, _ := ts.store.DB().NewSelect().Model((*store.NewsletterRecipient)(nil)).Where("message_id = ? AND email = ?", id, "gone@bounce.test").Count(ctx); n != 0 {
		t.Fatal("an undeliverable address was mailed again")
	}
	if st := recipientsOf(t, ts, id); st[store.RecipientSent] != st["total"] || st["total"] == 0 {
		t.Fatalf("others: %v", st)
	}

	// 451 for every recipient: retried later, then delivered once.
	mp.Chaos(t, 451, 100)
	id = f.mailPost(t, "Retryphrase")
	if _, err := jobs.StartNewsletter(ctx, ts.store, id); err != nil {
		t.Fatal(err)
	}
	res, err := jobs.SendNewsletter(ctx, ts.store, ts.Mailer(), id, jobs.NewsletterRun{})
	if err != nil {
		t.Fatal(err)
	}
	st := recipientsOf(t, ts, id)
	if res.Retried != st["total"] || res.Sent != 0 || st[store.RecipientPending] != st["total"] || res.Again < 30*time.Second {
		t.Fatalf("under 451: %+v %v", res, st)
	}
	mp.Chaos(t, 0, 0)
	// Before the back-off is over nothing is tried; after it, all go.
	if res, _ := jobs.SendNewsletter(ctx, ts.store, ts.Mailer(), id, jobs.NewsletterRun{}); res.Sent != 0 {
		t.Fatalf("sent before the back-off: %+v", res)
	}
	later := func() time.Time { return time.Now().Add(jobs.NewsletterRetryDelay(1) + time.Second) }
	res, err = jobs.SendNewsletter(ctx, ts.store, ts.Mailer(), id, jobs.NewsletterRun{Now: later})
	if err != nil || res.Sent != st["total"] || res.Again != 0 {
		t.Fatalf("after the back-off: %+v %v", res, err)
	}
	if n := f.mailsWith(t, subscriber, "Retryphrase"); n != 1 {
		t.Fatalf("subscriber got %d", n)
	}
}
