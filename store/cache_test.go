package store

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// The in-process cache keeps its newest MemoryCacheEntries values and
// forgets expired ones: list pages keyed by cursor and version would
// otherwise pile up for the life of the process.
func TestMemoryCacheIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := NewMemoryCache()
	for i := 0; i < 3*MemoryCacheEntries; i++ {
		if err := c.Set(ctx, "k"+strconv.Itoa(i), []byte("v"+strconv.Itoa(i)), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.entries.Len(); n != MemoryCacheEntries {
		t.Fatalf("%d entries held, want %d", n, MemoryCacheEntries)
	}
	if _, ok, _ := c.Get(ctx, "k0"); ok {
		t.Fatal("the oldest entry is still held")
	}
	last := "k" + strconv.Itoa(3*MemoryCacheEntries-1)
	if v, ok, _ := c.Get(ctx, last); !ok || string(v) != "v"+strconv.Itoa(3*MemoryCacheEntries-1) {
		t.Fatalf("newest entry: %q %v", v, ok)
	}

	now := time.Now()
	c.now = func() time.Time { return now }
	_ = c.Set(ctx, "short", []byte("x"), time.Second)
	now = now.Add(2 * time.Second)
	if _, ok, _ := c.Get(ctx, "short"); ok {
		t.Fatal("an expired entry answered")
	}
	if err := c.Delete(ctx, last); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Get(ctx, last); ok {
		t.Fatal("a deleted entry answered")
	}
}
