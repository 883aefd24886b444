package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"marquee/store"
)

// TestManage runs the CLI commands against a SQLite file, as
// `bin/marquee app create|set` and `member set-role` would.
func TestManage(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DATABASE_URL", filepath.Join(dir, "m.db"))
	t.Setenv("MEDIA_DIR", filepath.Join(dir, "media"))
	t.Setenv("REDIS_URL", "")
	t.Setenv("S3_ENDPOINT", "")
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	a, err := openApp(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := a.storage.CreateUser(ctx, "owner@example.test", "owner", "x")
	if err != nil {
		t.Fatal(err)
	}
	fan, err := a.storage.CreateUser(ctx, "fan@example.test", "fan", "x")
	if err != nil {
		t.Fatal(err)
	}
	a.Close()

	for _, args := range [][]string{
		{"app", "create", "shop", "--creator", "owner@example.test"},
		{"app", "set", "shop", "features.store.enabled=false", "basic.displayName=The Shop", "version=2.0.0"},
		{"member", "set-role", "shop", "fan@example.test", "moderator"},
		{"wallet", "credit", "shop", "fan@example.test", "12.50"},
		{"wallet", "credit", "shop", "fan@example.test", "5", "--ref", "gift-1"},
		{"wallet", "credit", "shop", "fan@example.test", "5", "--ref", "gift-1"},
		{"wallet", "balance", "shop", "fan@example.test"},
	} {
		if err := manage(ctx, args, logger); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	for _, bad := range [][]string{
		{"app", "create", "x", "--creator", "nobody@example.test"},
		{"app", "set", "shop", "features.nope=1"},
		{"member", "set-role", "shop", "owner@example.test", "FOLLOWER"},
		{"member", "set-role", "shop", "fan@example.test", "KING"},
		{"wallet", "credit", "shop", "fan@example.test", "-3"},
		{"wallet", "credit", "shop", "fan@example.test", "1.005"},
		{"wallet", "credit", "shop", "nobody@example.test", "3"},
		{"wallet", "credit", "shop", "fan@example.test", "3", "--memo", "x"},
	} {
		if err := manage(ctx, bad, logger); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}

	a, err = openApp(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	app, err := a.storage.AppByIDOrName(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if app.CreatorID != owner.ID || app.Settings.Features.Store.Enabled || app.Settings.Basic.DisplayName != "The Shop" || app.Version != "2.0.0" {
		t.Errorf("app after set: %+v", app)
	}
	m, err := a.storage.MembershipOf(ctx, app.ID, fan.ID)
	if err != nil || m == nil || m.Role != store.RoleModerator {
		t.Errorf("fan membership %+v (%v)", m, err)
	}
	// 12.50 once and 5.00 once: the repeated reference credited nothing.
	if bal, err := a.storage.WalletBalance(ctx, app.ID, fan.ID); err != nil || bal != 1750 {
		t.Errorf("fan wallet %d (%v), want 1750", bal, err)
	}
}
