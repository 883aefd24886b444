package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// Without Redis, the versions read recently are read again together, a few
// hundred per query, so that they stay trusted past UnannouncedTrust and a
// visitor's request reads none; another process's bump shows at the next
// round; versions nobody reads are left to expire.
func TestPageVersionsRefreshedTogether(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		db = db.WithQueryHook(store.QueryCountHook{})
		s := store.New(store.Options{DB: db})
		other := store.New(store.Options{DB: db}) // another process (the CLI)
		const apps = 300                          // 601 scopes: two queries of at most 500
		for i := range apps {
			if _, err := s.CurrentVersions(ctx, fmt.Sprintf("app-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		active := map[string]uint32{}
		round := func() int {
			t.Helper()
			qctx, qc := store.WithQueryCount(ctx)
			n, err := store.RefreshPageVersionsRound(s, qctx, active)
			if err != nil {
				t.Fatal(err)
			}
			if want := (n + 499) / 500; qc.N() != want {
				t.Fatalf("a round of %d scopes took %d queries, want %d", n, qc.N(), want)
			}
			return n
		}
		if n := round(); n != 2*apps+1 {
			t.Fatalf("first round refreshed %d scopes, want %d", n, 2*apps+1)
		}
		other.InvalidateApp(ctx, "app-7")
		// Past the trust of the versions read above: only the round keeps them.
		time.Sleep(store.UnannouncedTrust + 100*time.Millisecond)
		round()
		qctx, qc := store.WithQueryCount(ctx)
		for i := range apps {
			v, err := s.CurrentVersions(qctx, fmt.Sprintf("app-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(0); i == 7 {
				want = 1
				if v.App != want {
					t.Fatalf("app-7 after another process's bump: %+v", v)
				}
			} else if v.App != want {
				t.Fatalf("app-%d: %+v", i, v)
			}
		}
		if qc.N() != 0 {
			t.Fatalf("requests read %d versions themselves after a round: %v", qc.N(), qc.Queries()[:1])
		}
		// Read in the last round: still refreshed; unread for
		// RefreshActiveRounds: no longer.
		if n := round(); n != 2*apps+1 {
			t.Fatalf("round after the reads refreshed %d scopes", n)
		}
		for range store.RefreshActiveRounds - 1 {
			round()
		}
		if n := round(); n != 0 {
			t.Fatalf("%d scopes unread for %d rounds still refreshed", n, store.RefreshActiveRounds)
		}
	})
}

// With Redis announcing bumps, a version is trusted for VersionTrust; the
// rounds read it again only once it is due within two rounds, so a visitor
// never waits for it as it expires, and a bump that went unannounced (made
// by a process without Redis) shows by then as well.
func TestPageVersionsRefreshedWhileAnnounced(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := storetest.Postgres(t).WithQueryHook(store.QueryCountHook{})
	s := store.New(store.Options{DB: db, Cache: store.NewMemoryCache(), Redis: storetest.Redis(t), Namespace: "test:" + store.NewID()})
	go s.WatchPageVersions(ctx)
	for !s.PageVersionsLive() {
		time.Sleep(5 * time.Millisecond)
	}
	other := store.New(store.Options{DB: db}) // a process without Redis: its bumps go unannounced
	const apps = 100
	read := func(qctx context.Context) {
		t.Helper()
		for i := range apps {
			if _, err := s.CurrentVersions(qctx, fmt.Sprintf("live-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	read(ctx)
	start := time.Now()
	active := map[string]uint32{}
	round := func() int {
		t.Helper()
		n, err := store.RefreshPageVersionsRound(s, ctx, active)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := round(); n != 0 {
		t.Fatalf("a round right after the reads refreshed %d scopes, want none: all trusted for %s", n, store.VersionTrust)
	}
	read(ctx) // used in this round: kept active
	other.InvalidateApp(ctx, "live-7")
	time.Sleep(store.VersionTrust - 2*store.RefreshEvery - time.Since(start) + 50*time.Millisecond)
	if n := round(); n != 2*apps+1 {
		t.Fatalf("a round with every version due refreshed %d scopes, want %d", n, 2*apps+1)
	}
	time.Sleep(store.VersionTrust - time.Since(start) + 50*time.Millisecond)
	qctx, qc := store.WithQueryCount(ctx)
	read(qctx)
	if qc.N() != 0 {
		t.Fatalf("requests read %d versions themselves past their first trust: %v", qc.N(), qc.Queries()[:1])
	}
	if v, err := s.CurrentVersions(ctx, "live-7"); err != nil || v.App != 1 {
		t.Fatalf("live-7 after a bump nobody announced: %+v %v, want app version 1", v, err)
	}
}
