package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/mail"
	"marquee/store"
)

// SendMailArgs names the mail to send (store.QueueMail writes it to the
// outbox with the mail, in the transaction of what the mail announces).
type SendMailArgs struct{ store.SendMailJob }

func (SendMailArgs) Kind() string { return store.JobSendMail }

// SendMailWorker renders a queued mail in its app's look and sends it.
// River retries a failed send (the SMTP server was down); a mail already
// sent is not sent again.
type SendMailWorker struct {
	river.WorkerDefaults[SendMailArgs]
	Store  *store.Storage
	Sender *mail.Sender
}

func (w *SendMailWorker) Work(ctx context.Context, job *river.Job[SendMailArgs]) error {
	return SendMail(ctx, w.Store, w.Sender, job.Args.MailID)
}

// SendMail sends one queued mail unless it went out already; tests call it
// as the worker does.
func SendMail(ctx context.Context, st *store.Storage, sender *mail.Sender, id string) error {
	m, err := st.MailByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the account was deleted with its mail
	}
	if err != nil {
		return err
	}
	if m.SentAt != nil {
		return nil
	}
	var content store.MailContent
	if err := json.Unmarshal([]byte(m.Content), &content); err != nil {
		return fmt.Errorf("read mail %s: %w", m.ID, err)
	}
	appID := ""
	if m.AppID != nil {
		appID = *m.AppID
	}
	brand, err := st.MailBrandOf(ctx, appID)
	if errors.Is(err, store.ErrNotFound) {
		brand, err = st.MailBrandOf(ctx, "")
	}
	if err != nil {
		return err
	}
	msg, err := sender.Render(m, content, brand)
	if err != nil {
		return err
	}
	if err := sender.Transport.Send(ctx, msg); err != nil {
		return fmt.Errorf("send mail %s to its recipient: %w", m.Kind, err)
	}
	return st.MarkMailSent(ctx, m.ID, time.Now().UTC())
}
