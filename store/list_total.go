package store

import (
	"context"
	"strconv"
	"time"
)

// listTotalTTL bounds how long a list's cached total lives; the app's page
// version in its key is what makes it exact.
const listTotalTTL = 10 * time.Minute

// listTotal answers how many rows a filtered list of an app has (the total
// of its pagination) through the cache, keyed by the app's versions
// (dataVersion: a member list grows by a follow, which bumps only the
// engagement), so a cached total is never stale, and a list page costs
// one primary-key lookup instead of counting every matching row (10,000
// store items) on each request. key names the list and its filter.
func (s *Storage) listTotal(ctx context.Context, appID, key string, count func(context.Context) (int, error)) (int, error) {
	v, err := s.dataVersion(ctx, appID)
	if err != nil {
		return count(ctx)
	}
	full := "list-total:" + appID + ":" + v + ":" + key
	if b, ok, err := s.cache.Get(ctx, full); err == nil && ok {
		if n, err := strconv.Atoi(string(b)); err == nil {
			return n, nil
		}
	}
	n, err := count(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.cache.Set(ctx, full, []byte(strconv.Itoa(n)), listTotalTTL); err != nil {
		s.cacheWarn("list total not cached", err, "app", appID)
	}
	return n, nil
}
