package jobs

import (
	"context"
	"errors"

	"github.com/riverqueue/river"

	"marquee/store"
)

// ExportAccountArgs names the data export to prepare (written with the
// export row when the member asks for it).
type ExportAccountArgs struct{ store.ExportJob }

func (ExportAccountArgs) Kind() string { return store.JobExportAccount }

// ExportAccountWorker builds the member's archive and mails its link; run
// again, it builds nothing new and mails once (the mail's key).
type ExportAccountWorker struct {
	river.WorkerDefaults[ExportAccountArgs]
	Store *store.Storage
}

func (w *ExportAccountWorker) Work(ctx context.Context, job *river.Job[ExportAccountArgs]) error {
	return ExportAccount(ctx, w.Store, job.Args.ExportJob)
}

// ExportAccount is the job's work; tests call it as the worker does.
func ExportAccount(ctx context.Context, st *store.Storage, a store.ExportJob) error {
	e, u, err := st.PrepareExport(ctx, a.ExportID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the account was deleted meanwhile
	}
	if err != nil {
		return err
	}
	return st.MailExport(ctx, e, u, a.Token, a.AppName)
}
