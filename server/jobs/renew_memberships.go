package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"marquee/store"
)

// RenewMembershipsArgs asks for due memberships to be renewed, moved into
// their grace period, or ended (store.RenewDueSubscriptions).
type RenewMembershipsArgs struct{}

func (RenewMembershipsArgs) Kind() string { return "renew_memberships" }

// RenewMembershipsInterval: how often the job runs. Wallet memberships
// renew store.DefaultRenewLead (an hour) before they end, so a run every
// few minutes never leaves a paying member at the gate.
const RenewMembershipsInterval = 5 * time.Minute

// membershipRenewer is the part of the store this job needs.
type membershipRenewer interface {
	RenewDueSubscriptions(ctx context.Context, opt store.RenewOptions) (store.RenewResult, error)
}

// RenewMembershipsWorker charges wallet renewals and ends lapsed
// memberships. It is idempotent: every change in the store is conditional
// on the state it read and every charge names its period, so a retry, or a
// second server running it at the same moment, charges nobody twice.
type RenewMembershipsWorker struct {
	river.WorkerDefaults[RenewMembershipsArgs]
	Store  membershipRenewer
	Grace  time.Duration
	Logger *slog.Logger
	// Now is for tests; nil means time.Now.
	Now func() time.Time
}

func (w *RenewMembershipsWorker) Work(ctx context.Context, _ *river.Job[RenewMembershipsArgs]) error {
	now := time.Now().UTC()
	if w.Now != nil {
		now = w.Now()
	}
	res, err := w.Store.RenewDueSubscriptions(ctx, store.RenewOptions{Now: now, Grace: w.Grace})
	if err != nil {
		return fmt.Errorf("renew memberships: %w", err)
	}
	if res != (store.RenewResult{}) && w.Logger != nil {
		w.Logger.Info("memberships", "renewed", res.Renewed, "failed", res.Failed, "ended", res.Ended)
	}
	return nil
}
