package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"marquee/store"
)

// PruneArgs is the hourly clean-up of old notifications, failed push
// deliveries and expired sessions (finished jobs are river's own cleaner's,
// JOB_RETENTION).
type PruneArgs struct{}

func (PruneArgs) Kind() string { return "prune" }

// PruneInterval is how often Prune runs; DefaultNotificationRetention how
// long notifications are kept unless NOTIFICATION_RETENTION says otherwise.
const (
	PruneInterval                = time.Hour
	DefaultNotificationRetention = 90 * 24 * time.Hour
)

type PruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	Store     *store.Storage
	Retention store.Retention
	Logger    *slog.Logger
}

func (w *PruneWorker) Timeout(*river.Job[PruneArgs]) time.Duration { return 10 * time.Minute }

func (w *PruneWorker) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	r := w.Retention
	if r.Notifications <= 0 {
		r.Notifications = DefaultNotificationRetention
	}
	p, err := w.Store.Prune(ctx, r, time.Now().UTC())
	if err != nil {
		return err
	}
	if w.Logger != nil && p != (store.Pruned{}) {
		w.Logger.Info("pruned", "notifications", p.Notifications, "push_failures", p.PushFailures, "sessions", p.Sessions)
	}
	return nil
}
