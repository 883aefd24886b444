package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// `marquee version` prints one line: the version, the commit and Go's.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = run(context.Background(), []string{"version"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	line := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(line, "marquee ") || !strings.Contains(line, "commit ") ||
		!strings.Contains(line, runtime.Version()) || strings.Contains(line, "\n") {
		t.Errorf("version: %q %v", line, err)
	}
}

// The Makefile stamps the version and commit from git into the binary
// (issue 41 item 14): `marquee version` printed "dev commit unknown".
// Not parallel: it sets the stamped variables, which TestVersionCommand reads.
func TestMakefileStampsTheVersion(t *testing.T) {
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	out, err := exec.Command("make", "-n", "build").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	var build string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, " build ") && strings.Contains(line, "-o bin/marquee") {
			build = line
		}
	}
	if !strings.Contains(build, "-X main.version=") || strings.Contains(build, "-X main.version= ") ||
		!strings.Contains(build, "-X main.commit="+strings.TrimSpace(string(rev))) {
		t.Errorf("build command does not stamp the version and commit: %q", build)
	}
	saved, savedCommit := version, commit
	defer func() { version, commit = saved, savedCommit }()
	version, commit = "v1.2.3", "abc123"
	if line := versionLine(); !strings.HasPrefix(line, "marquee v1.2.3 commit abc123") {
		t.Errorf("stamped version line %q", line)
	}
}
