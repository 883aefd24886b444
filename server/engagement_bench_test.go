package server

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

// BenchmarkMemberAPIUnderWrites is the member API of `scripts/bench
// cluster` without the network: two servers on one PostgreSQL database and
// one Redis (cache and announcements), the first taking an engagement bump
// (a like, a reply or a follow) every bumpEvery calls the second answers, a
// member's landing data and feed page 1 in turn (the cluster bench sends
// 100 calls a second while members write 60 times). queries/op is what a
// call costs the database:
//
//	go test ./server -run NONE -bench MemberAPIUnderWrites -benchmem -cpuprofile cpu.out
func BenchmarkMemberAPIUnderWrites(b *testing.B) {
	const bumpEvery = 2
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := demoDB(b)
	//lint:ignore SA1019 the hook must reach the Storage already built on this database
	db.AddQueryHook(store.QueryCountHook{})
	rdb := storetest.Redis(b)
	ns := "bench:" + store.NewID()
	var servers [2]*testServer
	for i := range servers {
		ts := newTestServerStore(b, db, nil, func(o *store.Options) {
			o.Redis, o.Namespace, o.Cache = rdb, ns, &store.RedisCache{Client: rdb, Prefix: ns + ":"}
		})
		go ts.WatchPageVersions(ctx)
		servers[i] = ts
	}
	writer, reader := servers[0], servers[1]
	b.Cleanup(func() {
		keys, _ := rdb.Keys(context.Background(), ns+":*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	demo, err := reader.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		b.Fatal(err)
	}
	var community struct {
		ID string `bun:"id"`
	}
	if err := db.NewSelect().Table("communities").Column("id").Where("app_id = ?", demo.ID).Scan(ctx, &community); err != nil {
		b.Fatal(err)
	}
	var follower store.User
	if err := db.NewSelect().Model(&follower).Where("email = ?", "follower@demo.test").Scan(ctx); err != nil {
		b.Fatal(err)
	}
	token, err := reader.store.CreateSession(ctx, follower.ID, "bench")
	if err != nil {
		b.Fatal(err)
	}
	for !reader.store.PageVersionsLive() || !writer.store.PageVersionsLive() {
		time.Sleep(10 * time.Millisecond)
	}
	paths := []string{"/api/app/demo/landing", "/api/community/" + community.ID + "/posts"}
	h := reader.Main()
	call := func(ctx context.Context, path string) {
		req := newRequest(http.MethodGet, path, nil).WithContext(ctx)
		req.Header.Set("Cookie", sessionCookie+"="+token)
		w := &nullWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if w.h.Get("Content-Type") == "" {
			b.Fatalf("%s: no answer", path)
		}
	}
	for _, p := range paths {
		call(ctx, p)
	}

	qctx, count := store.WithQueryCount(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%bumpEvery == 0 {
			// Outside the timing: the writer's own cost is not the
			// reader's. Its announcement reaches the reader while it reads.
			b.StopTimer()
			writer.store.NoteEngagement(ctx, demo.ID)
			b.StartTimer()
		}
		call(qctx, paths[i%2])
	}
	b.StopTimer()
	b.ReportMetric(float64(count.N())/float64(b.N), "queries/op")
	if os.Getenv("BENCH_QUERIES") != "" {
		seen := map[string]int{}
		for _, q := range count.Queries() {
			seen[q[:min(len(q), 90)]]++
		}
		for q, n := range seen {
			b.Logf("%5d %s", n, q)
		}
	}
}
