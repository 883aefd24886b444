package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"marquee/scripts/seed"
	"marquee/server/media"
	"marquee/store"
	"marquee/store/storetest"
)

func seeded(t *testing.T, db *bun.DB, cache store.Cache) *store.Storage {
	t.Helper()
	return store.New(seededOptions(t, db, cache))
}

// seededOptions seeds the demo into db and answers the options of a store
// over it, for a test that changes them or builds a second store alike.
func seededOptions(t *testing.T, db *bun.DB, cache store.Cache) store.Options {
	t.Helper()
	files := &media.Local{Dir: t.TempDir(), BaseURL: "http://test", Key: []byte("k")}
	if err := seed.Demo(context.Background(), db, files); err != nil {
		t.Fatalf("seed: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	return store.Options{DB: db, Cache: cache, Media: media.Signer{Storage: files}, MediaURL: "http://test", Logger: logger}
}

func testRedis(t *testing.T) *store.RedisCache {
	t.Helper()
	client := storetest.Redis(t)
	// A prefix per test keeps parallel test runs apart.
	return &store.RedisCache{Client: client, Prefix: fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())}
}

func TestLandingLoader(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := seeded(t, db, store.NewMemoryCache())

		byName, err := s.Landing(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		byID, err := s.Landing(ctx, byName.ID)
		if err != nil {
			t.Fatal(err)
		}
		if byID.ID != byName.ID || byID.Name != "demo" {
			t.Fatalf("id and name lookups differ: %s vs %s", byID.ID, byName.ID)
		}
		v := byName
		if len(v.RecentPosts) == 0 || len(v.RecentPosts) > 6 {
			t.Fatalf("recent posts: %d", len(v.RecentPosts))
		}
		for i := 1; i < len(v.RecentPosts); i++ {
			if v.RecentPosts[i].CreatedAt.After(v.RecentPosts[i-1].CreatedAt) {
				t.Fatalf("posts not newest first")
			}
		}
		for _, p := range v.RecentPosts {
			if p.Type != store.MessagePost || p.Sender.Username == "" {
				t.Fatalf("bad post %+v", p)
			}
			for _, a := range p.Attachments {
				if !strings.HasPrefix(a.Media.SignedURL, "http://test/media/") {
					t.Fatalf("attachment not signed: %q", a.Media.SignedURL)
				}
			}
		}
		if v.Community == nil || v.Community.Count.Posts != 30 {
			t.Fatalf("community post count: %+v", v.Community)
		}
		now := time.Now()
		if len(v.UpcomingEvents) == 0 || len(v.UpcomingEvents) > 5 {
			t.Fatalf("upcoming events: %d", len(v.UpcomingEvents))
		}
		for _, e := range v.UpcomingEvents {
			if e.EndDate.Before(now) {
				t.Fatalf("past event %s in upcoming", e.Name)
			}
		}
		if len(v.FeaturedStoreItems) == 0 {
			t.Fatal("no featured items")
		}
		for _, it := range v.FeaturedStoreItems {
			if !it.IsFeatured {
				t.Fatalf("item %s not featured", it.Name)
			}
		}
		if v.Banner == nil || v.Banner.SignedURL == "" || v.Title == nil {
			t.Fatal("banner and title images missing")
		}
		if strings.Contains(v.Bio, "<script") || strings.Contains(v.Bio, "onclick") {
			t.Fatalf("bio not sanitised: %s", v.Bio)
		}
		if !strings.Contains(v.Bio, "<p>") {
			t.Fatalf("bio lost its markup: %s", v.Bio)
		}
		if len(v.Settings.Features.Links.Settings.Links) < 3 || len(v.DonationTiers) == 0 || len(v.SuggestedDonationAmounts) == 0 {
			t.Fatal("links, tiers or suggested amounts missing")
		}

		acme, err := s.Landing(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if acme.Settings.Features.Store.Enabled || len(acme.FeaturedStoreItems) != 0 || acme.Store != nil {
			t.Fatal("acme has its store off but the landing shows items")
		}
		for _, p := range acme.RecentPosts {
			for _, d := range v.RecentPosts {
				if p.ID == d.ID {
					t.Fatal("acme shows a demo post")
				}
			}
		}

		if _, err := s.Landing(ctx, "missing-app"); err != store.ErrNotFound {
			t.Fatalf("missing app: %v", err)
		}
	})
}

// insertPost writes a post directly, as a test of caching only.
func insertPost(t *testing.T, s *store.Storage, app *store.AppView, content string) {
	t.Helper()
	msg := &store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: app.Community.ID,
		SenderID: app.RecentPosts[0].SenderID, Type: store.MessagePost, Content: content,
		CreatedAt: time.Now().Add(time.Minute)}
	if _, err := s.DB().NewInsert().Model(msg).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestLandingCacheInvalidation(t *testing.T) {
	t.Parallel()
	caches := map[string]func(t *testing.T) store.Cache{
		"memory": func(*testing.T) store.Cache { return store.NewMemoryCache() },
		"redis":  func(t *testing.T) store.Cache { return testRedis(t) },
	}
	for name, makeCache := range caches {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := seeded(t, storetest.Postgres(t), makeCache(t))
			first, err := s.Landing(ctx, "demo")
			if err != nil {
				t.Fatal(err)
			}
			insertPost(t, s, first, "fresh from the studio")

			// Without invalidation the cached copy is served: proof that it is cached.
			cached, _ := s.Landing(ctx, first.ID)
			if cached.RecentPosts[0].Content == "fresh from the studio" {
				t.Fatal("landing was not cached")
			}
			s.InvalidateLanding(ctx, first.ID)
			for _, key := range []string{"demo", first.ID} {
				fresh, err := s.Landing(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if fresh.RecentPosts[0].Content != "fresh from the studio" {
					t.Fatalf("landing by %s still stale after invalidation", key)
				}
			}
		})
	}
}

func TestLandingWhenRedisIsDown(t *testing.T) {
	ctx := context.Background()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { dead.Close() })
	s := seeded(t, storetest.SQLite(t), &store.RedisCache{Client: dead})
	v, err := s.Landing(ctx, "demo")
	if err != nil {
		t.Fatalf("landing must fall back to the database: %v", err)
	}
	if v.Name != "demo" || len(v.RecentPosts) == 0 {
		t.Fatalf("fallback landing is empty: %+v", v)
	}
	// With the cache dead, a write and its invalidation still reach the
	// next reader: nothing stale was served from anywhere.
	if _, err := s.DB().NewUpdate().Model((*store.App)(nil)).Set("bio = ?", "<p>changed while redis was down</p>").
		Where("id = ?", v.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	s.InvalidateLanding(ctx, v.ID)
	again, err := s.Landing(ctx, "demo")
	if err != nil {
		t.Fatalf("landing after invalidation with a dead cache: %v", err)
	}
	if !strings.Contains(again.Bio, "changed while redis was down") {
		t.Fatalf("landing is stale: %q", again.Bio)
	}
}

func TestFollowUpdatesLandingMemberCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seeded(t, storetest.SQLite(t), store.NewMemoryCache())
	before, err := s.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	member, err := s.UserByEmail(ctx, "member@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Follow(ctx, before.ID, member.ID); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Landing(ctx, "demo")
	if after.Count.Members != before.Count.Members+1 {
		t.Fatalf("members after follow: %d, before %d", after.Count.Members, before.Count.Members)
	}
	if err := s.Unfollow(ctx, before.ID, member.ID); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Landing(ctx, "demo"); again.Count.Members != before.Count.Members {
		t.Fatalf("members after unfollow: %d, want %d", again.Count.Members, before.Count.Members)
	}
}

// TestLikeKeepsLandingCache: a like patches the cached landing's count
// instead of throwing the landing away.
func TestLikeKeepsLandingCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seeded(t, storetest.SQLite(t), store.NewMemoryCache())
	before, err := s.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	post := before.RecentPosts[0]
	// A change the cache does not know of: it stays invisible while the
	// cached landing is kept.
	if _, err := s.DB().NewUpdate().Model((*store.App)(nil)).Set("bio = ?", "<p>not yet seen</p>").
		Where("id = ?", before.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	fan, err := s.UserByEmail(ctx, "member@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.MessageByID(ctx, post.ID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.AddReaction(ctx, msg, fan.ID, "❤️", nil)
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(after.Bio, "not yet seen") {
		t.Fatal("the like threw the landing cache away")
	}
	if after.RecentPosts[0].Count.Reactions != post.Count.Reactions+1 {
		t.Fatalf("count %d, want %d", after.RecentPosts[0].Count.Reactions, post.Count.Reactions+1)
	}
	if err := s.RemoveReaction(ctx, msg, r.ID, fan.ID); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Landing(ctx, "demo")
	if again.RecentPosts[0].Count.Reactions != post.Count.Reactions || strings.Contains(again.Bio, "not yet seen") {
		t.Fatalf("after unlike: count %d, bio %q", again.RecentPosts[0].Count.Reactions, again.Bio)
	}
}

// demoFanAndPost answers the seeded demo's landing, a member of it and its
// newest post.
func demoFanAndPost(t *testing.T, s *store.Storage) (*store.AppView, *store.User, *store.Message) {
	t.Helper()
	ctx := context.Background()
	landing, err := s.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	fan, err := s.UserByEmail(ctx, "member@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.MessageByID(ctx, landing.RecentPosts[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return landing, fan, msg
}

// TestEngagementCommitsWithItsBump: a like, an unlike and a reply commit in
// one transaction with the version bump that renews the cached pages
// showing them, on both databases: when the bump cannot be written the
// write is refused and nothing of it is kept (kept, every cached page would
// hide it until it expired). On SQLite these were two commits each.
func TestEngagementCommitsWithItsBump(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := seeded(t, db, store.NewMemoryCache())
		landing, fan, msg := demoFanAndPost(t, s)
		refuseBumps := func(on bool) {
			t.Helper()
			var stmts []string
			switch {
			case on && db.Dialect().Name() == dialect.PG:
				stmts = []string{`CREATE FUNCTION refuse_bumps() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'bumps refused'; END $$`,
					`CREATE TRIGGER refuse_bumps BEFORE INSERT OR UPDATE ON page_versions FOR EACH ROW EXECUTE FUNCTION refuse_bumps()`}
			case on:
				stmts = []string{`CREATE TRIGGER refuse_bump_inserts BEFORE INSERT ON page_versions BEGIN SELECT RAISE(ABORT, 'bumps refused'); END`,
					`CREATE TRIGGER refuse_bump_updates BEFORE UPDATE ON page_versions BEGIN SELECT RAISE(ABORT, 'bumps refused'); END`}
			case db.Dialect().Name() == dialect.PG:
				stmts = []string{`DROP TRIGGER refuse_bumps ON page_versions`, `DROP FUNCTION refuse_bumps()`}
			default:
				stmts = []string{`DROP TRIGGER refuse_bump_inserts`, `DROP TRIGGER refuse_bump_updates`}
			}
			for _, q := range stmts {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		likes := func() int {
			t.Helper()
			n, err := db.NewSelect().Model((*store.Reaction)(nil)).Where("message_id = ? AND sender_id = ?", msg.ID, fan.ID).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		before := likes()

		refuseBumps(true)
		if _, err := s.AddReaction(ctx, msg, fan.ID, "❤️", nil); err == nil {
			t.Fatal("a like whose bump failed was answered as made")
		}
		if n := likes(); n != before {
			t.Fatalf("a like whose bump failed was kept: %d reactions, want %d", n, before)
		}
		reply := store.NewMessage{AppID: landing.ID, CommunityID: landing.Community.ID, SenderID: fan.ID,
			Type: store.MessageReply, Content: "Kept only with its bump", ParentMessageID: &msg.ID}
		if _, err := s.CreateMessage(ctx, reply); err == nil {
			t.Fatal("a reply whose bump failed was answered as made")
		}
		replies, err := db.NewSelect().Model((*store.Message)(nil)).Where("parent_message_id = ? AND content = ?", msg.ID, reply.Content).Count(ctx)
		if err != nil || replies != 0 {
			t.Fatalf("a reply whose bump failed was kept: %d (%v)", replies, err)
		}

		refuseBumps(false)
		r, err := s.AddReaction(ctx, msg, fan.ID, "❤️", nil)
		if err != nil {
			t.Fatal(err)
		}
		refuseBumps(true)
		if err := s.RemoveReaction(ctx, msg, r.ID, fan.ID); err == nil {
			t.Fatal("an unlike whose bump failed was answered as made")
		}
		if n := likes(); n != before+1 {
			t.Fatalf("an unlike whose bump failed was kept: %d reactions, want %d", n, before+1)
		}
		refuseBumps(false)
		if err := s.RemoveReaction(ctx, msg, r.ID, fan.ID); err != nil || likes() != before {
			t.Fatalf("unlike: %v, %d reactions, want %d", err, likes(), before)
		}
	})
}

// TestLikingTwiceKeepsOneReaction: a repeated like (a retried click) answers
// with the reaction already kept and counts once, on both databases.
func TestLikingTwiceKeepsOneReaction(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]*bun.DB{"sqlite": storetest.SQLite(t), "postgres": storetest.Postgres(t)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := seeded(t, db, store.NewMemoryCache())
			_, fan, msg := demoFanAndPost(t, s)
			first, err := s.AddReaction(ctx, msg, fan.ID, "❤️", nil)
			if err != nil {
				t.Fatal(err)
			}
			again, err := s.AddReaction(ctx, msg, fan.ID, "❤️", nil)
			if err != nil {
				t.Fatal(err)
			}
			if first.ID == "" || again.ID != first.ID || again.Reaction != "❤️" || again.Sender.ID != fan.ID {
				t.Fatalf("first %+v, again %+v", first, again)
			}
			n, err := db.NewSelect().Model((*store.Reaction)(nil)).Where("message_id = ? AND sender_id = ?", msg.ID, fan.ID).Count(ctx)
			if err != nil || n != 1 {
				t.Fatalf("%d reactions kept (%v), want 1", n, err)
			}
		})
	}
}
