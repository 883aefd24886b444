package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"marquee/render"
)

var updateRules = flag.Bool("update", false, "rewrite testdata/*.rules from the stylesheet as it is")

// The full stylesheet's rules keep their order (the cascade: a rule that
// came after another still comes after it), and the critical stylesheet is
// the same rules as before, each a rule of the full sheet, in its order.
// testdata/styles.rules and critical.rules were recorded from the sheets as
// they were before critical.css became an extract of styles.css; after a
// deliberate change to the stylesheet, rerun with -update and read the diff.
func TestStylesheetRuleOrderAndCriticalSubset(t *testing.T) {
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, fullCSS))
	if err != nil {
		t.Fatal(err)
	}
	part, err := extractCritical(string(src))
	if err != nil {
		t.Fatal(err)
	}
	full := minifiedRules(t, root, string(src))
	critical := minifiedRules(t, root, part)

	compareRules(t, "testdata/styles.rules", full)
	compareRules(t, "testdata/critical.rules", critical)

	// Every critical rule is in the full sheet, after the one before it.
	at := 0
	for _, r := range critical {
		i := indexFrom(full, r, at)
		if i < 0 {
			t.Errorf("critical rule missing from the full sheet, or before the previous critical rule there: %s", r)
			continue
		}
		at = i + 1
	}
}

func TestExtractCriticalRefusesUnpairedMarkers(t *testing.T) {
	got, err := extractCritical("a{x:1}\n" + criticalBegin + "b{x:2}" + criticalEnd + "c{x:3}" + criticalBegin + "d{x:4}" + criticalEnd)
	if err != nil || strings.Contains(got, "a{") || strings.Contains(got, "c{") || strings.Index(got, "b{") > strings.Index(got, "d{") {
		t.Errorf("extract = %q, %v; want b then d", got, err)
	}
	for _, bad := range []string{
		"a{}",
		criticalBegin + "a{}",
		"a{}" + criticalEnd,
		criticalEnd + "a{}" + criticalBegin,
		criticalBegin + "a{}" + criticalBegin + "b{}" + criticalEnd,
	} {
		if _, err := extractCritical(bad); err == nil {
			t.Errorf("extractCritical(%q) accepted", bad)
		}
	}
}

// minifiedRules answers css's top-level rules with whitespace minified only,
// so each keeps its own text.
func minifiedRules(t *testing.T, root, css string) []string {
	t.Helper()
	res := api.Build(api.BuildOptions{
		Stdin:            &api.StdinOptions{Contents: css, ResolveDir: filepath.Join(root, "pages"), Loader: api.LoaderCSS},
		AbsWorkingDir:    root,
		Outdir:           "out",
		Bundle:           true,
		MinifyWhitespace: true,
		LogLevel:         api.LogLevelSilent,
	})
	if err := render.BuildError(res.Errors); err != nil {
		t.Fatal(err)
	}
	for _, f := range res.OutputFiles {
		if strings.HasSuffix(f.Path, ".css") {
			return topLevelRules(string(f.Contents))
		}
	}
	t.Fatal("no css output")
	return nil
}

func compareRules(t *testing.T, golden string, got []string) {
	t.Helper()
	if *updateRules {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("%s: rule %d of %d is now\n  %s\nwas\n  %s\n(%d rules now)", golden, i+1, len(want), g, w, len(got))
			return
		}
	}
}

func indexFrom(rules []string, r string, from int) int {
	for i := from; i < len(rules); i++ {
		if rules[i] == r {
			return i
		}
	}
	return -1
}
