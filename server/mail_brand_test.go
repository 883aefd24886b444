package server

import (
	"context"
	"testing"

	"marquee/store"
)

// TestMailBrandWearsTheDefaultTheme: an app that never chose a theme shows
// the default theme's colour on its pages, and its mails (the newsletter's
// band and buttons) wear the same colour, not the platform's dark grey; a
// chosen colour too pale for white comes in a shade that passes there.
func TestMailBrandWearsTheDefaultTheme(t *testing.T) {
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	app, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if app.Settings.Theme.PrimaryColor != "" {
		t.Fatalf("the demo chose a theme colour (%q); this test wants one that did not", app.Settings.Theme.PrimaryColor)
	}
	b, err := ts.store.MailBrandOf(ctx, app.ID)
	if err != nil || b.Color != store.DefaultPrimaryColor {
		t.Fatalf("an unthemed app's mail colour %q (%v), want its pages' %s", b.Color, err, store.DefaultPrimaryColor)
	}
	app.Settings.Theme.PrimaryColor = "#8b9dff"
	if _, err := ts.store.DB().NewUpdate().Model(app).Column("settings").WherePK().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ts.store.InvalidateLanding(ctx, app.ID)
	b, err = ts.store.MailBrandOf(ctx, app.ID)
	if want := store.PassingShade("#8b9dff", store.LightBackground); err != nil || b.Color != want || want == "#8b9dff" {
		t.Fatalf("a pale theme's mail colour %q (%v), want the passing shade %s", b.Color, err, want)
	}
}
