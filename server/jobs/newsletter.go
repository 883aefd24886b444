package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	gomail "github.com/wneessen/go-mail"

	"marquee/server/access"
	"marquee/server/mail"
	"marquee/store"
)

// NewsletterStartArgs selects the recipients of a published post that asks
// to be mailed (written with the publication, store.PublishMessage).
type NewsletterStartArgs struct{ store.NewsletterJob }

func (NewsletterStartArgs) Kind() string { return store.JobNewsletterStart }

// NewsletterSendArgs mails a post to its pending recipients.
type NewsletterSendArgs struct{ store.NewsletterJob }

func (NewsletterSendArgs) Kind() string { return store.JobNewsletterSend }

// Newsletter delivery settings.
const (
	// newsletterBatch is how many recipients are read at a time.
	newsletterBatch = 100
	// newsletterRunBudget is how long one run of the send job sends before
	// it snoozes and comes back (within river's job timeout; a shutdown
	// never waits long).
	newsletterRunBudget = 3 * time.Minute
	// NewsletterLease is how long a recipient may stay SENDING before its
	// worker is taken for dead (longer than an SMTP send may take).
	NewsletterLease = 2 * time.Minute
)

// NewsletterRetryDelay is the back-off after the nth temporary failure of
// a recipient: 1, 2, 4, 8 minutes.
func NewsletterRetryDelay(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	return time.Minute << (attempt - 1)
}

type NewsletterStartWorker struct {
	river.WorkerDefaults[NewsletterStartArgs]
	Store *store.Storage
}

func (w *NewsletterStartWorker) Work(ctx context.Context, job *river.Job[NewsletterStartArgs]) error {
	_, err := StartNewsletter(ctx, w.Store, job.Args.MessageID)
	return err
}

// NewsletterAudienceOf is who may read a mailed post: the app-wide
// subscription gate (access.Gated) and the post's own access setting.
// The one place the newsletter asks who may read a post.
func NewsletterAudienceOf(app *store.App, m *store.Message) store.NewsletterAudience {
	// The post's own access (store/message_access.go), on top of the
	// app-wide gate: a members' post goes to paying members only, a tier's
	// post to that tier and above; the staff read everything.
	a := store.NewsletterAudience{SubscribersOnly: access.Gated(app.Settings, store.RoleFollower, false)}
	if m != nil && m.AccessAudience == store.AccessMembers {
		a.SubscribersOnly, a.MinTierID = true, m.AccessMinTierID
	}
	return a
}

// StartNewsletter writes the recipients of a published post and queues the
// job that mails them; running it again adds no one and queues one more
// send job, which finds nothing left to send. It answers the recipients.
func StartNewsletter(ctx context.Context, st *store.Storage, messageID string) (int, error) {
	m, err := st.MessageByID(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil // deleted before it went out
	}
	if err != nil {
		return 0, err
	}
	if !m.Newsletter || m.Hidden != "" || m.Type != store.MessagePost {
		return 0, nil
	}
	app, err := st.AppByIDOrName(ctx, m.AppID)
	if err != nil {
		return 0, fmt.Errorf("newsletter %s: load app: %w", m.ID, err)
	}
	n, err := st.SelectNewsletterRecipients(ctx, m, NewsletterAudienceOf(app, m))
	if err != nil {
		return 0, err
	}
	return n, Enqueue(ctx, st.DB(), NewsletterSendArgs{store.NewsletterJob{MessageID: m.ID}})
}

type NewsletterSendWorker struct {
	river.WorkerDefaults[NewsletterSendArgs]
	Store  *store.Storage
	Sender *mail.Sender
	Logger *slog.Logger
}

// Timeout leaves the run budget room inside river's own limit.
func (w *NewsletterSendWorker) Timeout(*river.Job[NewsletterSendArgs]) time.Duration {
	return newsletterRunBudget + 2*time.Minute
}

func (w *NewsletterSendWorker) Work(ctx context.Context, job *river.Job[NewsletterSendArgs]) error {
	res, err := SendNewsletter(ctx, w.Store, w.Sender, job.Args.MessageID, NewsletterRun{Budget: newsletterRunBudget})
	if err != nil {
		return err
	}
	if res.Again > 0 {
		// Recipients wait for a retry (or the budget ran out): come back
		// then. A snooze is not a failed attempt.
		return river.JobSnooze(res.Again)
	}
	return nil
}

// NewsletterRun tunes one run of SendNewsletter.
type NewsletterRun struct {
	// Budget stops the run after this long (0: until nothing is ready).
	Budget time.Duration
	// Now is the run's clock (tests move it past back-offs); zero is
	// time.Now.
	Now func() time.Time
	// Lease: recipients SENDING since before now-Lease are taken as
	// interrupted; 0 is NewsletterLease.
	Lease time.Duration
}

// NewsletterResult is what one run did.
type NewsletterResult struct {
	Sent, Failed, Retried, Skipped, Interrupted int
	// Again is when the job should run again (0: nothing is left).
	Again time.Duration
}

// SendNewsletter mails a post to its pending recipients, paced at the
// deployment's NEWSLETTER_RATE. Each recipient is claimed (SENDING) just
// before its SMTP transaction and marked after it, so concurrent runs and
// a run after a crash never send anyone the post twice. A temporary
// failure (SMTP 4xx, a connection that failed) is retried with back-off
// up to store.MaxSendAttempts; a permanent one (5xx) counts a bounce
// against the address, which after store.BounceLimit of them is
// undeliverable and skipped by every later send.
func SendNewsletter(ctx context.Context, st *store.Storage, sender *mail.Sender, messageID string, run NewsletterRun) (NewsletterResult, error) {
	var res NewsletterResult
	now := run.Now
	if now == nil {
		now = time.Now
	}
	lease := run.Lease
	if lease == 0 {
		lease = NewsletterLease
	}
	started := now()
	var err error
	if res.Interrupted, err = st.InterruptStale(ctx, messageID, started.Add(-lease)); err != nil {
		return res, err
	}
	m, err := st.MessageByID(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	post, err := newsletterPost(ctx, st, m)
	if err != nil {
		return res, err
	}
	var interval time.Duration
	if sender.NewsletterRate > 0 {
		interval = time.Duration(float64(time.Second) / sender.NewsletterRate)
	}
	for {
		batch, dead, err := st.NewsletterBatch(ctx, messageID, now(), newsletterBatch)
		if err != nil {
			return res, err
		}
		if len(batch) == 0 {
			break
		}
		for _, r := range batch {
			if dead[r.Email] {
				if err := st.SkipRecipient(ctx, r.ID); err != nil {
					return res, err
				}
				res.Skipped++
				continue
			}
			if interval > 0 {
				slot, err := st.ReserveSendSlot(ctx, interval, time.Now())
				if err != nil {
					return res, err
				}
				if err := sleepUntil(ctx, slot); err != nil {
					return res, err
				}
			}
			claimed, err := st.ClaimRecipient(ctx, r.ID, now())
			if err != nil {
				return res, err
			}
			if !claimed {
				continue // another run took it
			}
			if err := sendToRecipient(ctx, st, sender, post, &r, now(), &res); err != nil {
				return res, err
			}
		}
		if run.Budget > 0 && now().Sub(started) > run.Budget {
			res.Again = time.Second
			return res, nil
		}
	}
	next, err := st.NewsletterWaiting(ctx, messageID)
	if err != nil || next == nil {
		return res, err
	}
	res.Again = max(next.Sub(now()), time.Second)
	return res, nil
}

// sendToRecipient sends one claimed recipient the post and records how it
// went; only a failure to record is an error of the run.
func sendToRecipient(ctx context.Context, st *store.Storage, sender *mail.Sender, post mail.PostMail, r *store.NewsletterRecipient, now time.Time, res *NewsletterResult) error {
	post.ID, post.To, post.UnsubscribeToken = r.ID, r.Email, r.UnsubscribeToken
	msg, err := sender.RenderPost(post)
	if err == nil {
		err = sender.Transport.Send(ctx, msg)
	}
	if err == nil {
		res.Sent++
		return st.SetRecipientState(ctx, r.ID, store.RecipientSent, "", nil, now)
	}
	text := err.Error()
	if len(text) > 500 {
		text = text[:500]
	}
	if Permanent(err) {
		res.Failed++
		if _, berr := st.RecordBounce(ctx, r.Email, text, now); berr != nil {
			return berr
		}
		return st.SetRecipientState(ctx, r.ID, store.RecipientFailed, text, nil, now)
	}
	attempts := r.Attempts + 1 // ClaimRecipient counted this one
	if attempts >= store.MaxSendAttempts {
		res.Failed++
		return st.SetRecipientState(ctx, r.ID, store.RecipientFailed, text, nil, now)
	}
	res.Retried++
	retry := now.Add(NewsletterRetryDelay(attempts)).UTC()
	return st.SetRecipientState(ctx, r.ID, store.RecipientPending, text, &retry, now)
}

// Permanent reports whether a send failed for good: the SMTP server
// answered 5xx. Anything else (4xx, a connection refused or cut) may pass
// on a later try.
func Permanent(err error) bool {
	var se *gomail.SendError
	if errors.As(err, &se) {
		if code := se.ErrorCode(); code >= 500 && code < 600 {
			return true
		}
		return !se.IsTemp() && se.ErrorCode() == 0 && se.Reason == gomail.ErrSMTPRcptTo
	}
	return false
}

// newsletterPost is what every recipient's mail of a post shares.
func newsletterPost(ctx context.Context, st *store.Storage, m *store.Message) (mail.PostMail, error) {
	app, err := st.AppByIDOrName(ctx, m.AppID)
	if err != nil {
		return mail.PostMail{}, fmt.Errorf("newsletter %s: load app: %w", m.ID, err)
	}
	brand, err := st.MailBrandOf(ctx, m.AppID)
	if err != nil {
		return mail.PostMail{}, err
	}
	view, err := st.MessageView(ctx, m, 0)
	if err != nil {
		return mail.PostMail{}, err
	}
	p := mail.PostMail{Brand: brand, Settings: app.Settings.Newsletter, Author: view.Sender.Username, Content: m.Content,
		PostPath: "/apps/" + app.Name + "/posts/" + m.ID}
	for _, a := range view.Attachments {
		if a.Media.Type != store.MediaImage || a.Media.SignedURL == "" {
			continue
		}
		// A locked post's files open only for a signed-in reader (a mail
		// client loading images has no session), so the mail says where
		// they are rather than showing broken images.
		if m.AccessAudience != "" && m.AccessAudience != store.AccessPublic {
			p.PicturesOnSite++
			continue
		}
		p.Images = append(p.Images, a.Media.SignedURL)
	}
	return p, nil
}

// NewsletterTestArgs mails a post, marked as a test, to the creator or
// admin who asked for it from the studio (store.QueueNewsletterTest).
type NewsletterTestArgs struct{ store.NewsletterTestJob }

func (NewsletterTestArgs) Kind() string { return store.JobNewsletterTest }

type NewsletterTestWorker struct {
	river.WorkerDefaults[NewsletterTestArgs]
	Store  *store.Storage
	Sender *mail.Sender
}

// Work sends the test; a post deleted meanwhile sends nothing. A failed
// send is retried by river like any job.
func (w *NewsletterTestWorker) Work(ctx context.Context, job *river.Job[NewsletterTestArgs]) error {
	return w.Send(ctx, job.Args.NewsletterTestJob)
}

// Send renders and sends one test mail.
func (w *NewsletterTestWorker) Send(ctx context.Context, job store.NewsletterTestJob) error {
	m, err := w.Store.MessageByID(ctx, job.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	msg, err := NewsletterTestMail(ctx, w.Store, w.Sender, m, job.To)
	if err != nil {
		return err
	}
	if err := w.Sender.Transport.Send(ctx, msg); err != nil {
		return fmt.Errorf("newsletter test of %s: %w", m.ID, err)
	}
	return nil
}

// NewsletterTestMail renders a post as its newsletter, marked as a test,
// for the address to (the creator's own, before sending).
func NewsletterTestMail(ctx context.Context, st *store.Storage, sender *mail.Sender, m *store.Message, to string) (*mail.Message, error) {
	p, err := newsletterPost(ctx, st, m)
	if err != nil {
		return nil, err
	}
	p.ID, p.To, p.Test = store.NewID(), to, true
	return sender.RenderPost(p)
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
