package server

import (
	"mime"
	"strings"

	"marquee/store"
)

// The app's theme on its pages (issue 42 item 1): CSS custom properties in
// a <style> of the document's head, so the first paint has them without
// JavaScript. The selector is html:root, more specific than the
// stylesheet's :root, because the full stylesheet may come later in the
// document (linked at the end of the body after inlined critical CSS).

// darkVars are pages/styles.css's colours on the dark background.
const darkVars = "--fg:#f9fafb;--fg-soft:#e5e7eb;--muted:#9ca3af;--bg:" + store.DarkBackground +
	";--panel:#1f2937;--line:#374151;--header-bg:rgba(17,24,39,.95);color-scheme:dark;"

// colorVars are the theme colours for one background: primary (buttons,
// links) with the background as its buttons' text, the accent, and the
// primary's tints (badges, selected options).
func colorVars(primary, accent, bg string) string {
	var b strings.Builder
	b.WriteString("--accent:" + primary + ";--accent-fg:" + bg + ";--accent2:" + accent + ";")
	b.WriteString("--accent-tint:" + store.MixColor(primary, bg, store.TintShare/2) + ";")
	b.WriteString("--accent-tint2:" + store.MixColor(primary, bg, store.TintShare) + ";")
	return b.String()
}

// themeCSS is the <style> text of an app's theme.
func themeCSS(t store.ThemeSettings) string {
	t = t.Resolved()
	font := store.FontByKey(t.Font)
	var b strings.Builder
	if font.File != "" {
		b.WriteString(`@font-face{font-family:"` + font.Family + `";src:url(` + font.File + `) format("woff2");font-weight:` + font.Weights + `;font-style:normal;font-display:swap}`)
	}
	b.WriteString("html:root{--font:" + font.Stack + ";")
	if t.Corners == store.CornersSquare {
		b.WriteString("--radius:2px;--pill:2px;")
	}
	switch t.Scheme {
	case store.ThemeDark:
		b.WriteString(darkVars + colorVars(t.PrimaryColor, t.AccentColor, store.DarkBackground) + "}")
	case store.ThemeAuto:
		b.WriteString(colorVars(t.PrimaryColor, t.AccentColor, store.LightBackground) + "}")
		// Checked as written on the light background; on the dark one
		// each colour is used in a shade that passes there.
		b.WriteString("@media (prefers-color-scheme:dark){html:root{" + darkVars +
			colorVars(store.PassingShade(t.PrimaryColor, store.DarkBackground), store.PassingShade(t.AccentColor, store.DarkBackground), store.DarkBackground) + "}}")
	default:
		b.WriteString(colorVars(t.PrimaryColor, t.AccentColor, store.LightBackground) + "}")
	}
	return b.String()
}

// themeHead is what an app's theme adds to the document's head: the font's
// preload (a same-origin file under /static/fonts) and the style.
func themeHead(t store.ThemeSettings) string {
	font := store.FontByKey(t.Resolved().Font)
	head := ""
	if font.File != "" {
		head = `<link rel="preload" href="` + font.File + `" as="font" type="font/woff2" crossorigin>`
	}
	// Colours are #rrggbb and fonts come from a fixed list: nothing in the
	// text can end the element.
	return head + `<style id="theme">` + strings.ReplaceAll(themeCSS(t), "</", `<\/`) + `</style>`
}

// themeColorOf is the theme-color meta and the manifest's theme colour.
func themeColorOf(t store.ThemeSettings) string {
	return t.Resolved().PrimaryColor
}

func init() {
	// The bundled fonts (public/fonts) go out as what they are whatever
	// the machine's mime.types says: Go's own table has no woff2.
	_ = mime.AddExtensionType(".woff2", "font/woff2")
}
