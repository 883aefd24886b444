package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
)

// ExpireOrdersArgs asks for unpaid orders past their hold to be cancelled.
type ExpireOrdersArgs struct{}

func (ExpireOrdersArgs) Kind() string { return "expire_orders" }

// orderExpirer is the part of the store this job needs.
type orderExpirer interface {
	ExpirePendingOrders(ctx context.Context, olderThan time.Duration) (int, error)
	ExpirePendingTopups(ctx context.Context, olderThan time.Duration) (int, error)
}

// ExpireOrdersWorker cancels PENDING orders older than After (ORDER_EXPIRY)
// and gives their stock back, and expires wallet top-ups unpaid for a day. Each order is its own conditional transition,
// so a payment landing at the same moment is never lost, and two runs of the
// job at once expire each order once.
type ExpireOrdersWorker struct {
	river.WorkerDefaults[ExpireOrdersArgs]
	Orders orderExpirer
	After  time.Duration
	Logger *slog.Logger
}

func (w *ExpireOrdersWorker) Work(ctx context.Context, _ *river.Job[ExpireOrdersArgs]) error {
	n, err := w.Orders.ExpirePendingOrders(ctx, w.After)
	if err != nil {
		return fmt.Errorf("expire orders: %w", err)
	}
	if n > 0 {
		w.Logger.Info("expired unpaid orders", "count", n)
	}
	// Wallet top-ups left unpaid expire too (after a day): a payment that
	// lands later is refunded rather than credited.
	n, err = w.Orders.ExpirePendingTopups(ctx, 0)
	if err != nil {
		return fmt.Errorf("expire top-ups: %w", err)
	}
	if n > 0 {
		w.Logger.Info("expired unpaid top-ups", "count", n)
	}
	return nil
}
