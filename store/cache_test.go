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
	if n := c.Len(); n != MemoryCacheEntries {
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

// The in-process cache holds at most its bytes, however many apps' landing
// data and lists pass through it: the least recently read go first, a read
// keeps an entry, one larger than the whole cache is not kept, and a value
// set again replaces the old one's bytes.
func TestMemoryCacheIsBoundedByBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const budget = 100 << 10
	c := NewMemoryCacheOf(budget)
	value := make([]byte, 10<<10) // landing data of an app
	_ = c.Set(ctx, "hot", value, time.Hour)
	for i := 0; i < 1000; i++ {
		_ = c.Set(ctx, "app"+strconv.Itoa(i), value, time.Hour)
		if _, ok, _ := c.Get(ctx, "hot"); !ok {
			t.Fatalf("after app%d: the entry read every time was dropped", i)
		}
		if c.Bytes() > budget {
			t.Fatalf("after app%d: %d bytes held, budget %d", i, c.Bytes(), budget)
		}
	}
	if n := c.Len(); n < 8 || n > 10 {
		t.Errorf("%d entries of 10 KB in 100 KB", n)
	}
	if _, ok, _ := c.Get(ctx, "app0"); ok {
		t.Error("the least recently used entry is still held")
	}
	_ = c.Set(ctx, "huge", make([]byte, budget+1), time.Hour)
	if _, ok, _ := c.Get(ctx, "huge"); ok || c.Bytes() > budget {
		t.Errorf("a value larger than the cache: kept %v, %d bytes", ok, c.Bytes())
	}
	before := c.Bytes()
	_ = c.Set(ctx, "hot", []byte("small"), time.Hour)
	if got := c.Bytes(); got != before-len(value)+len("small") {
		t.Errorf("replacing a value: %d bytes, want %d", got, before-len(value)+len("small"))
	}
	c.Purge()
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Errorf("after Purge: %d entries, %d bytes", c.Len(), c.Bytes())
	}
}
