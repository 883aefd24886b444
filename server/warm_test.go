package server

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
)

// A starting server learns the apps' ids by name and (on SQLite) opens its
// database connections before the first burst of requests asks for them.
func TestWarmUpBeforeTheFirstBurst(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		ts := newTestServer(t, db)
		ctx := context.Background()
		if _, known := ts.pages.appIDs.Load("acme"); known {
			t.Fatal("an app id known before the warm-up")
		}
		ts.warmUp(ctx)
		for _, name := range []string{"demo", "acme"} {
			app, err := ts.store.AppByIDOrName(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if id, _ := ts.pages.appIDs.Load(name); id != app.ID {
				t.Errorf("%s: id %v after the warm-up, want %s", name, id, app.ID)
			}
		}
		if db.Dialect().Name().String() == "sqlite" {
			if st := db.Stats(); st.OpenConnections < min(store.SQLiteIdleConns, st.MaxOpenConnections) {
				t.Errorf("%d connections open after the warm-up, want %d", st.OpenConnections, min(store.SQLiteIdleConns, st.MaxOpenConnections))
			}
		}
	})
}
