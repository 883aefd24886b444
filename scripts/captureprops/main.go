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

	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server"
	"marquee/server/media"
	"marquee/store"
	"marquee/store/migrations"
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
	db, err := store.Open(filepath.Join(dir, "c.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := store.Migrate(ctx, db, migrations.Migrations); err != nil {
		return err
	}
	files := &media.Local{Dir: filepath.Join(dir, "media"), BaseURL: "http://localhost:3000", Key: []byte("bench")}
	if err := seed.Demo(ctx, db, files); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var mu sync.Mutex
	got := map[string][]byte{}
	engine, err := render.New(render.Options{Logger: logger, Observe: func(name string, props []byte) {
		mu.Lock()
		got[name] = append([]byte(nil), props...)
		mu.Unlock()
	}})
	if err != nil {
		return err
	}
	cfg, _ := server.LoadConfig(func(string) string { return "" })
	st := store.NewStorage(db, store.NewMemoryCache(), media.Signer{Storage: files}, logger)
	st.Build = engine.BuildID()
	srv := server.New(server.Deps{Config: cfg, Store: st, Renderer: engine, Files: files, Logger: logger, NoPageCache: true})
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
