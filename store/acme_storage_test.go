package store_test

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// certmagic's storage contract on both databases (issue 42 item 4): a value
// stored is loaded back byte for byte and overwritten in place; a missing
// key is fs.ErrNotExist; directories exist, list (directly or recursively)
// and delete with everything under them; Stat tells files from directories;
// a lock is held by one holder at a time, across two storages on the same
// database (two instances), and a lock whose holder vanished expires.
func TestACMEStorageContract(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := &store.ACMEStorage{DB: db, LockLease: 400 * time.Millisecond, LockPoll: 20 * time.Millisecond}
		other := &store.ACMEStorage{DB: db, LockLease: 400 * time.Millisecond, LockPoll: 20 * time.Millisecond}

		if _, err := s.Load(ctx, "certificates/ca/fans.example.test/fans.example.test.crt"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("load missing: %v, want fs.ErrNotExist", err)
		}
		if _, err := s.Stat(ctx, "certificates"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat missing: %v", err)
		}
		if _, err := s.List(ctx, "certificates", true); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("list missing: %v", err)
		}
		binary := []byte{0, 1, 2, 0xff, 'a', 0}
		files := map[string][]byte{
			"certificates/ca/fans.example.test/fans.example.test.crt": []byte("-----BEGIN CERTIFICATE-----"),
			"certificates/ca/fans.example.test/fans.example.test.key": binary,
			"certificates/ca/100%_x.example/100%_x.example.crt":       []byte("wild"),
			"acme/ca/users/me@example.test/me.json":                   []byte("{}"),
			"last_clean.json":                                         []byte("{}"),
		}
		for k, v := range files {
			if err := s.Store(ctx, k, v); err != nil {
				t.Fatal(err)
			}
		}
		got, err := other.Load(ctx, "certificates/ca/fans.example.test/fans.example.test.key")
		if err != nil || !reflect.DeepEqual(got, binary) {
			t.Fatalf("load from another instance: %v %v", got, err)
		}
		before, _ := s.Stat(ctx, "last_clean.json")
		time.Sleep(2 * time.Millisecond)
		if err := s.Store(ctx, "last_clean.json", []byte(`{"x":1}`)); err != nil {
			t.Fatal(err)
		}
		after, err := s.Stat(ctx, "last_clean.json")
		if err != nil || !after.IsTerminal || after.Size != 7 || !after.Modified.After(before.Modified) || after.Key != "last_clean.json" {
			t.Fatalf("stat after overwrite: %+v %v (before %+v)", after, err, before)
		}
		if v, _ := s.Load(ctx, "last_clean.json"); string(v) != `{"x":1}` {
			t.Fatalf("overwritten value: %q", v)
		}
		dir, err := s.Stat(ctx, "certificates/ca")
		if err != nil || dir.IsTerminal {
			t.Fatalf("stat directory: %+v %v", dir, err)
		}
		if !s.Exists(ctx, "certificates/ca/fans.example.test") || !s.Exists(ctx, "last_clean.json") || s.Exists(ctx, "certificates/c") || s.Exists(ctx, "certificates/ca/fans") {
			t.Fatal("Exists answers wrong")
		}
		direct, err := s.List(ctx, "certificates/ca", false)
		if want := []string{"certificates/ca/100%_x.example", "certificates/ca/fans.example.test"}; err != nil || !reflect.DeepEqual(direct, want) {
			t.Fatalf("list direct: %v %v, want %v", direct, err, want)
		}
		all, err := s.List(ctx, "certificates", true)
		want := []string{"certificates/ca", "certificates/ca/100%_x.example", "certificates/ca/100%_x.example/100%_x.example.crt",
			"certificates/ca/fans.example.test", "certificates/ca/fans.example.test/fans.example.test.crt", "certificates/ca/fans.example.test/fans.example.test.key"}
		if err != nil || !reflect.DeepEqual(all, want) {
			t.Fatalf("list recursive: %v %v\nwant %v", all, err, want)
		}
		// A LIKE wildcard in a key matches only itself.
		if s.Exists(ctx, "certificates/ca/100x_x.example") {
			t.Fatal("a key's % matched another")
		}
		if err := s.Delete(ctx, "certificates/ca/fans.example.test"); err != nil {
			t.Fatal(err)
		}
		if s.Exists(ctx, "certificates/ca/fans.example.test/fans.example.test.key") || !s.Exists(ctx, "certificates/ca/100%_x.example/100%_x.example.crt") {
			t.Fatal("delete of a directory removed the wrong keys")
		}
		if err := s.Delete(ctx, "certificates/ca/fans.example.test"); err != nil {
			t.Fatalf("deleting what is gone: %v", err)
		}

		// One holder at a time, across instances.
		var inside, most atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 6; i++ {
			st := s
			if i%2 == 1 {
				st = other
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := st.Lock(ctx, "issue_cert_fans.example.test"); err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				time.Sleep(30 * time.Millisecond)
				inside.Add(-1)
				if err := st.Unlock(ctx, "issue_cert_fans.example.test"); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if most.Load() != 1 {
			t.Fatalf("%d holders at once", most.Load())
		}
		// A lock held past its lease by a holder that keeps renewing stays
		// held. Judged on the row, not a clock: once the first lease has run
		// out and the holder has renewed, another storage cannot take it.
		// The lease here is long (renewed every 1.25 s, 5 s of slack), so a
		// holder starved by a busy machine for a moment still renews in time.
		holder := &store.ACMEStorage{DB: db, LockLease: 5 * time.Second, LockPoll: 20 * time.Millisecond}
		taker := &store.ACMEStorage{DB: db, LockLease: 5 * time.Second, LockPoll: 20 * time.Millisecond}
		if err := holder.Lock(ctx, "renewed"); err != nil {
			t.Fatal(err)
		}
		renewedUntil := func() int64 {
			var e int64
			if err := db.NewRaw(`SELECT "expires" FROM "acme_locks" WHERE "name" = 'renewed'`).Scan(ctx, &e); err != nil {
				t.Fatal(err)
			}
			return e
		}
		first := renewedUntil()
		for hang := time.Now().Add(2 * time.Minute); time.Now().UnixNano() <= first || renewedUntil() <= first; {
			if time.Now().After(hang) {
				t.Fatal("the holder never renewed its lock")
			}
			time.Sleep(100 * time.Millisecond)
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		if err := taker.Lock(short, "renewed"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("lock of a renewed lock: %v, want a timeout", err)
		}
		cancel()
		if err := holder.Unlock(ctx, "renewed"); err != nil {
			t.Fatal(err)
		}
		// A holder that vanished (its row left, no renewals) frees the name after the lease.
		// Judged against the row's own expiry, not a duration: on a busy
		// machine the insert alone may take most of the lease.
		expires := time.Now().Add(300 * time.Millisecond)
		if _, err := db.NewRaw(`INSERT INTO "acme_locks" ("name", "owner", "expires") VALUES (?, ?, ?)`,
			"stale", "gone", expires.UnixNano()).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := other.Lock(ctx, "stale"); err != nil {
			t.Fatal(err)
		}
		if now := time.Now(); now.Before(expires) {
			t.Fatalf("took a held lock %s before it expired", expires.Sub(now))
		}
		if err := other.Unlock(ctx, "stale"); err != nil {
			t.Fatal(err)
		}
		if err := other.Unlock(ctx, "stale"); err == nil {
			t.Fatal("unlocked a lock not held")
		}
	})
}
