package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The pages of a SQLite file database are kept beside it, in a directory
// of the database's namespace: another process (a restart, bench-data's
// renders ahead) reads what one wrote, the bound holds over the files
// found, a write a crash interrupted and the pages of an earlier namespace
// are removed, and purge empties it.
// Without a file database the files are the process's own and go with it.
func TestKeptPagesOutlastTheProcess(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	dbFile := filepath.Join(t.TempDir(), "marquee.db")
	kept := keptPagesDir("sqlite://"+dbFile, "ns1")
	if want := filepath.Join(dbFile+"-pages", "ns1"); kept != want {
		t.Fatalf("kept pages of a SQLite file in %q, want %q", kept, want)
	}
	for _, dsn := range []string{"postgres://u@h/db", ":memory:", "file::memory:?cache=shared", "file:x.db?mode=memory"} {
		if dir := keptPagesDir(dsn, "ns1"); dir != "" {
			t.Errorf("pages of %q kept in %q, want none kept", dsn, dir)
		}
	}
	if dir := keptPagesDir(dbFile, "../x"); dir != "" {
		t.Errorf("a namespace with a path in it gave %q", dir)
	}

	page := func(i int) *cachedPage {
		p := cachedPageOf(200, http.Header{"Content-Type": {"text/html"}}, fmt.Sprintf("etag%d", i), 1000,
			[]byte(strings.Repeat(fmt.Sprint(i%10), 40_000)), []byte(fmt.Sprintf("br%d", i)))
		p.engagement, p.rendered, p.expires = int64(i), time.Now().Truncate(time.Millisecond), time.Now().Add(time.Hour).Truncate(time.Millisecond)
		return p
	}
	first := newDiskPages(t.TempDir(), kept, 1, logger)
	for i := range 3 {
		first.store(fmt.Sprintf("key%d", i), page(i))
		time.Sleep(10 * time.Millisecond) // distinct modification times: the oldest goes first
	}
	first.close()
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("the kept directory went with the process: %v", err)
	}
	// A write interrupted by a crash.
	if err := os.WriteFile(filepath.Join(kept, ".page-123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The pages of an earlier namespace (the database since restored).
	earlier := keptPagesDir("sqlite://"+dbFile, "ns0")
	if err := os.MkdirAll(earlier, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(earlier, "0123"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}

	second := newDiskPages(t.TempDir(), kept, 1, logger)
	defer second.close()
	for i := range 3 {
		got := second.load(fmt.Sprintf("key%d", i))
		if got == nil || got.etag != fmt.Sprintf("etag%d", i) || got.engagement != int64(i) || len(got.gz) != 40_000 {
			t.Fatalf("key%d after a restart: %+v", i, got)
		}
	}
	if _, err := os.Stat(filepath.Join(kept, ".page-123")); !os.IsNotExist(err) {
		t.Errorf("the interrupted write is still there: %v", err)
	}
	if _, err := os.Stat(earlier); !os.IsNotExist(err) {
		t.Errorf("the pages of an earlier namespace are still there: %v", err)
	}
	// Written by another process since: found, and counted.
	other := newDiskPages(t.TempDir(), kept, 1, logger)
	other.store("key-other", page(7))
	if got := second.load("key-other"); got == nil || got.etag != "etag7" {
		t.Fatalf("a page another process wrote: %+v", got)
	}
	// The bound (1 MB) holds over what was found: 40 more files of 40 KB
	// leave at most 1 MB, the oldest gone first.
	for i := 10; i < 50; i++ {
		second.store(fmt.Sprintf("key%d", i), page(i))
	}
	if n := second.size(); n > 1<<20 {
		t.Errorf("%d bytes on disk, over the 1 MB bound", n)
	}
	if second.load("key0") != nil {
		t.Error("the oldest page outlived the bound")
	}
	if second.load("key49") == nil {
		t.Error("the newest page is gone")
	}
	second.purge()
	if entries, _ := os.ReadDir(kept); len(entries) != 0 {
		t.Errorf("purge left %d files", len(entries))
	}

	// The process's own: another one never reads them, and they go at close.
	parent := t.TempDir()
	own := newDiskPages(parent, "", 1, logger)
	own.store("key", page(1))
	if newDiskPages(parent, "", 1, logger).load("key") != nil {
		t.Error("another process read a page of a temporary directory")
	}
	own.close()
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("close left %d entries in the temporary parent", len(entries))
	}
}

// A page the memory does not hold is looked up on disk, and a stale one
// (expired, within the staleness bound) comes back too: the caller renews
// it while serving it. Past the bound it is not served.
func TestLookupReadsTheDiskTier(t *testing.T) {
	t.Parallel()
	disk := newDiskPages(t.TempDir(), "", 8, slog.New(slog.DiscardHandler))
	defer disk.close()
	pc := newPageCache(0, disk)
	now := time.Now()
	for _, tc := range []struct {
		past  time.Duration
		found bool
	}{{-time.Minute, true}, {time.Minute, true}, {staleGrace + time.Minute, false}} {
		key := fmt.Sprintf("app\x001\x00build\x00/apps/a%d\x00\x00visitor", tc.past)
		p := sizedPage(100)
		p.rendered, p.expires = now.Add(-tc.past-PageTTL), now.Add(-tc.past)
		disk.store(key, p)
		got := pc.lookup(key, now)
		if (got != nil) != tc.found {
			t.Errorf("a page %s past its expiry on disk: found %v, want %v", tc.past, got != nil, tc.found)
		}
		if tc.found && pc.get(key, now) == nil {
			t.Errorf("a page %s past its expiry read from disk did not go back to memory", tc.past)
		}
	}
}
