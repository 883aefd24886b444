package store_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"marquee/store"
	"marquee/store/storetest"
)

// TestRedisBreakerRefused: Redis taken away (connections refused) costs a
// few failed calls, then every call fails at once until Redis is back.
func TestRedisBreakerRefused(t *testing.T) {
	ctx := context.Background()
	client, proxy := storetest.RedisBehindProxy(t)
	if err := client.Set(ctx, "marquee:test:breaker", "1", time.Minute).Err(); err != nil {
		t.Fatalf("redis through the proxy: %v", err)
	}
	proxy.Cut()
	assertFastFailures(t, client)
	proxy.Resume(t)
	waitForRedis(t, client)
}

// TestRedisBreakerBlackhole: a Redis that accepts and never answers (a hung
// server, a dropped network path) costs the read timeout three times, not
// on every call.
func TestRedisBreakerBlackhole(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	opts := &redis.Options{Addr: ln.Addr().String()}
	store.TuneRedis(opts)
	client := redis.NewClient(opts)
	client.AddHook(store.NewBreaker(3, time.Minute))
	t.Cleanup(func() { client.Close() })
	start := time.Now()
	for i := 0; i < 3; i++ {
		if err := client.Get(context.Background(), "k").Err(); err == nil || !store.IsUnavailable(err) {
			t.Fatalf("call %d against a hung redis: %v", i, err)
		}
	}
	// Each try is bounded by the read timeout (and one retry), never seconds.
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("3 calls against a hung redis took %v", d)
	}
	assertFastFailures(t, client)
}

// assertFastFailures: once the breaker is open, 200 calls cost well under a
// millisecond each and fail as unavailable (the server answers 503 or falls
// back, never 500).
func assertFastFailures(t *testing.T, client *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_ = client.Get(ctx, "marquee:test:breaker").Err()
	}
	start := time.Now()
	for i := 0; i < 200; i++ {
		err := client.Get(ctx, "marquee:test:breaker").Err()
		if !errors.Is(err, store.ErrRedisUnavailable) || !store.IsUnavailable(err) {
			t.Fatalf("call %d with the breaker open: %v", i, err)
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("200 calls with the breaker open took %v", d)
	}
}

func waitForRedis(t *testing.T, client *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := client.Get(context.Background(), "marquee:test:breaker").Err()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis did not come back through the breaker: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
