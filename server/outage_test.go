package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"marquee/store"
	"marquee/store/storetest"
)

// TestSessionsSurviveRedisOutage: Redis is taken away for real (its proxy
// cut) while members are signed in. Nobody is signed out, sign-in keeps
// working, and a logout that cannot reach Redis answers 503 instead of a
// false 200; once Redis is back, logout works and the cookie is dead.
func TestSessionsSurviveRedisOutage(t *testing.T) {
	rdb, proxy := storetest.RedisBehindProxy(t)
	ts := newTestServerStore(t, demoDB(t), nil, func(o *store.Options) {
		o.Redis, o.Cache = rdb, &store.RedisCache{Client: rdb, Prefix: "marquee:test:" + store.NewID() + ":"}
	})
	ctx := context.Background()

	before := signInToken(t, ts, "follower@demo.test", demoPassword)
	if n, _ := rdb.Exists(ctx, "marquee:session:"+sessionIDForTest(before)).Result(); n != 1 {
		t.Fatal("the session was not cached in redis")
	}
	proxy.Cut()

	member := withSession(before, "Content-Type", "application/json")
	// Hooks run in the order added: this one sees only the commands the
	// breaker (added by RedisBehindProxy) lets through to Redis.
	reached := &commandCounter{}
	rdb.AddHook(reached)
	start := time.Now()
	for i := 0; i < 20; i++ {
		for _, path := range []string{"/api/auth/me", "/api/auth/me?appId=demo"} {
			if res := ts.do(t, "GET", path, nil, member); res.Status != http.StatusOK || !strings.Contains(res.Body, `"username":"follower"`) {
				t.Fatalf("GET %s with Redis down: %d %.200s", path, res.Status, res.Body)
			}
		}
	}
	// Without the breaker every call waits on Redis (go-redis dials and
	// retries); with it open, calls do not try Redis at all, but for one
	// probe per cooldown (200 ms in RedisBehindProxy) and the few failures
	// (3) that open it.
	elapsed, tries := time.Since(start), reached.n.Load()
	if allowed := 4 + int64(elapsed/(200*time.Millisecond)); tries >= 40 || tries > allowed {
		t.Errorf("40 signed-in calls with Redis down sent %d commands to Redis in %v (breaker allows %d)", tries, elapsed, allowed)
	}
	if res := ts.do(t, "POST", "/api/notifications/follow/demo", strings.NewReader("{}"), member); res.Status != http.StatusOK {
		t.Errorf("follow with Redis down: %d %.200s", res.Status, res.Body)
	}
	for _, path := range []string{"/apps/demo", "/apps/demo/community"} {
		if res := ts.do(t, "GET", path, nil, member); res.Status != http.StatusOK || !strings.Contains(res.Body, `&quot;signedIn&quot;:true`) {
			t.Errorf("GET %s with Redis down: %d", path, res.Status)
		}
	}

	// Sign-in works without Redis, and its session is usable.
	during := signInToken(t, ts, "subscriber@demo.test", demoPassword)
	if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(during)); res.Status != http.StatusOK {
		t.Fatalf("session made while Redis is down: %d", res.Status)
	}

	// Logout cannot clear Redis: 503, and the member is honestly still
	// signed in (no cookie cleared, the session still answers).
	res := ts.do(t, "POST", "/api/auth/logout", nil, member)
	if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Fatalf("logout with Redis down: %d %.200s", res.Status, res.Body)
	}
	if strings.Contains(res.Header.Get("Set-Cookie"), sessionCookie) {
		t.Error("a failed logout cleared the cookie")
	}
	if res := ts.do(t, "GET", "/api/auth/me", nil, member); res.Status != http.StatusOK {
		t.Errorf("after a refused logout: %d", res.Status)
	}

	proxy.Resume(t)
	waitFor(t, func() bool {
		return ts.do(t, "POST", "/api/auth/logout", nil, member).Status == http.StatusOK
	})
	for _, token := range []string{before, during} {
		if token == during {
			if res := ts.do(t, "POST", "/api/auth/logout", nil, withSession(token)); res.Status != http.StatusOK {
				t.Fatalf("logout after Redis came back: %d", res.Status)
			}
		}
		if res := ts.do(t, "GET", "/api/auth/me", nil, withSession(token)); res.Status != http.StatusUnauthorized {
			t.Errorf("cookie after logout, Redis back: %d", res.Status)
		}
		if n, _ := rdb.Exists(ctx, "marquee:session:"+sessionIDForTest(token)).Result(); n != 0 {
			t.Error("logout left a copy in redis")
		}
	}
}

// TestLogoutWithDatabaseDown: PostgreSQL taken away (its proxy cut) while
// Redis works. Logout answers 503, never a false 200; once the database is
// back the member is still signed in, and a logout then ends the session
// for good.
func TestLogoutWithDatabaseDown(t *testing.T) {
	db, proxy := storetest.PostgresBehindProxy(t)
	rdb := storetest.Redis(t)
	ts := newTestServerStore(t, db, nil, func(o *store.Options) { o.Redis = rdb })
	token := sessionFor(t, ts, "follower@demo.test")
	member := withSession(token, "Content-Type", "application/json")
	if res := ts.do(t, "GET", "/api/auth/me", nil, member); res.Status != http.StatusOK {
		t.Fatalf("me: %d", res.Status)
	}
	proxy.Cut()
	res := ts.do(t, "POST", "/api/auth/logout", nil, member)
	if res.Status != http.StatusServiceUnavailable {
		t.Fatalf("logout with the database down: %d %.200s", res.Status, res.Body)
	}
	if strings.Contains(res.Header.Get("Set-Cookie"), sessionCookie) {
		t.Error("a failed logout cleared the cookie")
	}
	proxy.Resume(t)
	waitFor(t, func() bool { return ts.do(t, "GET", "/api/auth/me", nil, member).Status == http.StatusOK })
	if res := ts.do(t, "POST", "/api/auth/logout", nil, member); res.Status != http.StatusOK {
		t.Fatalf("logout with the database back: %d", res.Status)
	}
	if res := ts.do(t, "GET", "/api/auth/me", nil, member); res.Status != http.StatusUnauthorized {
		t.Errorf("cookie after logout: %d", res.Status)
	}
}

// waitFor polls cond for up to 5 seconds: pools and the breaker need a
// moment to notice a dependency is back.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// commandCounter counts the Redis commands that reach it.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}
