package store_test

import (
	"context"
	"sync"
	"testing"

	"marquee/store"
	"marquee/store/storetest"
)

// Bursts of concurrent reads on SQLite reuse the connections they opened:
// opening one runs its pragmas, and closing the ones past database/sql's
// default of two idle made every burst open them again.
func TestSQLiteKeepsItsConnections(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	burst := func() {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < store.SQLiteIdleConns; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// A transaction holds its connection, so the burst
				// really needs one connection per reader.
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Error(err)
					return
				}
				defer tx.Rollback()
				var n int
				if err := tx.NewSelect().ColumnExpr("count(*)").Table("users").Scan(ctx, &n); err != nil {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	burst()
	opened := db.Stats().OpenConnections
	for i := 0; i < 5; i++ {
		burst()
	}
	st := db.Stats()
	if st.MaxIdleClosed != 0 {
		t.Fatalf("%d connections closed for being idle past the limit, want 0 (stats %+v)", st.MaxIdleClosed, st)
	}
	if st.OpenConnections < opened {
		t.Fatalf("%d connections open after the bursts, %d after the first", st.OpenConnections, opened)
	}
	if st.MaxOpenConnections != store.SQLiteIdleConns {
		t.Fatalf("at most %d connections open, want %d", st.MaxOpenConnections, store.SQLiteIdleConns)
	}
}

// Every SQLite connection keeps a small page cache (SQLiteCacheKB): the
// connections a process keeps open cost memory outside Go's heap.
func TestSQLiteConnectionsKeepSmallCaches(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var kb int
		if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&kb); err != nil {
			t.Fatal(err)
		}
		if kb != -store.SQLiteCacheKB {
			t.Errorf("connection %d: cache_size %d, want %d (KiB)", i, kb, -store.SQLiteCacheKB)
		}
		defer conn.Close()
	}
}
