package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"marquee/assemble"
	"marquee/render"
	"marquee/store"
	"marquee/store/storetest"
)

// TestBenchData seeds a small bench app through the CLI on PostgreSQL and
// SQLite, checks what landed, and that a second run refuses.
func TestBenchData(t *testing.T) {
	for _, dbName := range []string{"postgres", "sqlite"} {
		t.Run(dbName, func(t *testing.T) {
			dir := t.TempDir()
			dsn := filepath.Join(dir, "bench.db")
			if dbName == "postgres" {
				dsn = storetest.URL(storetest.Postgres(t))
			}
			t.Setenv("DATABASE_URL", dsn)
			t.Setenv("MEDIA_DIR", filepath.Join(dir, "media"))
			t.Setenv("REDIS_URL", "")
			t.Setenv("S3_ENDPOINT", "")
			t.Setenv("RENDER_AHEAD", "true")
			ctx := context.Background()
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			args := []string{"--posts", "500", "--items", "60", "--events", "30", "--users", "20"}
			if err := benchData(ctx, args, logger); err != nil {
				t.Fatal(err)
			}
			err := benchData(ctx, args, logger)
			if err == nil || !strings.Contains(err.Error(), `app "bench" already exists`) {
				t.Fatalf("second run: want a refusal, got %v", err)
			}

			db, err := store.Open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var appID string
			if err := db.NewSelect().Model((*store.App)(nil)).Column("id").Where("name = 'bench'").Scan(ctx, &appID); err != nil {
				t.Fatal(err)
			}
			count := func(model any, where string, args ...any) int {
				t.Helper()
				n, err := db.NewSelect().Model(model).Where("app_id = ?", appID).Where(where, args...).Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return int(n)
			}
			for _, c := range []struct {
				what      string
				got, want int
			}{
				{"posts", count((*store.Message)(nil), "type = ?", store.MessagePost), 500},
				{"store items", count((*store.StoreItem)(nil), "deleted_at IS NULL"), 60},
				{"events", count((*store.Event)(nil), "1 = 1"), 30},
				{"members", count((*store.Membership)(nil), "1 = 1"), 20},
			} {
				if c.got != c.want {
					t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
				}
			}
			if n := count((*store.Message)(nil), "type = ?", store.MessageReply); n < 100 {
				t.Errorf("comments: %d, want at least 100", n)
			}
			if n := count((*store.Reaction)(nil), "1 = 1"); n < 500 {
				t.Errorf("likes: %d, want at least 500", n)
			}
			// The feed of the seeded app reads back newest first.
			st := store.New(store.Options{DB: db, Logger: logger})
			var communityID string
			if err := db.NewSelect().Model((*store.Community)(nil)).Column("id").Where("app_id = ?", appID).Scan(ctx, &communityID); err != nil {
				t.Fatal(err)
			}
			p, err := st.CommunityPosts(ctx, communityID, store.MessagePost, 1, 20)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Messages) != 20 || !strings.HasPrefix(p.Messages[0].Content, "Post 500:") || p.Pagination.Total != 500 {
				t.Fatalf("feed page 1: %d posts, first %q, total %d", len(p.Messages), p.Messages[0].Content, p.Pagination.Total)
			}
			if dbName == "sqlite" {
				// The app's visitor pages were rendered ahead beside the
				// database: a server started on it answers their first
				// views without rendering them.
				servedAhead(t, ctx, logger, "/apps/bench", "/apps/bench/community")
			}
		})
	}
}

// servedAhead starts a server on the environment's database and checks
// that the first view of each path is answered from the page cache.
func servedAhead(t *testing.T, ctx context.Context, logger *slog.Logger, paths ...string) {
	t.Helper()
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	engine, err := a.Renderer(render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := a.Server(engine, assemble.ServerOptions{})
	public, err := url.Parse(a.Config.PublicURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = public.Host
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		srv.Main().ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("X-Page-Cache") != "hit" {
			t.Errorf("first view of %s: %d, X-Page-Cache %q, want 200 from the pages rendered ahead", path, rec.Code, rec.Header().Get("X-Page-Cache"))
		}
	}
}
