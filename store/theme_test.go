package store

import (
	"errors"
	"strings"
	"testing"
)

// TestThemeContrast: WCAG 2.2's ratio as published (white on black 21,
// #767676 on white just over 4.5); a failing colour is refused with its
// ratio and a suggestion that itself passes; a dark scheme is checked on
// its dark background (where a light colour passes and a dark one fails);
// bad values are refused by field.
func TestThemeContrast(t *testing.T) {
	t.Parallel()
	if r := ContrastRatio("#ffffff", "#000000"); r < 20.99 || r > 21.01 {
		t.Fatalf("white on black %.3f", r)
	}
	if r := ContrastRatio("#767676", "#ffffff"); r < 4.5 || r > 4.6 {
		t.Fatalf("#767676 on white %.3f", r)
	}
	if c, ok := NormalizeColor(" #0B6 "); !ok || c != "#00bb66" {
		t.Fatalf("normalize #0B6: %q %v", c, ok)
	}

	// The colour of the brief passes as written.
	got, err := CheckTheme(ThemeSettings{PrimaryColor: "#0b6e4f", AccentColor: "#0B6E4F", Scheme: "light", Font: "inter", Corners: "square"})
	if err != nil || got.PrimaryColor != "#0b6e4f" || got.AccentColor != "#0b6e4f" {
		t.Fatalf("#0b6e4f: %+v %v", got, err)
	}
	// Values no check let through read as the defaults.
	if r := (ThemeSettings{PrimaryColor: "red;}</style>", Scheme: "sepia", Font: "x", Corners: "y"}).Resolved(); r != (ThemeSettings{DefaultPrimaryColor, DefaultAccentColor, ThemeLight, "system", CornersRounded}) {
		t.Errorf("resolved %+v", r)
	}
	// The defaults pass.
	if _, err := CheckTheme(ThemeSettings{}.Resolved()); err != nil {
		t.Fatalf("defaults: %v", err)
	}

	var inv *ErrInvalid
	_, err = CheckTheme(ThemeSettings{PrimaryColor: "#8b9dff"})
	if !errors.As(err, &inv) || inv.Field != "primaryColor" {
		t.Fatalf("light blue on white: %v", err)
	}
	for _, want := range []string{"#8b9dff", "2.51:1", "page background #ffffff", "4.5:1", "Try #"} {
		if !strings.Contains(inv.Msg, want) {
			t.Errorf("message %q lacks %q", inv.Msg, want)
		}
	}
	suggestion := inv.Msg[strings.Index(inv.Msg, "Try #")+4 : strings.Index(inv.Msg, "Try #")+11]
	if _, err := CheckTheme(ThemeSettings{PrimaryColor: suggestion}); err != nil {
		t.Errorf("the suggestion %s fails itself: %v", suggestion, err)
	}
	if r := ContrastRatio(suggestion, LightBackground); r < MinContrast || r > 5.5 {
		t.Errorf("suggestion %s has %.2f on white: it should pass and stay near the colour", suggestion, r)
	}

	// Dark: a light colour passes, the brief's dark green fails and is
	// offered a lighter shade.
	if _, err := CheckTheme(ThemeSettings{PrimaryColor: "#8b9dff", Scheme: "dark"}); err != nil {
		t.Errorf("light blue on dark: %v", err)
	}
	_, err = CheckTheme(ThemeSettings{AccentColor: "#0b6e4f", Scheme: "dark"})
	if !errors.As(err, &inv) || inv.Field != "accentColor" || !strings.Contains(inv.Msg, "#111827") {
		t.Fatalf("dark green on dark: %v", err)
	}
	if s := PassingShade("#0b6e4f", DarkBackground); ContrastRatio(s, DarkBackground) < MinContrast || ContrastRatio(s, "#ffffff") > ContrastRatio("#0b6e4f", "#ffffff") {
		t.Errorf("dark shade %s is not a lighter passing shade", s)
	}

	for _, bad := range []struct {
		theme ThemeSettings
		field string
	}{
		{ThemeSettings{PrimaryColor: "green"}, "primaryColor"},
		{ThemeSettings{AccentColor: "#12345"}, "accentColor"},
		{ThemeSettings{Scheme: "sepia"}, "scheme"},
		{ThemeSettings{Font: "comic-sans"}, "font"},
		{ThemeSettings{Corners: "round"}, "corners"},
	} {
		if _, err := CheckTheme(bad.theme); !errors.As(err, &inv) || inv.Field != bad.field {
			t.Errorf("%+v: %v", bad.theme, err)
		}
	}
}
