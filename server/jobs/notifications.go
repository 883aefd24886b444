package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/push"
	"marquee/store"
)

// FanOutArgs is an audience notice (store.Notify writes it to the outbox in
// the transaction of the post or event that caused it).
type FanOutArgs struct{ store.Notice }

func (FanOutArgs) Kind() string { return store.JobNotifyFanOut }

// FanOutWorker writes one notification per member of the audience, and
// their push job, in one transaction; running twice writes once.
type FanOutWorker struct {
	river.WorkerDefaults[FanOutArgs]
	Store *store.Storage
}

// FanOutTimeout bounds one fan-out: writing a notification per member of
// a large audience. A run cut short is retried; it writes once.
const FanOutTimeout = 2 * time.Minute

func (w *FanOutWorker) Timeout(*river.Job[FanOutArgs]) time.Duration { return FanOutTimeout }

func (w *FanOutWorker) Work(ctx context.Context, job *river.Job[FanOutArgs]) error {
	if _, err := w.Store.FanOut(ctx, job.Args.Notice); err != nil {
		return fmt.Errorf("fan out %s: %w", job.Args.Notice.Kind, err)
	}
	return nil
}

// PushArgs names notifications to send as web push.
type PushArgs struct{ store.PushJob }

func (PushArgs) Kind() string { return store.JobPushNotifications }

// PushWorker sends notifications to their recipients' push subscriptions;
// subscriptions the push service reports gone are deleted.
type PushWorker struct {
	river.WorkerDefaults[PushArgs]
	Store  *store.Storage
	Sender *push.Sender
}

// PushTimeout bounds one push job (a batch of notifications, each to its
// recipient's devices; one request to a push service is itself bounded by
// the sender's client, 15 s).
const PushTimeout = 2 * time.Minute

func (w *PushWorker) Timeout(*river.Job[PushArgs]) time.Duration { return PushTimeout }

func (w *PushWorker) Work(ctx context.Context, job *river.Job[PushArgs]) error {
	rows, err := w.Store.NotificationsByID(ctx, job.Args.IDs)
	if err != nil {
		return err
	}
	if _, err := w.Sender.Deliver(ctx, rows); err != nil {
		return fmt.Errorf("push %d notifications: %w", len(rows), err)
	}
	return nil
}
