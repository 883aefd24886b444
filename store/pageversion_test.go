package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// A bump is a database counter, so another process (the CLI) sees it; both
// dialects must accept the upsert.
func TestPageVersionBumps(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		// Queries are counted where a test asks (WithQueryCount below).
		db = db.WithQueryHook(store.QueryCountHook{})
		s := store.New(store.Options{DB: db})
		got, err := s.PageVersions(ctx, "app-a", store.GlobalPageScope)
		if err != nil || got["app-a"] != 0 || got[store.GlobalPageScope] != 0 {
			t.Fatalf("before any bump: %v %v", got, err)
		}
		s.InvalidateApp(ctx, "app-a")
		s.InvalidateApp(ctx, "app-a")
		s.InvalidateAllApps(ctx)
		// Another Storage on the same database stands for another process.
		other := store.New(store.Options{DB: db})
		got, err = other.PageVersions(ctx, "app-a", "app-b", store.GlobalPageScope)
		if err != nil {
			t.Fatal(err)
		}
		if got["app-a"] != 2 || got["app-b"] != 0 || got[store.GlobalPageScope] != 1 {
			t.Fatalf("versions = %v, want app-a 2, app-b 0, * 1", got)
		}
		// The bump returns the version it made (RETURNING on both
		// dialects): the writer knows it without reading it back.
		s.InvalidatePost(ctx, "app-a", "post-1")
		// A reply moves its post and its app's engagement in one statement.
		bctx, bumps := store.WithQueryCount(ctx)
		s.InvalidatePost(bctx, "app-a", "post-1")
		if bumps.N() != 1 {
			t.Errorf("a reply's bumps took %d statements: %v", bumps.N(), bumps.Queries())
		}
		qctx, qc := store.WithQueryCount(ctx)
		if v, err := s.PostVersion(qctx, "post-1"); err != nil || v != 2 {
			t.Fatalf("post version after two bumps: %d %v", v, err)
		}
		if qc.N() != 0 {
			t.Fatalf("the version was read back: %v", qc.Queries())
		}
		if got, err := other.PageVersions(ctx, store.EngagementScope("app-a")); err != nil || got[store.EngagementScope("app-a")] != 2 {
			t.Fatalf("engagement after two replies: %v %v", got, err)
		}
	})
}

// Replies and follows bump two scopes at once, overlapping in the app's
// engagement: a hundred of them at once lose no bump and never deadlock.
func TestConcurrentBumpsOfOverlappingScopes(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := store.New(store.Options{DB: db})
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					s.InvalidatePost(ctx, "app-c", fmt.Sprintf("post-%d", i%3))
				} else {
					s.NoteMembership(ctx, "app-c", fmt.Sprintf("user-%d", i%3))
				}
			}()
		}
		wg.Wait()
		got, err := store.New(store.Options{DB: db}).PageVersions(ctx,
			store.EngagementScope("app-c"), store.PostScope("post-0"), store.PostScope("post-1"), store.PostScope("post-2"),
			store.MemberScope("app-c", "user-0"), store.MemberScope("app-c", "user-1"), store.MemberScope("app-c", "user-2"))
		if err != nil {
			t.Fatal(err)
		}
		// Even i: i%3 cycles 0,2,1 over 50 replies (17, 17, 16); odd i
		// likewise over 50 follows (17 for 1, 17 for 0, 16 for 2).
		want := map[string]int64{store.EngagementScope("app-c"): 100,
			store.PostScope("post-0"): 17, store.PostScope("post-1"): 16, store.PostScope("post-2"): 17,
			store.MemberScope("app-c", "user-0"): 17, store.MemberScope("app-c", "user-1"): 17, store.MemberScope("app-c", "user-2"): 16}
		for scope, n := range want {
			if got[scope] != n {
				t.Errorf("%s: version %d after the bumps, want %d", scope, got[scope], n)
			}
		}
	})
}

// A bump tells its new version: the process that made it, and every other
// one hearing it on Redis, use it without reading it back from the
// database (at 60 likes a second, each process re-reading after each one
// was what members waited for).
func TestBumpCarriesItsVersion(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listening := storagesHearingBumps(t, ctx, 2)
	writer, reader := listening[0], listening[1]
	for _, s := range []*store.Storage{writer, reader} {
		if _, err := s.CurrentVersions(ctx, "app-a"); err != nil {
			t.Fatal(err)
		}
	}
	writer.NoteEngagement(ctx, "app-a")
	writer.NoteEngagement(ctx, "app-a")

	qctx, qc := store.WithQueryCount(ctx)
	if v, err := writer.CurrentVersions(qctx, "app-a"); err != nil || v.Engagement != 2 {
		t.Fatalf("the writer's own versions: %+v %v", v, err)
	}
	// The reader trusts what it knows until the announcement arrives,
	// which replaces it with the new version: no read either way.
	for {
		v, err := reader.CurrentVersions(qctx, "app-a")
		if err != nil {
			t.Fatal(err)
		}
		if v.Engagement == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if qc.N() != 0 {
		t.Fatalf("versions read back from the database %d times: %v", qc.N(), qc.Queries())
	}
}

// Two instances bumping one app's engagement each hear the other's bump,
// often after making a newer one: an announcement older than what is
// known changes nothing and costs no read.
func TestOlderAnnouncementIsOldNews(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := storagesHearingBumps(t, ctx, 1)[0]
	rdb := s.Redis()
	if _, err := s.CurrentVersions(ctx, "app-a"); err != nil {
		t.Fatal(err)
	}
	s.NoteEngagement(ctx, "app-a")
	s.NoteEngagement(ctx, "app-a")
	// Another instance's bump to 1, heard after this one's to 2; then a
	// post's bump, heard after it, says the first has been taken in.
	for _, msg := range []string{"e:app-a 1", "m:post-x 5"} {
		if err := rdb.Publish(ctx, s.PageVersionChannel(), msg).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for {
		v, err := s.PostVersion(ctx, "post-x")
		if err != nil {
			t.Fatal(err)
		}
		if v == 5 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	qctx, qc := store.WithQueryCount(ctx)
	if v, err := s.CurrentVersions(qctx, "app-a"); err != nil || v.Engagement != 2 {
		t.Fatalf("after an older announcement: %+v %v, want engagement 2", v, err)
	}
	if qc.N() != 0 {
		t.Fatalf("versions read from the database %d times after old news: %v", qc.N(), qc.Queries())
	}
}

// storagesHearingBumps answers n storages of one PostgreSQL database (its
// queries counted) and one Redis namespace, each subscribed to the bumps
// until ctx ends.
func storagesHearingBumps(t *testing.T, ctx context.Context, n int) []*store.Storage {
	t.Helper()
	db := storetest.Postgres(t)
	db = db.WithQueryHook(store.QueryCountHook{})
	rdb := storetest.Redis(t)
	ns := "test:" + store.NewID()
	var out []*store.Storage
	for i := 0; i < n; i++ {
		s := store.New(store.Options{DB: db, Cache: store.NewMemoryCache(), Redis: rdb, Namespace: ns})
		go s.WatchPageVersions(ctx)
		out = append(out, s)
	}
	for _, s := range out {
		for !s.PageVersionsLive() {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return out
}

// An app's versions, once read and trusted, are answered from memory on
// every hit without a query or an allocation, and a bump made here is
// answered at once. Not parallel: AllocsPerRun counts the process's
// allocations.
func TestCurrentVersionsFromMemory(t *testing.T) {
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		db = db.WithQueryHook(store.QueryCountHook{})
		s := store.New(store.Options{DB: db})
		s.InvalidateApp(ctx, "app-m")
		s.InvalidateAllApps(ctx)
		s.InvalidatePost(ctx, "app-m", "post-m")
		want := store.Versions{App: 1, Global: 1, Engagement: 1}
		if got, err := s.CurrentVersions(ctx, "app-m"); err != nil || got != want {
			t.Fatalf("first read: %+v %v, want %+v", got, err, want)
		}
		qctx, qc := store.WithQueryCount(ctx)
		if got, err := s.CurrentVersions(qctx, "app-m"); err != nil || got != want || qc.N() != 0 {
			t.Fatalf("from memory: %+v %v, want %+v; queries %v", got, err, want, qc.Queries())
		}
		if allocs := testing.AllocsPerRun(100, func() { _, _ = s.CurrentVersions(ctx, "app-m") }); allocs != 0 {
			t.Errorf("CurrentVersions from memory allocates %.0f times", allocs)
		}
		if key := want.Key(); key != "1.1" {
			t.Errorf("Key() = %q, want 1.1", key)
		}
		s.InvalidatePost(ctx, "app-m", "post-m")
		s.InvalidateApp(ctx, "app-m")
		want = store.Versions{App: 2, Global: 1, Engagement: 2}
		if got, err := s.CurrentVersions(ctx, "app-m"); err != nil || got != want {
			t.Fatalf("after bumps: %+v %v, want %+v", got, err, want)
		}
	})
}
