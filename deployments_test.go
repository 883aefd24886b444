package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"marquee/assemble"
	"marquee/server"
	"marquee/store/storetest"
)

// TestTwoDeploymentsShareOneRedis: two deployments (their own PostgreSQL
// databases) on one Redis. Each gets its own namespace, made once per
// database: page-version bumps of one are never announced on the other's
// channel, and an app name each has resolves to its own id although the
// other's mapping is cached in the same Redis.
func TestTwoDeploymentsShareOneRedis(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	redisURL := os.Getenv("TEST_REDIS_URL")
	if redisURL == "" {
		redisURL = storetest.DefaultRedisURL
	}
	open := func() *assemble.App {
		env := map[string]string{"DATABASE_URL": storetest.URL(storetest.Postgres(t)), "REDIS_URL": redisURL, "MEDIA_DIR": t.TempDir()}
		cfg, err := server.LoadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		a, err := assemble.Open(ctx, cfg, logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		return a
	}
	one, two := open(), open()
	if one.Storage.CurrentNamespace() == "" || one.Storage.CurrentNamespace() == two.Storage.CurrentNamespace() ||
		one.Storage.PageVersionChannel() == two.Storage.PageVersionChannel() || one.Storage.SessionChannel() == two.Storage.SessionChannel() {
		t.Fatalf("namespaces %q and %q, channels %q and %q", one.Storage.CurrentNamespace(), two.Storage.CurrentNamespace(),
			one.Storage.PageVersionChannel(), two.Storage.PageVersionChannel())
	}
	// The same app name in both.
	var ids []string
	for _, a := range []*assemble.App{one, two} {
		u, err := a.Storage.CreateUser(ctx, "owner@example.test", "owner", "x")
		if err != nil {
			t.Fatal(err)
		}
		created, err := a.Storage.CreateApp(ctx, "shop", u.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, created.ID)
	}
	for i, a := range []*assemble.App{one, two, one, two} {
		got, err := a.Storage.AppIDOf(ctx, "shop")
		if err != nil || got != ids[i%2] {
			t.Errorf("deployment %d: shop is %q (%v), want its own %q", i%2+1, got, err, ids[i%2])
		}
	}

	// Listen on the second deployment's channel; bump the first's, then
	// the second's: the first message there must be the second's.
	sub := two.Redis.Subscribe(ctx, two.Storage.PageVersionChannel())
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	one.Storage.InvalidateApp(ctx, ids[0])
	two.Storage.InvalidateApp(ctx, ids[1])
	recvCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(recvCtx)
	if err != nil {
		t.Fatal(err)
	}
	// A bump announces "<scope> <version>".
	if scope, _, _ := strings.Cut(msg.Payload, " "); scope != ids[1] {
		t.Errorf("the second deployment heard %q on its channel: the first's bump (%s) leaked into it", msg.Payload, ids[0])
	}
}
