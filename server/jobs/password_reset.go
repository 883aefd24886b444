package jobs

import (
	"context"

	"github.com/riverqueue/river"

	"marquee/store"
)

// PasswordResetArgs is an address someone asked a reset link for (written
// by the forgot-password form for every address alike).
type PasswordResetArgs struct{ store.PasswordResetJob }

func (PasswordResetArgs) Kind() string { return store.JobPasswordReset }

// PasswordResetWorker mails the link when the address is an account's.
type PasswordResetWorker struct {
	river.WorkerDefaults[PasswordResetArgs]
	Store *store.Storage
}

func (w *PasswordResetWorker) Work(ctx context.Context, job *river.Job[PasswordResetArgs]) error {
	return PasswordReset(ctx, w.Store, job.Args.PasswordResetJob)
}

// PasswordReset is the job's work; tests call it as the worker does.
func PasswordReset(ctx context.Context, st *store.Storage, a store.PasswordResetJob) error {
	return st.RequestPasswordReset(ctx, a.Email, store.AccountMailContext{AppID: a.AppID, AppName: a.AppName})
}
