package storetest

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"marquee/store"
)

// DefaultRedisURL is used when TEST_REDIS_URL is unset.
const DefaultRedisURL = "redis://127.0.0.1:6379/0"

// Redis connects to the test Redis server and fails the test when it does not
// answer: tests run against the real cache, never a stand-in.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	url := os.Getenv("TEST_REDIS_URL")
	if url == "" {
		url = DefaultRedisURL
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("TEST_REDIS_URL %q: %v", url, err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redis at %s (is it running? `make services` starts it): %v", url, err)
	}
	return client
}

// RedisBehindProxy is the test Redis reached through a Proxy, tuned and
// guarded by a breaker as `serve` does (with a short cooldown), so a test can
// take Redis away mid-test and bring it back.
func RedisBehindProxy(t testing.TB) (*redis.Client, *Proxy) {
	t.Helper()
	Redis(t) // fail early, with the hint, when Redis is not running
	raw := os.Getenv("TEST_REDIS_URL")
	if raw == "" {
		raw = DefaultRedisURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	proxy := NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	store.TuneRedis(opts)
	client := redis.NewClient(opts)
	client.AddHook(store.NewBreaker(3, 200*time.Millisecond))
	t.Cleanup(func() { client.Close() })
	return client, proxy
}
