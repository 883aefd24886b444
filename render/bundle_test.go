package render

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

// The server bundle rewrites parts of React's renderer for goja's sake
// (joinChunksPlugin). Rendered with and without the rewrites, the real
// pages with the seeded demo's props must come out byte for byte the same.
func TestRewritesKeepReactsOutput(t *testing.T) {
	root, err := ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	patched := bundleEngine(t, root, true)
	plain := bundleEngine(t, root, false)
	for _, page := range []string{"Landing", "Community"} {
		raw, err := os.ReadFile(filepath.Join(root, "render/testdata/bench", page+".json"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := patched.Render(context.Background(), page, json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s, rewritten: %v", page, err)
		}
		want, err := plain.Render(context.Background(), page, json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s, as React ships it: %v", page, err)
		}
		if len(got.HTML) < 5000 || got.HTML != want.HTML || got.Head != want.Head {
			t.Errorf("%s: rewritten renderer's output (%d bytes) differs from React's (%d bytes)", page, len(got.HTML), len(want.HTML))
		}
	}
}

// bundleEngine builds pages/server-entry.tsx, with the rewrites or without,
// into a directory of its own and starts an engine on it.
func bundleEngine(t *testing.T, root string, rewrites bool) *Engine {
	t.Helper()
	dir := t.TempDir()
	build := filepath.Join(dir, "public", "build")
	opts := ServerBuildOptions(root, "pages/server-entry.tsx", filepath.Join(build, "server.js"))
	if !rewrites {
		opts.Plugins = nil
	}
	if err := BuildError(api.Build(opts).Errors); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(Manifest{Server: "public/build/server.js"})
	if err := os.WriteFile(filepath.Join(build, "manifest.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{ManifestPath: filepath.Join(build, "manifest.json"), PoolSize: 1, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Each rewritten props loop visits the same keys in the same order as the
// for-in it replaces, whether it declared its variable or reused one.
func TestOwnKeyLoops(t *testing.T) {
	loops := []string{
		`var seen = []; for (var propKey in props) hasOwnProperty.call(props, propKey) && seen.push(propKey + "=" + props[propKey]);`,
		`var seen = [], k; for (k in props) seen.push(k);`,
	}
	src := "var hasOwnProperty = Object.prototype.hasOwnProperty; var props = {b: 1, a: 2, 3: 'x', c: undefined}; var out = [];\n"
	for _, l := range loops {
		src += "(function () { " + l + " out.push(seen.join()); })();\n"
	}
	for i := len(loops); i < propsLoops; i++ {
		src += "(function () { var n = 0; for (var key in props) n++; out.push(n); })();\n"
	}
	src += "out.join('|')"
	rewritten, err := ownKeyLoops(src)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rewritten, " in props)") {
		t.Fatalf("a for-in over props is left:\n%s", rewritten)
	}
	run := func(js string) string {
		v, err := goja.New().RunString(js)
		if err != nil {
			t.Fatalf("%v in\n%s", err, js)
		}
		return v.String()
	}
	if got, want := run(rewritten), run(src); got != want || !strings.HasPrefix(got, "3=x,b=1,a=2,c=undefined|3,b,a,c|4") {
		t.Errorf("rewritten loops saw %q, for-in %q", got, want)
	}
	if _, err := ownKeyLoops("for (var k in props) {}"); err == nil {
		t.Error("a renderer with another number of props loops was rewritten without a word")
	}
}
