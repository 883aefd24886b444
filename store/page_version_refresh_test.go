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
