package jobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"marquee/server/payments"
	"marquee/store"
)

// RefundStrayPaymentArgs asks for a payment its order could not take (it
// arrived for a cancelled, expired or already paid order, or was not the
// order's own payment) to be given back. It is written in the transaction
// that recorded the payment (store.PayOrderTx), so no such money is kept.
type RefundStrayPaymentArgs store.StrayPayment

func (RefundStrayPaymentArgs) Kind() string { return store.JobRefundStrayPayment }

// CancelPaymentArgs asks for the open card payment of a cancelled or
// expired order to be cancelled, so a payment form left open cannot pay it.
// It is written in the cancelling transaction.
type CancelPaymentArgs store.CancelPaymentArgs

func (CancelPaymentArgs) Kind() string { return store.JobCancelPayment }

// CancelPaymentWorker cancels; an error is retried by river.
type CancelPaymentWorker struct {
	river.WorkerDefaults[CancelPaymentArgs]
	Refunds StrayRefunds
}

func (w *CancelPaymentWorker) Work(ctx context.Context, job *river.Job[CancelPaymentArgs]) error {
	if err := w.Refunds.CancelPayment(ctx, store.CancelPaymentArgs(job.Args)); err != nil {
		return fmt.Errorf("cancel payment %s of order %s: %w", job.Args.Ref, job.Args.OrderID, err)
	}
	return nil
}

// StrayRefunds gives a stray payment back at its provider (the server,
// which knows the providers). It must be idempotent for one payment.
type StrayRefunds interface {
	RefundStrayPayment(ctx context.Context, p store.StrayPayment, refused int) error
	// CancelPayment cancels a cancelled order's open payment.
	CancelPayment(ctx context.Context, a store.CancelPaymentArgs) error
}

// RefundStrayPaymentWorker refunds; an error is retried by river with
// backoff.
type RefundStrayPaymentWorker struct {
	river.WorkerDefaults[RefundStrayPaymentArgs]
	Refunds StrayRefunds
}

func (w *RefundStrayPaymentWorker) Work(ctx context.Context, job *river.Job[RefundStrayPaymentArgs]) error {
	if err := w.Refunds.RefundStrayPayment(ctx, store.StrayPayment(job.Args), refusedAttempts(job.JobRow)); err != nil {
		return fmt.Errorf("refund stray payment %s of order %s: %w", job.Args.Ref, job.Args.OrderID, err)
	}
	return nil
}

// refusedAttempts counts the job's earlier attempts that the provider
// answered with a failure it keeps for the idempotency key: each moves the
// next attempt to a fresh key. A lost answer keeps the key, so whatever the
// provider did meanwhile is answered again instead of done twice.
func refusedAttempts(row *rivertype.JobRow) int {
	if row == nil {
		return 0
	}
	n := 0
	for _, e := range row.Errors {
		if strings.Contains(e.Error, payments.ErrStoredFailure.Error()) {
			n++
		}
	}
	return n
}
