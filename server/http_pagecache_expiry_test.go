package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

// cachedEntry answers the visitor's cached page of path last rendered
// (older versions' entries stay until evicted).
func (ts *testServer) cachedEntry(t *testing.T, path string) *cachedPage {
	t.Helper()
	ts.pages.mu.Lock()
	defer ts.pages.mu.Unlock()
	var last *cachedPage
	for key, el := range ts.pages.entries.slots {
		p := el.Value.(*pageSlot).page
		if strings.Contains(key, "\x00"+path+"\x00") && strings.HasSuffix(key, "\x00visitor") && (last == nil || p.rendered.After(last.rendered)) {
			last = p
		}
	}
	if last == nil {
		t.Fatalf("no cached visitor page of %s", path)
	}
	return last
}

// A cached page is kept until the clock alone would change what it shows:
// its relative times ("2h ago" at the third hour), a story's day ending;
// at most PageTTLMax (nothing shown changes with the clock), at least
// PageTTL ("just now").
func TestPagesKeptUntilTheirTextChanges(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	ctx := context.Background()
	appID := demoAppID(t, ts)
	now := time.Now().UTC().Truncate(time.Millisecond)
	// dateAll dates every post and story of the demo at, and one post (and
	// story) at one, then renews the app's pages.
	dateAll := func(at time.Time, kind string, one time.Time) {
		t.Helper()
		db := ts.store.DB()
		if _, err := db.NewUpdate().Table("messages").Set("created_at = ?", at).Where("app_id = ?", appID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if !one.IsZero() {
			var id string
			if err := db.NewSelect().Table("messages").Column("id").Where("app_id = ? AND type = ? AND parent_message_id IS NULL AND hidden = ''", appID, kind).
				OrderExpr("id").Limit(1).Scan(ctx, &id); err != nil {
				t.Fatalf("a %s of the demo: %v", kind, err)
			}
			if _, err := db.NewUpdate().Table("messages").Set("created_at = ?", one).Where("id = ?", id).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		ts.store.InvalidateLanding(ctx, appID)
		ts.store.InvalidateApp(ctx, appID)
	}
	check := func(path string, want time.Time, what string) {
		t.Helper()
		ts.visit(t, path, "miss")
		p := ts.cachedEntry(t, path)
		if d := p.expires.Sub(want); d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s: %s kept until %v after its render, want %v (%s)", path, what, p.expires.Sub(p.rendered), want.Sub(p.rendered), want.Format(time.RFC3339Nano))
		}
	}
	// Everything over 30 days old shows its date: nothing changes.
	dateAll(now.AddDate(0, -2, 0), store.MessagePost, time.Time{})
	ts.visit(t, "/apps/demo", "miss")
	if p := ts.cachedEntry(t, "/apps/demo"); p.expires.Sub(p.rendered) != PageTTLMax {
		t.Errorf("landing of old posts kept %v, want PageTTLMax (%v)", p.expires.Sub(p.rendered), PageTTLMax)
	}
	// One post 2h55m old reads "2h ago" until its third hour.
	posted := now.Add(-2*time.Hour - 55*time.Minute)
	dateAll(now.AddDate(0, -2, 0), store.MessagePost, posted)
	check("/apps/demo", posted.Add(3*time.Hour), `a post reading "2h ago"`)
	// A story 23h57m old leaves the strip when its day ends.
	storied := now.Add(-23*time.Hour - 57*time.Minute)
	dateAll(now.AddDate(0, -2, 0), store.MessageStory, storied)
	check("/apps/demo/community", storied.Add(store.StoryLifetime), "a story ending")
	// "just now" changes within the minute: kept PageTTL, as before.
	dateAll(now.AddDate(0, -2, 0), store.MessagePost, time.Now().Add(-20*time.Second))
	ts.visit(t, "/apps/demo", "miss")
	if p := ts.cachedEntry(t, "/apps/demo"); p.expires.Sub(p.rendered) != PageTTL {
		t.Errorf(`landing with a post "just now" kept %v, want PageTTL (%v)`, p.expires.Sub(p.rendered), PageTTL)
	}
}

// When a page stops being current, and how it is renewed for the clock,
// travel with it to the disk tier and, with Redis, to the other instances.
func TestPageExpiryTravelsWithThePage(t *testing.T) {
	t.Parallel()
	rendered := time.Now().Add(-time.Second).Truncate(time.Millisecond)
	p := cachedPageOf(200, http.Header{}, "etag", 10, []byte("gz"), []byte("br"))
	p.rendered, p.expires = rendered, rendered.Add(7*time.Minute)
	p.clock = &pageClock{now: rendered.Add(time.Millisecond), ago: 4, until: rendered.Add(PageTTLMax)}
	sameClock := func(got *cachedPage) bool {
		return got.clock != nil && got.clock.now.Equal(p.clock.now) && got.clock.ago == 4 && got.clock.until.Equal(p.clock.until)
	}

	disk := newDiskPages(t.TempDir(), "", 8, slog.New(slog.DiscardHandler))
	defer disk.close()
	disk.store("key", p)
	if got := disk.load("key"); got == nil || !got.expires.Equal(p.expires) || !sameClock(got) {
		t.Errorf("from disk: %+v, want it to expire at %v, renewed as %+v", got, p.expires, p.clock)
	}

	st := store.New(store.Options{DB: storetest.SQLite(t), Redis: storetest.Redis(t), Cache: store.NewMemoryCache()})
	ctx := context.Background()
	if err := st.SharePage(ctx, "key", sharedOf(p), time.Minute); err != nil {
		t.Fatal(err)
	}
	sp, err := st.SharedPage(ctx, "key")
	if err != nil || sp == nil {
		t.Fatalf("shared page: %v %v", sp, err)
	}
	if got := sharedToCached(sp); !got.expires.Equal(p.expires) || !sameClock(got) {
		t.Errorf("shared: expires %v, want %v, renewed as %+v", got.expires, p.expires, p.clock)
	}
	// A copy shared by an instance before pages kept their expiry ages a
	// minute from its render, as it did.
	sp.Expires = time.Time{}
	if got := sharedToCached(sp); !got.expires.Equal(rendered.Add(PageTTL)) {
		t.Errorf("shared without an expiry: expires %v, want %v", got.expires, rendered.Add(PageTTL))
	}
}

// A page past its clock-driven expiry is served (stale, while one request
// renders it again) for up to PageTTLMax after it, not dropped after a
// minute: with refreshes paced, a crawler reading a thousand apps finds
// such pages a few minutes old rather than gone (a first view each).
func TestExpiredPagesServedStaleUpToPageTTLMax(t *testing.T) {
	t.Parallel()
	pc := newPageCache(0, nil)
	now := time.Now()
	for _, tc := range []struct {
		past time.Duration
		kept bool
	}{{time.Second, true}, {5 * time.Minute, true}, {PageTTLMax - time.Second, true}, {PageTTLMax + time.Second, false}} {
		key := fmt.Sprintf("app\x001\x00build\x00/apps/a%d\x00\x00visitor", tc.past)
		p := sizedPage(100)
		p.rendered, p.expires = now.Add(-tc.past-PageTTL), now.Add(-tc.past)
		pc.put(key, p)
		got := pc.get(key, now)
		if (got != nil) != tc.kept || got != nil && !got.expired(now) {
			t.Errorf("a page %s past its expiry: served %v, want %v (and expired)", tc.past, got != nil, tc.kept)
		}
	}
}
