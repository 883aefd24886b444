package main

import (
	"context"
	"io"
	"log/slog"
	"os"
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
