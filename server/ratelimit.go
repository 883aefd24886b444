package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"
)

// Limits on sign-in and sign-up: per account they stop password guessing
// against one user, per address they stop one client spraying many users.
const (
	authWindow         = 15 * time.Minute
	authAccountLimit   = 10
	authAddressLimit   = 30
	rateLimitKeyPrefix = "marquee:ratelimit:"
	// redisRateKeyPrefix is where redis_rate keeps our keys ("rate:" is its own).
	redisRateKeyPrefix = "rate:" + rateLimitKeyPrefix
)

// rateLimiter counts attempts in Redis (redis_rate's GCRA) when present, so
// all processes share the counts, else in fixed windows in this process. A
// Redis failure falls back to the in-process counts: sign-in keeps working
// and stays limited.
type rateLimiter struct {
	redis  *redis_rate.Limiter
	logger *slog.Logger

	mu      sync.Mutex
	windows map[string]*window
	now     func() time.Time
}

type window struct {
	count int
	reset time.Time
}

func newRateLimiter(rdb *redis.Client, logger *slog.Logger) *rateLimiter {
	l := &rateLimiter{logger: logger, windows: map[string]*window{}, now: time.Now}
	if rdb != nil {
		l.redis = redis_rate.NewLimiter(rdb)
	}
	return l
}

// hit counts one attempt on key and reports whether it is within limit per
// period; when it is not, retryAfter says when the next attempt may come.
func (l *rateLimiter) hit(ctx context.Context, key string, limit int, per time.Duration) (ok bool, retryAfter time.Duration) {
	if l.redis != nil {
		res, err := l.redis.Allow(ctx, rateLimitKeyPrefix+key, redis_rate.Limit{Rate: limit, Burst: limit, Period: per})
		if err == nil {
			return res.Allowed > 0, res.RetryAfter
		}
		l.logger.Warn("rate limit: redis unavailable, counting in process", "err", err)
	}
	return l.hitMemory(key, limit, per)
}

func (l *rateLimiter) hitMemory(key string, limit int, per time.Duration) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.windows) > 10000 {
		// Drop finished windows so a flood of addresses cannot grow the map forever.
		for k, w := range l.windows {
			if now.After(w.reset) {
				delete(l.windows, k)
			}
		}
	}
	w, found := l.windows[key]
	if !found || now.After(w.reset) {
		w = &window{reset: now.Add(per)}
		l.windows[key] = w
	}
	w.count++
	return w.count <= limit, w.reset.Sub(now)
}

// tooManyAttempts is the 429 answer, with Retry-After in whole seconds.
func tooManyAttempts(c echo.Context, retryAfter time.Duration) *Error {
	secs := int(retryAfter.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	mins := (secs + 59) / 60
	return errorf(http.StatusTooManyRequests, fmt.Sprintf("Too many attempts. Please try again in %d minute%s.", mins, plural(mins)))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
