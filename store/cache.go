package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
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
// holds at most MemoryCacheEntries values, dropping the least recently used:
// keys like list pages by cursor or per page version are never read again
// once a write moves the version on, and an unbounded map kept every one of
// them until the process ended.
type MemoryCache struct {
	entries *lru.Cache[string, memoryEntry]
	now     func() time.Time
}

// MemoryCacheEntries bounds the in-process cache. Values are list pages and
// landing data of a few to some tens of KB, so this is tens of MB at most.
const MemoryCacheEntries = 4096

type memoryEntry struct {
	value   []byte
	expires time.Time
}

func NewMemoryCache() *MemoryCache {
	entries, err := lru.New[string, memoryEntry](MemoryCacheEntries)
	if err != nil {
		panic(fmt.Sprintf("memory cache: %v", err)) // only for a size <= 0
	}
	return &MemoryCache{entries: entries, now: time.Now}
}

func (c *MemoryCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	e, ok := c.entries.Get(key)
	if !ok {
		return nil, false, nil
	}
	if c.now().After(e.expires) {
		c.entries.Remove(key)
		return nil, false, nil
	}
	return e.value, true, nil
}

func (c *MemoryCache) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	c.entries.Add(key, memoryEntry{value: value, expires: c.now().Add(ttl)})
	return nil
}

// Purge drops every entry (the database was replaced: namespace.go).
func (c *MemoryCache) Purge() { c.entries.Purge() }

func (c *MemoryCache) Delete(_ context.Context, keys ...string) error {
	for _, k := range keys {
		c.entries.Remove(k)
	}
	return nil
}
