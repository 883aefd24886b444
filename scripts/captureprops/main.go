// Command captureprops seeds the demo into a temporary SQLite file and writes
// the props of the landing and community pages, as rendered for a visitor
// and a member, to render/testdata/bench/ for the render benchmark.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"

	"marquee/assemble"
	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "capture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := server.LoadConfig(func(key string) string {
		return map[string]string{"DATABASE_URL": filepath.Join(dir, "c.db"), "MEDIA_DIR": filepath.Join(dir, "media"),
			"SECRET_KEY": "bench"}[key]
	})
	if err != nil {
		return err
	}
	a, err := assemble.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := seed.Demo(ctx, a.DB, a.Files); err != nil {
		return err
	}
	var mu sync.Mutex
	got := map[string][]byte{}
	engine, err := a.Renderer(render.Options{Observe: func(name string, props []byte) {
		mu.Lock()
		got[name] = append([]byte(nil), props...)
		mu.Unlock()
	}})
	if err != nil {
		return err
	}
	srv := a.Server(engine, assemble.ServerOptions{NoPageCache: true})
	ts := httptest.NewServer(srv.Main())
	defer ts.Close()
	out := "render/testdata/bench"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, p := range []struct{ page, path string }{{"Landing", "/apps/demo"}, {"Community", "/apps/demo/community"}} {
		res, err := http.Get(ts.URL + p.path)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		mu.Lock()
		props := got[p.page]
		mu.Unlock()
		if props == nil {
			return fmt.Errorf("%s: no props (%d)", p.path, res.StatusCode)
		}
		name := p.page
		if err := os.WriteFile(filepath.Join(out, name+".json"), props, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d bytes of props, %d bytes of HTML\n", p.page, len(props), len(body))
	}
	return nil
}
