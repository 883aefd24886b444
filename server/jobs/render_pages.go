package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"marquee/store"
)

// RenderPagesArgs: a write changed an app's content; its visitor pages are
// rendered before a visitor asks (server/page_render.go). Enqueued by the
// store in the write's transaction (store.JobRenderPages).
type RenderPagesArgs store.RenderPagesArgs

func (RenderPagesArgs) Kind() string { return store.JobRenderPages }

// PageRenderer renders an app's visitor pages into the page cache (the
// server).
type PageRenderer interface {
	RenderAppPages(ctx context.Context, appID string) error
}

type RenderPagesWorker struct {
	river.WorkerDefaults[RenderPagesArgs]
	Pages PageRenderer
}

func (w *RenderPagesWorker) Timeout(*river.Job[RenderPagesArgs]) time.Duration { return time.Minute }

// NextRetry: a render refused because the renderer was busy is tried again
// within seconds, then less often; a visitor renders the page meanwhile if
// they come first.
func (w *RenderPagesWorker) NextRetry(job *river.Job[RenderPagesArgs]) time.Time {
	wait := 5 * time.Second << min(job.Attempt-1, 8)
	return time.Now().Add(min(wait, 10*time.Minute))
}

func (w *RenderPagesWorker) Work(ctx context.Context, job *river.Job[RenderPagesArgs]) error {
	return w.Pages.RenderAppPages(ctx, job.Args.AppID)
}
