package render

import (
	"bytes"
	"encoding/json"
	"html"
	"html/template"
	"slices"
	"strings"
)

// DocumentData is what the HTML shell needs besides the render result.
type DocumentData struct {
	Lang       string // default "en"
	Result     Result
	BodyClass  string
	ThemeColor string
	// ManifestURL is the web app manifest; each creator app has its own so
	// it installs to the home screen under its name. Default: the site's.
	ManifestURL string
	// Theme is markup for the head after the styles (the app's theme:
	// a font preload and a <style> of custom properties), trusted.
	Theme string
	// IconURL is the favicon (default the site's /static/icon.svg) and
	// AppleIconURL the Apple touch icon (none by default).
	IconURL, AppleIconURL string
	// IconType is IconURL's type (image/svg+xml for the default).
	IconType string
}

// RuntimeChunksKey is the Manifest.Chunks key for the client runtime's own
// chunks. Island names start with a capital letter, so it can't collide.
const RuntimeChunksKey = "runtime"

// Document wraps a render result in the page shell. The stylesheet is one
// hashed file, cached for a year, so a repeat visit costs no CSS bytes at
// all. Where the critical CSS covers the page's first screen (Result.Critical),
// it is inlined and the stylesheet is linked at the end of the body: browsers
// paint what comes before a stylesheet in the body without waiting for it,
// so the first paint needs no second request, without the inline onload
// handler of the usual preload trick (the CSP allows no inline script). Other
// pages link it in the head, render-blocking, so they never flash unstyled.
// Scripts appear only when the page rendered islands; they are modules,
// fetched after the first paint (writeIslandScripts).
func (e *Engine) Document(d DocumentData) []byte {
	lang := d.Lang
	if lang == "" {
		lang = "en"
	}
	var b strings.Builder
	inline := d.Result.Critical && e.critical != ""
	b.Grow(len(d.Result.HTML) + len(d.Result.Head) + len(e.critical) + 1024)
	b.WriteString(`<!doctype html><html lang="`)
	b.WriteString(html.EscapeString(lang))
	b.WriteString(`"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">`)
	b.WriteString(d.Result.Head)
	if inline {
		b.WriteString("<style>")
		// A stylesheet can't contain "</style" legitimately; guard anyway.
		b.WriteString(strings.ReplaceAll(e.critical, "</style", `<\/style`))
		b.WriteString("</style>")
	} else {
		e.writeStylesheet(&b)
	}
	manifest := d.ManifestURL
	if manifest == "" {
		manifest = "/manifest.webmanifest"
	}
	b.WriteString(`<link rel="manifest" href="`)
	b.WriteString(html.EscapeString(manifest))
	b.WriteString(`">`)
	b.WriteString(d.Theme)
	icon, iconType := d.IconURL, d.IconType
	if icon == "" {
		icon, iconType = "/static/icon.svg", "image/svg+xml"
	}
	b.WriteString(`<link rel="icon" href="`)
	b.WriteString(html.EscapeString(icon))
	if iconType != "" {
		b.WriteString(`" type="`)
		b.WriteString(html.EscapeString(iconType))
	}
	b.WriteString(`">`)
	if d.AppleIconURL != "" {
		b.WriteString(`<link rel="apple-touch-icon" href="`)
		b.WriteString(html.EscapeString(d.AppleIconURL))
		b.WriteString(`">`)
	}
	if d.ThemeColor != "" {
		b.WriteString(`<meta name="theme-color" content="`)
		b.WriteString(html.EscapeString(d.ThemeColor))
		b.WriteString(`">`)
	}
	b.WriteString("</head><body")
	if d.BodyClass != "" {
		b.WriteString(` class="`)
		b.WriteString(html.EscapeString(d.BodyClass))
		b.WriteString(`"`)
	}
	b.WriteString(">")
	b.WriteString(d.Result.HTML)
	if inline {
		e.writeStylesheet(&b)
	}
	if len(d.Result.Islands) > 0 {
		e.writeIslandScripts(&b, d.Result.Islands, d.Result.Lazy)
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
}

func (e *Engine) writeStylesheet(b *strings.Builder) {
	if e.cssURL == "" {
		return
	}
	b.WriteString(`<link rel="stylesheet" href="`)
	b.WriteString(html.EscapeString(e.cssURL))
	b.WriteString(`">`)
}

// writeIslandScripts writes the island URL map, the list of modules to
// preload (the runtime's files, the used islands and their chunks) and the
// boot module. The boot module preloads the list and imports the runtime
// once the page has loaded and painted (islands/client.ts says why), and the
// document fetches it at low priority: no island script is on the first
// paint's path, in the browser or in Lighthouse's simulation of it.
func (e *Engine) writeIslandScripts(b *strings.Builder, islands, lazy []string) {
	urls := make(map[string]string, len(islands))
	preload := append([]string{}, e.manifest.Chunks[RuntimeChunksKey]...) // [] in JSON, never null
	for _, name := range islands {
		url, ok := e.manifest.Islands[name]
		if !ok {
			e.log.Error("render: island missing from build manifest", "island", name)
			continue
		}
		urls[name] = url
		if slices.Contains(lazy, name) {
			continue // fetched when it hydrates
		}
		preload = append(preload, url)
		preload = append(preload, e.manifest.Chunks[name]...)
	}
	seen := make(map[string]bool, len(preload))
	preload = slices.DeleteFunc(preload, func(url string) bool {
		drop := url == "" || seen[url]
		seen[url] = true
		return drop
	})
	// encoding/json escapes <, > and & as \u003c..., so neither list can end
	// the script element early.
	mapJSON, _ := json.Marshal(urls)
	preloadJSON, _ := json.Marshal(preload)
	b.WriteString(`<script type="application/json" id="marquee-islands">`)
	b.Write(mapJSON)
	b.WriteString(`</script><script type="application/json" id="marquee-preload">`)
	b.Write(preloadJSON)
	b.WriteString(`</script><script type="module" fetchpriority="low" src="`)
	b.WriteString(html.EscapeString(e.manifest.Runtime))
	b.WriteString(`"></script>`)
}

var fallbackTemplate = template.Must(template.New("fallback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<title>{{.Title}}</title>
{{if .CSS}}<link rel="stylesheet" href="{{.CSS}}">{{end}}
</head><body>
<main class="fallback">
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{if .Links}}<ul>{{range .Links}}<li><a href="{{index . 1}}">{{index . 0}}</a></li>{{end}}</ul>{{end}}
</main>
</body></html>`))

// FallbackDocument is a plain page, rendered without goja, for when a render
// fails: it still links the site's stylesheet, and links (label, href) onward.
func (e *Engine) FallbackDocument(title, message string, links [][2]string) []byte {
	var buf bytes.Buffer
	err := fallbackTemplate.Execute(&buf, struct {
		Title, Message string
		CSS            string
		Links          [][2]string
	}{title, message, e.cssURL, links})
	if err != nil {
		e.log.Error("render: fallback document", "err", err)
		return []byte("<!doctype html><title>Error</title><p>Something went wrong.</p>")
	}
	return buf.Bytes()
}
