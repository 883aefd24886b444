package assemble

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server"
	"marquee/store/storetest"
)

// The assembled product serves the seeded demo on either database, with its
// job queue built on the same database.
func TestOpenServesTheDemo(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]string{
		"sqlite":   filepath.Join(t.TempDir(), "app.db"),
		"postgres": storetest.URL(storetest.Postgres(t)),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg, err := server.LoadConfig(func(key string) string {
				return map[string]string{"DATABASE_URL": dsn, "MEDIA_DIR": dir, "DB_MAX_CONNS": "3"}[key]
			})
			if err != nil {
				t.Fatal(err)
			}
			a, err := Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if err := seed.Demo(ctx, a.DB, a.Files); err != nil {
				t.Fatal(err)
			}
			root, err := render.ProjectRoot()
			if err != nil {
				t.Fatal(err)
			}
			engine, err := a.Renderer(render.Options{ManifestPath: filepath.Join(root, "public/build/manifest.json")})
			if err != nil {
				t.Fatal(err)
			}
			if engine.Timeout() != cfg.RenderTimeout {
				t.Errorf("renders are cut at %s, RENDER_TIMEOUT is %s", engine.Timeout(), cfg.RenderTimeout)
			}
			srv := a.Server(engine, ServerOptions{})
			// One push sender: the server's notices and the jobs' fan-outs
			// sign with the same keys, and links reach the apps' addresses.
			if a.Push == nil || a.Push.AppBase == nil {
				t.Error("the server did not take the app's push sender")
			}
			if _, err := a.Jobs(ctx, srv); err != nil {
				t.Fatalf("job queue: %v", err)
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/apps/demo", nil)
			// httptest's example.com is nobody's domain: an unknown host is 404.
			req.Host = "localhost"
			srv.Main().ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Upcoming Events") {
				t.Fatalf("GET /apps/demo: %d", rec.Code)
			}
		})
	}
}
