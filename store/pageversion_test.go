package store_test

import (
	"context"
	"testing"

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
		s := store.NewStorage(db, store.NewMemoryCache(), nil, nil)
		got, err := s.PageVersions(ctx, "app-a", store.GlobalPageScope)
		if err != nil || got["app-a"] != 0 || got[store.GlobalPageScope] != 0 {
			t.Fatalf("before any bump: %v %v", got, err)
		}
		s.InvalidateApp(ctx, "app-a")
		s.InvalidateApp(ctx, "app-a")
		s.InvalidateAllApps(ctx)
		// Another Storage on the same database stands for another process.
		other := store.NewStorage(db, store.NewMemoryCache(), nil, nil)
		got, err = other.PageVersions(ctx, "app-a", "app-b", store.GlobalPageScope)
		if err != nil {
			t.Fatal(err)
		}
		if got["app-a"] != 2 || got["app-b"] != 0 || got[store.GlobalPageScope] != 1 {
			t.Fatalf("versions = %v, want app-a 2, app-b 0, * 1", got)
		}
	})
}
