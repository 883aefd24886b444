package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
)

// SweepUploadsArgs asks for stale upload temp files to be removed.
type SweepUploadsArgs struct{}

func (SweepUploadsArgs) Kind() string { return "sweep_uploads" }

// tempSweeper is the part of local media storage this job needs.
type tempSweeper interface {
	SweepTemp(age time.Duration) (int, error)
}

// SweepUploadsWorker removes what a crash in the middle of an upload left
// in MEDIA_DIR. An hour is far longer than any upload of at most the
// media size limit takes.
type SweepUploadsWorker struct {
	river.WorkerDefaults[SweepUploadsArgs]
	Files  tempSweeper
	Logger *slog.Logger
}

func (w *SweepUploadsWorker) Work(ctx context.Context, _ *river.Job[SweepUploadsArgs]) error {
	n, err := w.Files.SweepTemp(time.Hour)
	if err != nil {
		return fmt.Errorf("sweep uploads: %w", err)
	}
	if n > 0 {
		w.Logger.Info("removed stale upload temp files", "count", n)
	}
	return nil
}
