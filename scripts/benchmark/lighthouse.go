package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"marquee/render"
)

// runLighthouse prints Lighthouse's mobile performance figures for the
// visitor pages served at base (scripts/benchmark/lighthouse.mjs). It is
// optional: skipped with BENCH_LIGHTHOUSE=0 or when the npm devDependency is
// not installed, and a failure is reported, not fatal.
func runLighthouse(base string) {
	if os.Getenv("BENCH_LIGHTHOUSE") == "0" {
		return
	}
	root, err := render.ProjectRoot()
	if err != nil {
		return
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules/lighthouse")); err != nil {
		fmt.Println("lighthouse: skipped (npm ci installs it)")
		return
	}
	args := []string{filepath.Join(root, "scripts/benchmark/lighthouse.mjs")}
	for _, p := range pagesUnderTest {
		args = append(args, base+p.path)
	}
	out, err := exec.Command("node", args...).CombinedOutput()
	if err != nil {
		fmt.Printf("lighthouse: failed: %v: %s\n", err, strings.TrimSpace(string(out)))
		return
	}
	fmt.Print("Lighthouse, mobile preset (simulated slow 4G, 4x CPU slowdown):\n" + string(out))
}
