package storetest

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
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
