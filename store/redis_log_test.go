package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

type lineBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lineBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lineBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A Redis outage is logged once when it starts and once when it ends, not
// per request: while the breaker is open, the cache's callers fall back
// without a word.
func TestRedisOutageLoggedOncePerChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Redis(t)
	raw := os.Getenv("TEST_REDIS_URL")
	if raw == "" {
		raw = storetest.DefaultRedisURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	proxy := storetest.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	logs := &lineBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	client, err := store.OpenRedis(u.String(), 0, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	opts := seededOptions(t, storetest.SQLite(t), &store.RedisCache{Client: client, Prefix: fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())})
	opts.Logger = logger
	s := store.New(opts)
	if _, err := s.Landing(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	for i := 0; i < 40; i++ {
		s.InvalidateLanding(ctx, "demo")
		if _, err := s.Landing(ctx, "demo"); err != nil {
			t.Fatalf("landing without Redis: %v", err)
		}
	}
	proxy.Resume(t)
	eventually(t, "Redis answering again", func() bool {
		_, err := s.Landing(ctx, "demo")
		return err == nil && client.Ping(ctx).Err() == nil && strings.Contains(logs.String(), "Redis answers again")
	})
	text := logs.String()
	if n := strings.Count(text, "Redis is unreachable"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, text)
	}
	if n := strings.Count(text, "Redis answers again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, text)
	}
	// Before the breaker opened, the few calls that found Redis gone may
	// say so; 80 calls during the outage must not each say it.
	if n := strings.Count(text, "level=WARN"); n > 6 {
		t.Errorf("%d warnings for one outage:\n%s", n, text)
	}
}
