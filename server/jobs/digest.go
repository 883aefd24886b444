package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"marquee/store"
)

// DigestInterval is how often the weekly digests are looked for: a digest
// goes out at most this late after its hour.
const DigestInterval = 10 * time.Minute

// DigestArgs writes the weekly digests that are due (store.QueueDigests);
// the send_mail jobs it queues send them.
type DigestArgs struct{}

func (DigestArgs) Kind() string { return "digest" }

type DigestWorker struct {
	river.WorkerDefaults[DigestArgs]
	Store *store.Storage
}

func (w *DigestWorker) Work(ctx context.Context, _ *river.Job[DigestArgs]) error {
	_, err := QueueDigests(ctx, w.Store, time.Now())
	return err
}

// QueueDigests writes the digests due at now in every app where a member
// takes one, and answers how many; tests call it as the worker does. A
// suspended or unpublished app mails no one.
func QueueDigests(ctx context.Context, st *store.Storage, now time.Time) (int, error) {
	ids, err := st.AppsWithDigests(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, id := range ids {
		app, err := st.AppByIDOrName(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return total, err
		}
		if app.Status == store.AppSuspended || app.Unpublished {
			// An unpublished app (issue 43 item 1) mails no digest either:
			// its members below staff may not open it.
			continue
		}
		n, err := st.QueueDigests(ctx, app, NewsletterAudienceOf(app, nil), now)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
