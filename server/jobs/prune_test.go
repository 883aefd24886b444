package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/store"
	"marquee/store/storetest"
)

// TestPruneRunsAsAPeriodicJob: the product's queue prunes on its own (the
// periodic job runs on start): notifications and failed push deliveries
// older than the retention go, and expired sessions; newer ones and live
// sessions stay.
func TestPruneRunsAsAPeriodicJob(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		files := &media.Local{Dir: t.TempDir(), BaseURL: "http://test", Key: []byte("k")}
		s := store.New(store.Options{DB: db, Media: media.Signer{Storage: files}, Logger: quiet()})
		app, err := s.AppByIDOrName(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.UserByEmail(ctx, "follower@demo.test")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		old, recent := now.Add(-31*24*time.Hour), now.Add(-29*24*time.Hour)
		var notes []string
		for _, at := range []time.Time{old, recent} {
			n := &store.Notification{ID: store.NewID(), AppID: app.ID, UserID: u.ID, Content: "hello", Kind: store.KindSystem, CreatedAt: at}
			if _, err := db.NewInsert().Model(n).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			notes = append(notes, n.ID)
			f := &store.PushFailure{ID: store.NewID(), AppID: app.ID, UserID: u.ID, SubscriptionID: "s", NotificationID: n.ID, CreatedAt: at}
			if _, err := db.NewInsert().Model(f).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var sessions []string
		for _, exp := range []time.Time{now.Add(-time.Minute), now.Add(time.Hour)} {
			sess := &store.Session{ID: store.NewID(), UserID: u.ID, ExpiresAt: exp}
			if _, err := db.NewInsert().Model(sess).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			sessions = append(sessions, sess.ID)
		}
		startProductQueue(t, db, s, files, time.Hour)
		exists := func(model any, id string) bool {
			ok, err := db.NewSelect().Model(model).Where("id = ?", id).Exists(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		waitFor(t, "the old notification, failure and session to be pruned", func() bool {
			n, _ := db.NewSelect().Model((*store.PushFailure)(nil)).Where("created_at < ?", now.Add(-30*24*time.Hour)).Count(ctx)
			return !exists((*store.Notification)(nil), notes[0]) && !exists((*store.Session)(nil), sessions[0]) && n == 0
		})
		if !exists((*store.Notification)(nil), notes[1]) || !exists((*store.Session)(nil), sessions[1]) {
			t.Error("the prune took a recent notification or a live session")
		}
		if n, _ := db.NewSelect().Model((*store.PushFailure)(nil)).Count(ctx); n != 1 {
			t.Errorf("%d push failures left, want the recent one", n)
		}
	})
}

// The jobs that fan out run under their own bounds, not river's default.
func TestFanOutJobsHaveTimeouts(t *testing.T) {
	t.Parallel()
	if d := (&jobs.FanOutWorker{}).Timeout(nil); d <= 0 || d > 10*time.Minute {
		t.Errorf("fan-out timeout %s", d)
	}
	if d := (&jobs.PushWorker{}).Timeout(nil); d <= 0 || d > 10*time.Minute {
		t.Errorf("push timeout %s", d)
	}
	if d := (&jobs.PruneWorker{}).Timeout(nil); d <= 0 {
		t.Errorf("prune timeout %s", d)
	}
}

// TestFinishedJobsAreDeleted: river's cleaner deletes finished jobs once
// they are older than JOB_RETENTION (jobs.Options.JobRetention). The prune
// job that runs on start (hourly, so once in this test) is the finished job
// watched here: it is seen completed, then gone at the cleaner's next pass
// (every 30 s). It watches that one job, not "no completed job": the
// scheduled-post job finishes every 15 s, so some finished job is always
// younger than the retention at the moment the cleaner runs, and the count
// of completed jobs may never reach zero.
func TestFinishedJobsAreDeleted(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		files := &media.Local{Dir: t.TempDir(), BaseURL: "http://test", Key: []byte("k")}
		s := store.New(store.Options{DB: db, Media: media.Signer{Storage: files}, Logger: quiet()})
		startProductQueue(t, db, s, files, 2*time.Second)
		pruneJobs := func(state string) int64 {
			q := db.NewSelect().Table("river_job").Where("kind = ?", jobs.PruneArgs{}.Kind())
			if state != "" {
				q = q.Where("state = ?", state)
			}
			n, err := q.Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		waitFor(t, "the prune job to complete", func() bool { return pruneJobs("completed") > 0 })
		deadline := time.Now().Add(3 * time.Minute)
		for pruneJobs("") > 0 {
			if time.Now().After(deadline) {
				t.Fatal("a job finished more than JOB_RETENTION ago is still kept after three minutes")
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// startProductQueue runs the product's queue on db, keeping finished jobs
// for jobRetention and notifications for 30 days, until the test ends.
func startProductQueue(t *testing.T, db *bun.DB, s *store.Storage, files media.Storage, jobRetention time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db, storetest.URL(db), quiet()); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(ctx, jobs.Options{DB: db, DatabaseURL: storetest.URL(db), MaxConns: storetest.JobConns, Logger: quiet(), JobRetention: jobRetention,
		Work: jobs.Product(jobs.Deps{Store: s, Files: files, Logger: quiet(),
			Retention: store.Retention{Notifications: 30 * 24 * time.Hour}})})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopQueue(t, q) })
}
