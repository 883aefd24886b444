package jobs

import (
	"context"
	"errors"

	"github.com/riverqueue/river"

	"marquee/store"
)

// ExportAppArgs names the app export to build (written with the export row
// when the creator asks for it).
type ExportAppArgs struct{ store.AppExportJob }

func (ExportAppArgs) Kind() string { return store.JobExportApp }

// ExportAppWorker builds an app's archive and mails its link; run again,
// it builds nothing new and mails once (the mail's key).
type ExportAppWorker struct {
	river.WorkerDefaults[ExportAppArgs]
	Store *store.Storage
}

func (w *ExportAppWorker) Work(ctx context.Context, job *river.Job[ExportAppArgs]) error {
	return ExportApp(ctx, w.Store, job.Args.AppExportJob)
}

// ExportApp is the job's work; tests call it as the worker does.
func ExportApp(ctx context.Context, st *store.Storage, a store.AppExportJob) error {
	e, app, u, err := st.PrepareAppExport(ctx, a.ExportID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the app (or the account) was deleted meanwhile
	}
	if err != nil {
		return err
	}
	return st.MailAppExport(ctx, e, app, u, a.Token)
}
