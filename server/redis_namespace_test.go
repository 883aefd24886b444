package server

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"marquee/store"
	"marquee/store/storetest"
)

// TestEveryRedisKeyIsNamespaced: a deployment signs a member in, counts
// their attempts and writes, renders and shares pages, caches landing
// data, announces bumps and ends the session. Every key and channel it
// names in Redis must carry its database's namespace: two deployments on
// copies of one database sharing a Redis accepted each other's sessions
// when session and rate-limit keys did not.
func TestEveryRedisKeyIsNamespaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &redisKeyRecorder{raw: storetest.Redis(t), names: map[string]string{}}
	rdb := storetest.Redis(t)
	rdb.AddHook(rec)
	ns := "ns" + store.NewID()[:10]
	// No cache given: the store's own, on Redis under its RedisKey, as serve's.
	ts := newTestServerStore(t, demoDB(t), nil, func(o *store.Options) { o.Redis, o.Namespace, o.Cache = rdb, ns, nil })
	t.Cleanup(func() {
		if keys, _ := rec.raw.Keys(context.Background(), "*"+ns+"*").Result(); len(keys) > 0 {
			rec.raw.Del(context.Background(), keys...)
		}
	})

	token := signInToken(t, ts, "follower@demo.test", demoPassword)
	member := withSession(token, "Content-Type", "application/json")
	ts.visit(t, "/apps/demo", "")
	if r := ts.do(t, "GET", "/api/app/demo/landing", nil, member); r.Status != http.StatusOK {
		t.Fatalf("landing data: %d %s", r.Status, r.Body)
	}
	var post string
	if err := ts.store.DB().NewRaw(`SELECT m.id FROM messages m JOIN apps a ON a.id = m.app_id
		WHERE a.name = 'demo' AND m.parent_message_id IS NULL ORDER BY m.created_at DESC LIMIT 1`).Scan(ctx, &post); err != nil {
		t.Fatal(err)
	}
	ts.do(t, "POST", "/api/messages/"+post+"/reactions", strings.NewReader(`{"reaction":"❤️"}`), member)
	if err := ts.store.SetAppField(ctx, "demo", "bio", "A bump to announce"); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "POST", "/api/auth/logout", nil, member); r.Status != http.StatusOK {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var names []string
	for name := range rec.names {
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, name := range names {
		if !strings.HasPrefix(name, "marquee:"+ns+":") && !strings.HasPrefix(name, "rate:marquee:"+ns+":") {
			t.Errorf("%s names %q, outside the deployment's namespace %q", rec.names[name], name, ns)
		}
		for _, kind := range []string{":session:", ":ratelimit:signin", ":ratelimit:", ":page:", ":landing:", ":page-versions", ":sessions-ended"} {
			if strings.Contains(name, kind) {
				seen[kind] = true
			}
		}
	}
	// The test covers what it claims to: each kind of key was written.
	for _, kind := range []string{":session:", ":ratelimit:signin", ":page:", ":landing:", ":page-versions", ":sessions-ended"} {
		if !seen[kind] {
			t.Errorf("no key or channel with %q was used; names: %v", kind, names)
		}
	}
}

// redisKeyRecorder is a go-redis hook that records every key (as Redis
// itself finds them in a command: COMMAND GETKEYS) and every channel a
// client's commands name.
type redisKeyRecorder struct {
	raw   *redis.Client // asks COMMAND GETKEYS, unhooked
	mu    sync.Mutex
	names map[string]string // key or channel -> the command that named it
}

func (r *redisKeyRecorder) record(ctx context.Context, cmd redis.Cmder) {
	args := cmd.Args()
	name := strings.ToLower(fmt.Sprint(args[0]))
	var found []string
	switch name {
	case "publish", "subscribe", "psubscribe", "spublish":
		for _, a := range args[1:] {
			found = append(found, fmt.Sprint(a))
			if name != "subscribe" && name != "psubscribe" {
				break
			}
		}
	default:
		keys, err := r.raw.Do(ctx, append([]any{"command", "getkeys"}, args...)...).StringSlice()
		if err != nil {
			return // a command without keys (PING, HELLO, CLIENT)
		}
		found = keys
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range found {
		r.names[k] = name
	}
}

func (r *redisKeyRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *redisKeyRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.record(ctx, cmd)
		return next(ctx, cmd)
	}
}

func (r *redisKeyRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			r.record(ctx, cmd)
		}
		return next(ctx, cmds)
	}
}
