package store

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cache is the cache-aside store for derived data such as the landing page.
// A miss is (nil, false, nil); an error means the cache itself failed and the
// caller should fall back to the database.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Delete(ctx context.Context, keys ...string) error
}

// RedisCache keeps entries in Redis so every process shares them.
type RedisCache struct {
	Client *redis.Client
	Prefix string
	// Name, when set, names a key in Redis instead of Prefix: the store's
	// RedisKey, whose namespace follows the database (namespace.go).
	Name func(key string) string
}

func (c *RedisCache) name(key string) string {
	if c.Name != nil {
		return c.Name(key)
	}
	return c.Prefix + key
}

func (c *RedisCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := c.Client.Get(ctx, c.name(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("redis get %s: %w", key, err)
	}
	return b, true, nil
}

func (c *RedisCache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := c.Client.Set(ctx, c.name(key), value, ttl).Err(); err != nil {
		return fmt.Errorf("redis set %s: %w", key, err)
	}
	return nil
}

func (c *RedisCache) Delete(ctx context.Context, keys ...string) error {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = c.name(k)
	}
	if err := c.Client.Del(ctx, full...).Err(); err != nil {
		return fmt.Errorf("redis del: %w", err)
	}
	return nil
}

// MemoryCache stands in for Redis when REDIS_URL is unset (one process). It
// holds at most MemoryCacheEntries values and MemoryCacheBytes of them,
// dropping the least recently used: keys like list pages by cursor or per
// page version are never read again once a write moves the version on, and
// an unbounded map kept every one of them until the process ended. The
// bytes bound it by settings, not by apps: a thousand apps' landing data
// (tens of KB each) and lists under a count bound alone were a hundred MB.
type MemoryCache struct {
	mu       sync.Mutex
	entries  map[string]*list.Element
	order    list.List // of *memoryEntry, most recently used first
	bytes    int
	maxBytes int
	now      func() time.Time
}

// MemoryCacheEntries bounds the number of values in the in-process cache,
// MemoryCacheBytes what they hold: list pages and landing data of a few to
// some tens of KB.
const (
	MemoryCacheEntries = 4096
	MemoryCacheBytes   = 24 << 20
)

type memoryEntry struct {
	key     string
	value   []byte
	expires time.Time
}

// memoryEntryOverhead is what an entry costs beside its key and value (the
// list element, the map slot, the entry).
const memoryEntryOverhead = 160

func (e *memoryEntry) size() int { return len(e.key) + len(e.value) + memoryEntryOverhead }

func NewMemoryCache() *MemoryCache { return NewMemoryCacheOf(MemoryCacheBytes) }

// NewMemoryCacheOf is a MemoryCache holding at most maxBytes.
func NewMemoryCacheOf(maxBytes int) *MemoryCache {
	return &MemoryCache{entries: map[string]*list.Element{}, maxBytes: maxBytes, now: time.Now}
}

func (c *MemoryCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.entries[key]
	if el == nil {
		return nil, false, nil
	}
	e := el.Value.(*memoryEntry)
	if c.now().After(e.expires) {
		c.removeLocked(el)
		return nil, false, nil
	}
	c.order.MoveToFront(el)
	return e.value, true, nil
}

func (c *MemoryCache) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	e := &memoryEntry{key: key, value: value, expires: c.now().Add(ttl)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.entries[key]; el != nil {
		c.removeLocked(el)
	}
	if e.size() > c.maxBytes {
		return nil // larger than the whole cache: not kept
	}
	c.entries[key] = c.order.PushFront(e)
	c.bytes += e.size()
	for c.bytes > c.maxBytes || c.order.Len() > MemoryCacheEntries {
		c.removeLocked(c.order.Back())
	}
	return nil
}

func (c *MemoryCache) removeLocked(el *list.Element) {
	e := el.Value.(*memoryEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.bytes -= e.size()
}

// Purge drops every entry (the database was replaced: namespace.go).
func (c *MemoryCache) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.order.Init()
	c.bytes = 0
}

// Len and Bytes answer what the cache holds.
func (c *MemoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *MemoryCache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

func (c *MemoryCache) Delete(_ context.Context, keys ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if el := c.entries[k]; el != nil {
			c.removeLocked(el)
		}
	}
	return nil
}
