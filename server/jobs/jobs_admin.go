package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// DefaultJobTimeout bounds a job that sets no Timeout of its own.
const DefaultJobTimeout = 5 * time.Minute

// Failed lists jobs that failed: discarded (out of attempts), cancelled,
// and those waiting for a retry after an error, newest first.
func (q *Queue) Failed(ctx context.Context, limit int) ([]*rivertype.JobRow, error) {
	params := river.NewJobListParams().
		States(rivertype.JobStateDiscarded, rivertype.JobStateCancelled, rivertype.JobStateRetryable).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(limit)
	res, err := q.driver.jobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", err)
	}
	return res.Jobs, nil
}

// ErrJobNotFound: no job has the id.
var ErrJobNotFound = errors.New("no job with that id")

// Retry makes a failed job available to run again now (river's JobRetry);
// a job still running or already done is left as it is.
func (q *Queue) Retry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	row, err := q.driver.jobRetry(ctx, id)
	if errors.Is(err, rivertype.ErrNotFound) {
		return nil, fmt.Errorf("job %d: %w", id, ErrJobNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("retry job %d: %w", id, err)
	}
	return row, nil
}
