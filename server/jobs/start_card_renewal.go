package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"marquee/store"
)

// StartCardRenewalArgs asks for the provider subscription (Stripe Billing)
// that renews the membership a card order just bought. It is enqueued in
// the transaction that marks the order PAID, whichever way the plan was
// bought (the Subscribe button or the ordinary cart checkout), so the
// membership never depends on a call made after the commit.
type StartCardRenewalArgs struct {
	OrderID string `json:"orderId"`
}

func (StartCardRenewalArgs) Kind() string { return store.JobStartCardRenewal }

// CardRenewals is the card provider's side of the job (stripe.Provider).
// StartRenewals must be idempotent: a retry after a failure halfway (the
// provider made the subscription, the database did not record it) ends
// with the one subscription, linked once.
type CardRenewals interface {
	// refused is how many earlier attempts the provider answered with a
	// failure it keeps for the idempotency key (payments.ErrStoredFailure).
	StartRenewals(ctx context.Context, orderID string, refused int) error
}

// StartCardRenewalWorker makes the subscription. A failure returns an error,
// so river retries it with backoff (up to its default 25 attempts); the
// member keeps access meanwhile, as the paid period is already recorded.
type StartCardRenewalWorker struct {
	river.WorkerDefaults[StartCardRenewalArgs]
	Renewals CardRenewals
}

func (w *StartCardRenewalWorker) Work(ctx context.Context, job *river.Job[StartCardRenewalArgs]) error {
	// Stripe replays a failure to its key: each attempt it refused moves
	// the next attempt to a fresh key (refusedAttempts).
	refused := refusedAttempts(job.JobRow)
	if err := w.Renewals.StartRenewals(ctx, job.Args.OrderID, refused); err != nil {
		return fmt.Errorf("start card renewal of order %s: %w", job.Args.OrderID, err)
	}
	return nil
}
