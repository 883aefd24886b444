package store

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/uptrace/bun"
)

// ThemeSettings are an app's own look (issue 42 item 1): the pages, the
// studio, the auth pages reached from the app and its mails use them. An
// empty field reads as the default (ResolvedTheme), so apps made before
// themes look as they did.
type ThemeSettings struct {
	// PrimaryColor (#rrggbb) fills buttons (their text is the page
	// background) and colours links.
	PrimaryColor string `json:"primaryColor"`
	// AccentColor (#rrggbb) marks what is current: the footer's active
	// tab, selected chips, "View all" links.
	AccentColor string `json:"accentColor"`
	// Scheme is light, dark or auto (the device's setting).
	Scheme string `json:"scheme"`
	// Font is one of ThemeFonts, served from our own origin.
	Font string `json:"font"`
	// Corners is rounded or square.
	Corners string `json:"corners"`
}

// Theme defaults: Marquee's own look before themes.
const (
	DefaultPrimaryColor = "#7c3aed"
	DefaultAccentColor  = "#7c3aed"
	ThemeLight          = "light"
	ThemeDark           = "dark"
	ThemeAuto           = "auto"
	CornersRounded      = "rounded"
	CornersSquare       = "square"
	// LightBackground and DarkBackground are the page backgrounds of the
	// two schemes (pages/styles.css --bg and its dark variant).
	LightBackground = "#ffffff"
	DarkBackground  = "#111827"
	// MinContrast is WCAG 2.2 AA's ratio for normal-size text (1.4.3).
	MinContrast = 4.5
)

// ThemeFont is one bundled open font: its key, the name shown in the
// studio, the woff2 file under public/fonts (none for the system font) and
// the CSS font stack.
type ThemeFont struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	File  string `json:"file,omitempty"`
	// Family is the @font-face family name (empty for the system stack).
	Family string `json:"family,omitempty"`
	Stack  string `json:"stack"`
	// Weights is the file's weight range (@font-face font-weight).
	Weights string `json:"weights,omitempty"`
}

const systemStack = `system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`

// ThemeFonts are the fonts a creator can pick: SIL Open Font License fonts
// from Fontsource, latin subset, variable weight, in public/fonts.
var ThemeFonts = []ThemeFont{
	{Key: "system", Label: "System (the device's own)", Stack: systemStack},
	{Key: "inter", Label: "Inter (sans-serif)", File: "/static/fonts/inter-latin-wght-normal.woff2", Family: "Inter", Weights: "100 900", Stack: `"Inter", ` + systemStack},
	{Key: "lora", Label: "Lora (serif)", File: "/static/fonts/lora-latin-wght-normal.woff2", Family: "Lora", Weights: "400 700", Stack: `"Lora", Georgia, "Times New Roman", serif`},
	{Key: "nunito", Label: "Nunito (rounded)", File: "/static/fonts/nunito-latin-wght-normal.woff2", Family: "Nunito", Weights: "200 1000", Stack: `"Nunito", ` + systemStack},
}

// FontByKey is the bundled font of key, the system font when unknown.
func FontByKey(key string) ThemeFont {
	for _, f := range ThemeFonts {
		if f.Key == key {
			return f
		}
	}
	return ThemeFonts[0]
}

// Resolved is the theme with every empty field set to its default. A
// value that is not one CheckTheme lets through (the settings column edited
// by hand) reads as the default too: pages put these values in CSS.
func (t ThemeSettings) Resolved() ThemeSettings {
	var ok bool
	if t.PrimaryColor, ok = NormalizeColor(t.PrimaryColor); !ok {
		t.PrimaryColor = DefaultPrimaryColor
	}
	if t.AccentColor, ok = NormalizeColor(t.AccentColor); !ok {
		t.AccentColor = DefaultAccentColor
	}
	if t.Scheme != ThemeDark && t.Scheme != ThemeAuto {
		t.Scheme = ThemeLight
	}
	t.Font = FontByKey(t.Font).Key
	if t.Corners != CornersSquare {
		t.Corners = CornersRounded
	}
	return t
}

var hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// NormalizeColor reads #rgb or #rrggbb into lower-case #rrggbb.
func NormalizeColor(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if !hexColor.MatchString(s) {
		return "", false
	}
	s = strings.ToLower(s)
	if len(s) == 4 {
		s = "#" + strings.Repeat(s[1:2], 2) + strings.Repeat(s[2:3], 2) + strings.Repeat(s[3:4], 2)
	}
	return s, true
}

type rgb struct{ r, g, b float64 } // 0..255

func parseRGB(hex string) rgb {
	var r, g, b int
	fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b)
	return rgb{float64(r), float64(g), float64(b)}
}

func (c rgb) hex() string {
	cl := func(v float64) int { return int(math.Max(0, math.Min(255, math.Round(v)))) }
	return fmt.Sprintf("#%02x%02x%02x", cl(c.r), cl(c.g), cl(c.b))
}

// luminance is WCAG's relative luminance.
func (c rgb) luminance() float64 {
	ch := func(v float64) float64 {
		v /= 255
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c.r) + 0.7152*ch(c.g) + 0.0722*ch(c.b)
}

// ContrastRatio is WCAG 2.2's contrast ratio of two #rrggbb colours (1 to 21).
func ContrastRatio(a, b string) float64 {
	la, lb := parseRGB(a).luminance(), parseRGB(b).luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// MixColor is a share (0..1) of a over b, as CSS color-mix in srgb.
func MixColor(a, b string, share float64) string {
	ca, cb := parseRGB(a), parseRGB(b)
	return rgb{ca.r*share + cb.r*(1-share), ca.g*share + cb.g*(1-share), ca.b*share + cb.b*(1-share)}.hex()
}

// TintShare is how much of the primary colour its tint (badges, selected
// options, on which primary text sits) holds over the background.
const TintShare = 0.12

// surfaces are what a theme colour is read against as text: the page
// background (for the primary also its buttons' text) and, for the
// primary, its own light tint (badges, selected options).
func surfaces(color, bg string, tint bool) []string {
	if !tint {
		return []string{bg}
	}
	return []string{bg, MixColor(color, bg, TintShare)}
}

// failing is the first surface color fails on, with its ratio ("" when
// it passes on every one).
func failing(color, bg string, tint bool) (string, float64) {
	for _, s := range surfaces(color, bg, tint) {
		if r := ContrastRatio(color, s); r < MinContrast {
			return s, r
		}
	}
	return "", 0
}

// PassingShade moves color towards black (on a light background) or white
// (on a dark one), in small steps, until it passes on bg: the suggestion
// of a refused colour, and the dark-mode shade of an auto theme's colours.
func PassingShade(color, bg string) string {
	return passingShade(color, bg, true)
}

func passingShade(color, bg string, tint bool) string {
	c := parseRGB(color)
	toward := rgb{0, 0, 0}
	if parseRGB(bg).luminance() < 0.5 {
		toward = rgb{255, 255, 255}
	}
	for i := 0; i <= 100; i++ {
		f := float64(i) / 100
		cand := rgb{c.r + (toward.r-c.r)*f, c.g + (toward.g-c.g)*f, c.b + (toward.b-c.b)*f}.hex()
		if on, _ := failing(cand, bg, tint); on == "" {
			return cand
		}
	}
	return toward.hex()
}

// Background is the page background of the theme's scheme (light for
// auto: its colours are checked as written against the light background
// and used on the dark one in a passing shade, DarkShade).
func (t ThemeSettings) Background() string {
	if t.Resolved().Scheme == ThemeDark {
		return DarkBackground
	}
	return LightBackground
}

// ErrContrast refuses a theme colour that fails WCAG 2.2 AA: it names the
// ratio and a passing colour to use instead.
type ErrContrast struct {
	Field, Label, Color, Surface, Suggestion string
	Ratio                                    float64
}

func (e *ErrContrast) Error() string {
	return fmt.Sprintf("The %s colour %s has a contrast ratio of %.2f:1 with %s; WCAG 2.2 AA needs at least 4.5:1 for text. Try %s instead.",
		e.Label, e.Color, math.Floor(e.Ratio*100)/100, e.Surface, e.Suggestion)
}

// CheckTheme validates a theme (empty fields are defaults) and returns it
// with its colours normalised. A colour that fails contrast is refused
// with an *ErrInvalid whose message names the ratio and a suggestion.
func CheckTheme(t ThemeSettings) (ThemeSettings, error) {
	switch t.Scheme {
	case "", ThemeLight, ThemeDark, ThemeAuto:
	default:
		return t, &ErrInvalid{Msg: "The background style is light, dark or auto (following the device)", Field: "scheme"}
	}
	switch t.Corners {
	case "", CornersRounded, CornersSquare:
	default:
		return t, &ErrInvalid{Msg: "The corner style is rounded or square", Field: "corners"}
	}
	if t.Font != "" && FontByKey(t.Font).Key != t.Font {
		keys := make([]string, len(ThemeFonts))
		for i, f := range ThemeFonts {
			keys[i] = f.Key
		}
		return t, &ErrInvalid{Msg: "Choose one of the bundled fonts: " + strings.Join(keys, ", "), Field: "font"}
	}
	bg := t.Background()
	for _, f := range []struct {
		field, label string
		value        *string
	}{{"primaryColor", "primary", &t.PrimaryColor}, {"accentColor", "accent", &t.AccentColor}} {
		if *f.value == "" {
			continue
		}
		c, ok := NormalizeColor(*f.value)
		if !ok {
			return t, &ErrInvalid{Msg: fmt.Sprintf("The %s colour must be a hex colour such as #0b6e4f", f.label), Field: f.field}
		}
		*f.value = c
		primary := f.field == "primaryColor"
		if on, ratio := failing(c, bg, primary); on != "" {
			surface := "the page background " + bg
			switch {
			case on != bg:
				surface = "its tint " + on + " (badges, selected options)"
			case primary:
				surface += " (also its buttons' text)"
			}
			e := &ErrContrast{Field: f.field, Label: f.label, Color: c, Surface: surface, Suggestion: passingShade(c, bg, primary), Ratio: ratio}
			return t, &ErrInvalid{Msg: e.Error(), Field: f.field}
		}
	}
	return t, nil
}

// SaveTheme checks and stores the app's theme (the studio's Theme form,
// its JSON call); the app's cached pages go with the landing.
func (s *Storage) SaveTheme(ctx context.Context, appID, actorID string, t ThemeSettings) (ThemeSettings, error) {
	t.Scheme, t.Font, t.Corners = strings.TrimSpace(t.Scheme), strings.TrimSpace(t.Font), strings.TrimSpace(t.Corners)
	t, err := CheckTheme(t)
	if err != nil {
		return t, err
	}
	return t, s.updateApp(ctx, appID, actorID, "settings.theme", "Theme", func(_ context.Context, _ bun.Tx, app *App) error {
		app.Settings.Theme = t
		return nil
	})
}
