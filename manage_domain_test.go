package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"marquee/assemble"
)

// captureStdout runs fn and answers what it printed.
func captureStdout(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	runErr := fn()
	os.Stdout = old
	w.Close()
	var b bytes.Buffer
	io.Copy(&b, r)
	return b.String(), runErr
}

// TestAppDomainCommands: `marquee app domain add NAME DOMAIN [--verified]`,
// `app domain list` and `app domain remove NAME` (issue 42 item 3), on
// SQLite as the embedded default runs them.
func TestAppDomainCommands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DATABASE_URL", filepath.Join(dir, "d.db"))
	t.Setenv("MEDIA_DIR", filepath.Join(dir, "media"))
	t.Setenv("REDIS_URL", "")
	t.Setenv("S3_ENDPOINT", "")
	t.Setenv("PUBLIC_URL", "https://marquee.example.test")
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := a.Storage.CreateUser(ctx, "owner@example.test", "owner", "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shop", "other"} {
		if _, err := a.Storage.CreateApp(ctx, name, owner.ID); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	run := func(args ...string) (string, error) {
		return captureStdout(t, func() error { return manage(ctx, args, logger) })
	}

	out, err := run("app", "domain", "add", "shop", "Fans.Example.Test")
	if err != nil || !strings.Contains(out, "_marquee-verify.fans.example.test TXT marquee-verify=") {
		t.Fatalf("add: %q %v", out, err)
	}
	out, err = run("app", "domain", "list")
	if err != nil || !strings.Contains(out, "fans.example.test") || !strings.Contains(out, "shop") || !strings.Contains(out, "pending") {
		t.Fatalf("list: %q %v", out, err)
	}
	if out, err = run("app", "domain", "add", "shop", "fans.example.test", "--verified"); err != nil || !strings.Contains(out, "now serves shop") {
		t.Fatalf("add --verified: %q %v", out, err)
	}
	if _, err := run("app", "domain", "add", "other", "fans.example.test", "--verified"); err == nil || !strings.Contains(err.Error(), "another app") {
		t.Fatalf("another app's domain: %v", err)
	}
	for _, bad := range []string{"marquee.example.test", "https://x.example.test/path", "nodot"} {
		if _, err := run("app", "domain", "add", "other", bad); err == nil {
			t.Errorf("add %q: no error", bad)
		}
	}

	a, err = assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := a.Storage.VerifiedDomains(ctx)
	if err != nil || len(routes) != 1 || routes[0].Domain != "fans.example.test" || routes[0].AppName != "shop" {
		t.Fatalf("verified domains: %+v %v", routes, err)
	}
	var queued int64
	if queued, err = a.Storage.DB().NewSelect().Table("job_outbox").Where("kind = ?", "verify_domain").Count(ctx); err != nil || queued != 1 {
		t.Errorf("verify_domain jobs queued: %d %v", queued, err)
	}
	a.Close()

	if out, err = run("app", "domain", "remove", "shop"); err != nil || !strings.Contains(out, "removed fans.example.test") {
		t.Fatalf("remove: %q %v", out, err)
	}
	if _, err = run("app", "domain", "remove", "shop"); err == nil {
		t.Fatal("remove twice: no error")
	}
	if out, _ = run("app", "domain", "list"); strings.Contains(out, "fans.example.test") {
		t.Fatalf("list after remove: %q", out)
	}
}
