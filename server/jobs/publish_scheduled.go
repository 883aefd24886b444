package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/access"
	"marquee/store"
)

// PublishScheduledInterval is how often due scheduled posts are looked for
// by default (PUBLISH_INTERVAL): a post goes out at most this late.
const PublishScheduledInterval = 15 * time.Second

// PublishScheduledArgs asks for the scheduled posts that are due to be
// published.
type PublishScheduledArgs struct{}

func (PublishScheduledArgs) Kind() string { return "publish_scheduled" }

// PublishScheduledWorker publishes scheduled posts once their time has come.
// The schedule lives in the posts themselves (messages.publish_at), so a
// restart or a crash loses none: the next run finds what is due, and each
// post is published by one conditional update however many runs overlap.
type PublishScheduledWorker struct {
	river.WorkerDefaults[PublishScheduledArgs]
	Store  *store.Storage
	Logger *slog.Logger
}

func (w *PublishScheduledWorker) Work(ctx context.Context, _ *river.Job[PublishScheduledArgs]) error {
	_, err := PublishDue(ctx, w.Store, time.Now())
	return err
}

// PublishDue publishes every scheduled post due at now and answers how many
// it published; tests call it as the worker does.
func PublishDue(ctx context.Context, st *store.Storage, now time.Time) (int, error) {
	n := 0
	for {
		due, err := st.DueScheduled(ctx, now, 100)
		if err != nil {
			return n, err
		}
		for i := range due {
			ok, err := PublishPost(ctx, st, &due[i], now)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
		if len(due) < 100 {
			return n, nil
		}
	}
}

// PublishPost publishes a draft or a scheduled post now, announced to the
// app's members as its author's posts are (access.AnnouncesToMembers of the
// author's role today): the one way a post saved for later goes out, for
// the job and for the author's Publish button.
func PublishPost(ctx context.Context, st *store.Storage, m *store.Message, now time.Time) (bool, error) {
	role := store.RoleFollower
	mb, err := st.MembershipOf(ctx, m.AppID, m.SenderID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("publish %s: author's role: %w", m.ID, err)
	}
	if mb != nil {
		role = mb.Role
	}
	return st.PublishMessage(ctx, m, access.AnnouncesToMembers(role), now)
}
