// Command build bundles the front end with esbuild into public/build/:
// the server bundle goja runs, the hashed client modules (islands runtime and
// one entry per island, sharing React through split chunks), the hashed CSS,
// and manifest.json that tells the Go server where everything is.
//
// Run from the project root: go run ./scripts/build
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	"marquee/render"
)

const outDir = "public/build"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "build failed:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := render.ProjectRoot()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	// The types first: the bundles below are built from the TSX that uses them.
	if err := writeTypes(); err != nil {
		return err
	}
	if err := writeOpenAPITypes(root); err != nil {
		return err
	}
	// Wipe old output so stale hashed files never linger.
	if err := os.RemoveAll(outDir); err != nil {
		return err
	}
	m := render.Manifest{
		Server:  outDir + "/server.js",
		Islands: map[string]string{},
		Chunks:  map[string][]string{},
	}
	if err := render.BuildServerBundle("pages/server-entry.tsx", m.Server); err != nil {
		return fmt.Errorf("server bundle: %w", err)
	}
	if err := buildClient(root, &m); err != nil {
		return fmt.Errorf("client bundle: %w", err)
	}
	if m.CSS, m.CriticalCSS, err = buildCSS(root); err != nil {
		return fmt.Errorf("css: %w", err)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(outDir+"/manifest.json", data, 0o644); err != nil {
		return err
	}
	fmt.Printf("built %s: %d island(s), runtime %s\n", outDir, len(m.Islands), m.Runtime)
	return nil
}

// islandEntries lists islands/[A-Z]*.tsx: every component there is an
// island (the marker that wraps them is server code, in pages/lib).
func islandEntries() ([]string, error) {
	return filepath.Glob("islands/[A-Z]*.tsx")
}

func buildClient(root string, m *render.Manifest) error {
	islands, err := islandEntries()
	if err != nil {
		return err
	}
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:     root,
		EntryPoints:       append([]string{"islands/client.ts"}, islands...),
		Outdir:            outDir + "/client",
		EntryNames:        "[name]-[hash]",
		ChunkNames:        "chunk-[hash]",
		Bundle:            true,
		Write:             true,
		Splitting:         true,
		Format:            api.FormatESModule,
		Platform:          api.PlatformBrowser,
		Target:            api.ES2020,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		JSX:               api.JSXAutomatic,
		Define:            map[string]string{"process.env.NODE_ENV": `"production"`},
		Metafile:          true,
		LogLevel:          api.LogLevelSilent,
	})
	if err := render.BuildError(res.Errors); err != nil {
		return err
	}
	var meta metafile
	if err := json.Unmarshal([]byte(res.Metafile), &meta); err != nil {
		return err
	}
	for out, info := range meta.Outputs {
		if info.EntryPoint == "" {
			continue
		}
		chunks := meta.staticImports(out)
		if info.EntryPoint == "islands/client.ts" {
			// The boot module imports the runtime only after the first
			// paint; the document lists the runtime's files for it to
			// preload then.
			m.Runtime = staticURL(out)
			m.Chunks[render.RuntimeChunksKey] = meta.dynamicImports(out)
			continue
		}
		if !slices.Contains(islands, info.EntryPoint) {
			continue // a module split off by import(), such as the runtime: not an island
		}
		name := strings.TrimSuffix(filepath.Base(info.EntryPoint), ".tsx")
		m.Islands[name] = staticURL(out)
		m.Chunks[name] = chunks
	}
	if m.Runtime == "" {
		return fmt.Errorf("no output for islands/client.ts")
	}
	return nil
}

// The full stylesheet. Its first-screen rules sit between criticalBegin and
// criticalEnd comments; the build extracts them, in order, into the critical
// stylesheet that pages declaring criticalCSS inline (registry.ts).
const (
	fullCSS       = "pages/styles.css"
	criticalBegin = "/* critical: begin */"
	criticalEnd   = "/* critical: end */"
)

// buildCSS writes the hashed full and critical stylesheets and returns their
// paths. The critical one is built from the marked blocks of the full one,
// so every rule in it is a rule of the full sheet, in the same order, and
// the page changes nothing on screen when the full sheet arrives.
func buildCSS(root string) (full, critical string, err error) {
	src, err := os.ReadFile(filepath.Join(root, fullCSS))
	if err != nil {
		return "", "", err
	}
	part, err := extractCritical(string(src))
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", fullCSS, err)
	}
	// The extract is a build input only: a temporary file beside nothing
	// (the stylesheets reference no files by relative URL).
	tmp, err := os.MkdirTemp("", "marquee-css-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	criticalSrc := filepath.Join(tmp, "critical.css")
	if err := os.WriteFile(criticalSrc, []byte(part), 0o644); err != nil {
		return "", "", err
	}
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:    root,
		EntryPoints:      []string{fullCSS, criticalSrc},
		Outdir:           outDir,
		EntryNames:       "[name]-[hash]",
		AssetNames:       "assets/[name]-[hash]",
		PublicPath:       "/static/build",
		Bundle:           true,
		Write:            true,
		MinifyWhitespace: true,
		MinifySyntax:     true,
		Metafile:         true,
		Loader: map[string]api.Loader{
			".png": api.LoaderFile, ".svg": api.LoaderFile, ".jpg": api.LoaderFile,
			".woff": api.LoaderFile, ".woff2": api.LoaderFile,
		},
		LogLevel: api.LogLevelSilent,
	})
	if err := render.BuildError(res.Errors); err != nil {
		return "", "", err
	}
	var meta metafile
	if err := json.Unmarshal([]byte(res.Metafile), &meta); err != nil {
		return "", "", err
	}
	for out, info := range meta.Outputs {
		switch {
		case !strings.HasSuffix(out, ".css"):
		case info.EntryPoint == fullCSS:
			full = out
		case strings.HasSuffix(info.EntryPoint, "/critical.css"):
			critical = out
		}
	}
	if full == "" || critical == "" {
		return "", "", fmt.Errorf("no css output")
	}
	return full, critical, nil
}

// extractCritical answers the text between each criticalBegin and the next
// criticalEnd of css, in order. Markers must pair up and not nest.
func extractCritical(css string) (string, error) {
	var b strings.Builder
	rest := css
	for {
		i := strings.Index(rest, criticalBegin)
		j := strings.Index(rest, criticalEnd)
		if i < 0 {
			if j >= 0 {
				return "", fmt.Errorf("%q without a %q before it", criticalEnd, criticalBegin)
			}
			break
		}
		if j >= 0 && j < i {
			return "", fmt.Errorf("%q without a %q before it", criticalEnd, criticalBegin)
		}
		rest = rest[i+len(criticalBegin):]
		j = strings.Index(rest, criticalEnd)
		if j < 0 {
			return "", fmt.Errorf("%q without a %q after it", criticalBegin, criticalEnd)
		}
		if strings.Contains(rest[:j], criticalBegin) {
			return "", fmt.Errorf("%q inside a critical block", criticalBegin)
		}
		b.WriteString(rest[:j])
		b.WriteString("\n")
		rest = rest[j+len(criticalEnd):]
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", fmt.Errorf("no %q block: the first screen would have no style", criticalBegin)
	}
	return b.String(), nil
}

// topLevelRules splits minified CSS into its top-level rules and at-rules.
func topLevelRules(css string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(css); i++ {
		switch css[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				out = append(out, strings.TrimSpace(css[start:i+1]))
				start = i + 1
			}
		case ';':
			if depth == 0 { // @import, @charset
				start = i + 1
			}
		}
	}
	return out
}

// metafile is the part of esbuild's metafile we read.
type metafile struct {
	Outputs map[string]struct {
		EntryPoint string `json:"entryPoint"`
		Imports    []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"imports"`
	} `json:"outputs"`
}

// staticImports returns the URLs of every chunk out statically imports,
// transitively, in a stable order: the browser needs them all before the
// module runs, so they are worth a modulepreload.
func (m metafile) staticImports(out string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, imp := range m.Outputs[p].Imports {
			if imp.Kind == "import-statement" && !seen[imp.Path] {
				seen[imp.Path] = true
				walk(imp.Path)
			}
		}
	}
	walk(out)
	urls := make([]string, 0, len(seen))
	for p := range seen {
		urls = append(urls, staticURL(p))
	}
	sort.Strings(urls)
	return urls
}

// dynamicImports returns the URLs of the chunks out imports with import()
// and every chunk those import statically, in a stable order.
func (m metafile) dynamicImports(out string) []string {
	seen := map[string]bool{}
	for _, imp := range m.Outputs[out].Imports {
		if imp.Kind != "dynamic-import" || seen[staticURL(imp.Path)] {
			continue
		}
		seen[staticURL(imp.Path)] = true
		for _, url := range m.staticImports(imp.Path) {
			seen[url] = true
		}
	}
	urls := make([]string, 0, len(seen))
	for url := range seen {
		urls = append(urls, url)
	}
	sort.Strings(urls)
	return urls
}

// staticURL maps an output path under public/ to the URL the server serves
// it at: public/build/x.js -> /static/build/x.js.
func staticURL(path string) string {
	return "/static/" + strings.TrimPrefix(filepath.ToSlash(path), "public/")
}
