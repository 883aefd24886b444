package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"marquee/assemble"
	"marquee/store"
	"marquee/store/storetest"
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

	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := a.Storage.CreateUser(ctx, "owner@example.test", "owner", "x")
	if err != nil {
		t.Fatal(err)
	}
	fan, err := a.Storage.CreateUser(ctx, "fan@example.test", "fan", "x")
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
		{"payouts", "fee", "shop", "2.5"},
		{"app", "suspend", "shop"},
		// Launch (issue 43 item 1): unpublished unless --published, and
		// the operator can publish or unpublish.
		{"app", "create", "open", "--published", "--creator", "owner@example.test"},
		{"app", "create", "later", "--creator", "owner@example.test"},
		{"app", "unpublish", "open"},
		{"app", "publish", "open"},
		{"app", "publish", "open"},
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
		{"app", "suspend", "nowhere"},
		{"payouts", "fee", "shop", "101"},
		{"payouts", "fee", "nowhere", "5"},
	} {
		if err := manage(ctx, bad, logger); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}

	a, err = assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	app, err := a.Storage.AppByIDOrName(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if app.CreatorID != owner.ID || app.Settings.Features.Store.Enabled || app.Settings.Basic.DisplayName != "The Shop" || app.Version != "2.0.0" ||
		app.Status != store.AppSuspended {
		t.Errorf("app after set: %+v", app)
	}
	if !app.Unpublished {
		t.Error("app create made a published app")
	}
	for name, unpublished := range map[string]bool{"open": false, "later": true} {
		if got, err := a.Storage.AppByIDOrName(ctx, name); err != nil || got.Unpublished != unpublished {
			t.Errorf("%s: unpublished %v, want %v (%v)", name, got != nil && got.Unpublished, unpublished, err)
		}
	}
	m, err := a.Storage.MembershipOf(ctx, app.ID, fan.ID)
	if err != nil || m == nil || m.Role != store.RoleModerator {
		t.Errorf("fan membership %+v (%v)", m, err)
	}
	// The CLI's set-role and app create write the role history.
	if h, err := a.Storage.RoleHistory(ctx, app.ID); err != nil || len(h) != 2 || h[0].UserID != owner.ID || h[0].Role != store.RoleCreator ||
		h[1].UserID != fan.ID || h[1].Previous != "" || h[1].Role != store.RoleModerator {
		t.Errorf("role history %+v (%v)", h, err)
	}
	// 12.50 once and 5.00 once: the repeated reference credited nothing.
	if bal, err := a.Storage.WalletBalance(ctx, app.ID, fan.ID); err != nil || bal != 1750 {
		t.Errorf("fan wallet %d (%v), want 1750", bal, err)
	}
	// The app's own platform fee, 2.5%, overrides PLATFORM_FEE_PERCENT.
	if bp, err := a.Storage.AppFeeBP(ctx, app.ID); err != nil || bp != 250 {
		t.Errorf("app fee %d bp (%v), want 250", bp, err)
	}
}

// TestAppSetLinks: `app set NAME features.links.settings.links=JSON` stores
// the link-in-bio links (on PostgreSQL), the landing shows them, and a bad
// list or a per-field path is refused with a message instead of a success
// that stores nothing.
func TestAppSetLinks(t *testing.T) {
	dbURL := storetest.URL(storetest.Postgres(t))
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("MEDIA_DIR", t.TempDir())
	t.Setenv("REDIS_URL", "")
	t.Setenv("S3_ENDPOINT", "")
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Storage.CreateUser(ctx, "owner@example.test", "owner", "x"); err != nil {
		t.Fatal(err)
	}
	const links = `[{"title":"Shop","url":"https://shop.example.com"},{"title":"Old","url":"http://old.example.com","enabled":false}]`
	for _, args := range [][]string{
		{"app", "create", "bio", "--creator", "owner@example.test"},
		{"app", "set", "bio", "features.links.enabled=true", "features.links.settings.links=" + links},
	} {
		if err := manage(ctx, args, logger); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	app, err := a.Storage.AppByIDOrName(ctx, "bio")
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Storage.LinksOfApp(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Title != "Shop" || got[0].URL != "https://shop.example.com" || !got[0].Enabled ||
		got[1].Title != "Old" || got[1].Enabled {
		t.Fatalf("stored links: %+v", got)
	}
	for _, bad := range []string{
		"features.links.settings.links=not json",
		`features.links.settings.links=[{"title":"","url":"https://x.example"}]`,
		`features.links.settings.links=[{"title":"X","url":"javascript:alert(1)"}]`,
		`features.links.settings.links=[{"title":"X","link":"https://x.example"}]`,
		"features.links.settings.links.0.url=https://x.example",
	} {
		err := manage(ctx, []string{"app", "set", "bio", bad}, logger)
		if err == nil || !strings.Contains(err.Error(), "link") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// A refused list changed nothing; an empty list clears.
	if after, _ := a.Storage.LinksOfApp(ctx, app.ID); len(after) != 2 {
		t.Errorf("a refused list changed the links: %+v", after)
	}
	if err := manage(ctx, []string{"app", "set", "bio", "features.links.settings.links=[]"}, logger); err != nil {
		t.Fatal(err)
	}
	if after, _ := a.Storage.LinksOfApp(ctx, app.ID); len(after) != 0 {
		t.Errorf("links after clearing: %+v", after)
	}
}

// TestAppSetTheme: `app set NAME theme.primaryColor=#0b6e4f` (and the
// accent, scheme and font) stores the theme as written; a colour that
// fails contrast is refused with its ratio and a suggestion, and changes
// nothing.
func TestAppSetTheme(t *testing.T) {
	dbURL := storetest.URL(storetest.Postgres(t))
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("MEDIA_DIR", t.TempDir())
	t.Setenv("REDIS_URL", "")
	t.Setenv("S3_ENDPOINT", "")
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Storage.CreateUser(ctx, "owner@example.test", "owner", "x"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"app", "create", "brand", "--creator", "owner@example.test"},
		{"app", "set", "brand", "theme.primaryColor=#0b6e4f", "theme.accentColor=#9A3412", "theme.scheme=auto", "theme.font=nunito", "theme.corners=square"},
	} {
		if err := manage(ctx, args, logger); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	got, err := a.Storage.AppByIDOrName(ctx, "brand")
	if err != nil {
		t.Fatal(err)
	}
	want := store.ThemeSettings{PrimaryColor: "#0b6e4f", AccentColor: "#9a3412", Scheme: "auto", Font: "nunito", Corners: "square"}
	if got.Settings.Theme != want {
		t.Fatalf("stored theme %+v", got.Settings.Theme)
	}
	for bad, words := range map[string]string{
		"theme.primaryColor=#a5b4fc":             "4.5:1",
		"theme.accentColor=yellow":               "hex colour",
		"theme.scheme=sepia":                     "light, dark or auto",
		"theme.font=papyrus":                     "bundled fonts",
		"theme.colour=#000000":                   "unknown setting",
		`theme={"primaryColor":"red;}</style>"}`: "hex colour",
	} {
		err := manage(ctx, []string{"app", "set", "brand", bad}, logger)
		if err == nil || !strings.Contains(err.Error(), words) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if err := manage(ctx, []string{"app", "set", "brand", "theme.primaryColor=#a5b4fc"}, logger); err == nil || !strings.Contains(err.Error(), "Try #") {
		t.Errorf("no suggestion: %v", err)
	}
	if after, _ := a.Storage.AppByIDOrName(ctx, "brand"); after.Settings.Theme != want {
		t.Errorf("a refused value changed the theme: %+v", after.Settings.Theme)
	}
}
