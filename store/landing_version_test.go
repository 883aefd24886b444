package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

// Two instances share PostgreSQL and Redis. Redis is cut, one instance
// writes (its delete and its announcement cannot reach Redis), Redis comes
// back with the old landing data still in it: the next read of either
// instance shows the write, because the landing data is keyed by the app's
// page version, which lives in the database.
func TestLandingAfterRedisOutageShowsTheWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Postgres(t)
	client, proxy := storetest.RedisBehindProxy(t)
	prefix := fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())
	opts := seededOptions(t, db, &store.RedisCache{Client: client, Prefix: prefix})
	opts.Redis = client
	reader, writer := store.New(opts), store.New(opts)
	watch, stop := context.WithCancel(ctx)
	defer stop()
	go reader.WatchPageVersions(watch)
	eventually(t, "the reader subscribed to page versions", reader.PageVersionsLive)

	before, err := reader.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if keys, _ := client.Keys(ctx, prefix+"landing:*").Result(); len(keys) != 1 {
		t.Fatalf("landing data in Redis: %v", keys)
	}

	proxy.Cut()
	if err := writer.SetAppField(ctx, "demo", "bio", "Written while Redis was away 7781"); err != nil {
		t.Fatal(err)
	}
	proxy.Resume(t)
	// The old entry is still in Redis: nothing could delete it.
	eventually(t, "Redis back", func() bool {
		keys, err := client.Keys(ctx, prefix+"landing:*").Result()
		return err == nil && len(keys) == 1
	})
	for _, s := range []*store.Storage{reader, writer} {
		eventually(t, "the write on the next read", func() bool {
			v, err := s.Landing(ctx, before.ID)
			return err == nil && strings.Contains(v.Bio, "Written while Redis was away 7781")
		})
	}
}

// A read racing writes never leaves old data behind: many readers and a
// writer run at once, and once the writer is done, every read shows its
// last write.
func TestLandingReadsRacingWritesEndFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Postgres(t)
	opts := seededOptions(t, db, testRedis(t))
	s, other := store.New(opts), store.New(opts)
	if _, err := s.Landing(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 12; round++ {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for r := 0; r < 8; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						_, _ = other.Landing(ctx, "demo")
					}
				}
			}()
		}
		want := fmt.Sprintf("Round %d of racing writes", round)
		if err := s.SetAppField(ctx, "demo", "bio", want); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // let readers race the write
		close(stop)
		wg.Wait()
		for _, st := range []*store.Storage{s, other} {
			deadline := time.Now().Add(store.UnannouncedTrust + 2*time.Second)
			for {
				v, err := st.Landing(ctx, "demo")
				if err == nil && strings.Contains(v.Bio, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d: landing still shows %q", round, v.Bio)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
