package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"marquee/server/media"
	"marquee/store"
)

// DeleteFilesArgs names stored files whose rows are gone (a deleted
// account's pictures); written with the delete.
type DeleteFilesArgs struct{ store.DeleteFilesJob }

func (DeleteFilesArgs) Kind() string { return store.JobDeleteFiles }

// DeleteFilesWorker deletes the files; a file already gone is not an
// error, so the job may run again.
type DeleteFilesWorker struct {
	river.WorkerDefaults[DeleteFilesArgs]
	Files media.Storage
}

func (w *DeleteFilesWorker) Work(ctx context.Context, job *river.Job[DeleteFilesArgs]) error {
	for _, key := range job.Args.Keys {
		if err := w.Files.Delete(ctx, key); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}
