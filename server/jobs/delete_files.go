package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"marquee/server/media"
	"marquee/store"
)

// DeleteFilesArgs names stored files whose rows are gone (a deleted
// account's pictures, a deleted app's media and private files); written
// with the delete.
type DeleteFilesArgs struct{ store.DeleteFilesJob }

func (DeleteFilesArgs) Kind() string { return store.JobDeleteFiles }

// DeleteFilesWorker deletes the files; a file already gone is not an
// error, so the job may run again.
type DeleteFilesWorker struct {
	river.WorkerDefaults[DeleteFilesArgs]
	Files media.Storage
}

func (w *DeleteFilesWorker) Work(ctx context.Context, job *river.Job[DeleteFilesArgs]) error {
	return DeleteFiles(ctx, w.Files, job.Args.DeleteFilesJob)
}

// DeleteFiles is the job's work; tests call it as the worker does.
func DeleteFiles(ctx context.Context, files media.Storage, a store.DeleteFilesJob) error {
	for _, key := range a.Keys {
		if err := files.Delete(ctx, key); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}
