package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"marquee/store"
)

// Rate is at most Limit events per Per.
type Rate struct {
	Limit int
	Per   time.Duration
}

// Limits are the brute-force and write limits. Config.Limits fields left
// zero take DefaultLimits; tests lower them to reach them quickly.
type Limits struct {
	// SignInAccount counts failed sign-ins per account (its e-mail and its
	// username share one counter); SignInAddress failed sign-ins per client
	// address. Successful sign-ins are not counted.
	SignInAccount, SignInAddress Rate
	// SignUp counts sign-up attempts per address and per e-mail.
	SignUpAccount, SignUpAddress Rate
	// Per-member writes under /api (Reports: new reports filed; repeating
	// a report is not counted).
	Posts, Comments, Reactions, Media, Reports Rate
	// ResetAccount counts password-reset mails per e-mail, ResetAddress
	// per client address; VerifyResend verification mails per member.
	ResetAccount, ResetAddress, VerifyResend Rate
	// Apps counts apps created per account (APPS_PER_DAY a day).
	Apps Rate
	// PendingTopups caps the wallet top-ups one account may have waiting
	// for payment at once, over every app (WALLET_PENDING_TOPUPS): each is
	// a payment started on the platform's Stripe account.
	PendingTopups int
}

// DefaultLimits stop password guessing and write floods while staying far
// above what a person does by hand (or what the test suites do).
func DefaultLimits() Limits {
	return Limits{
		SignInAccount: Rate{10, 15 * time.Minute}, SignInAddress: Rate{30, 15 * time.Minute},
		SignUpAccount: Rate{10, 15 * time.Minute}, SignUpAddress: Rate{30, 15 * time.Minute},
		Posts: Rate{60, 10 * time.Minute}, Comments: Rate{120, 10 * time.Minute},
		Reactions: Rate{600, 10 * time.Minute}, Media: Rate{120, 10 * time.Minute}, Reports: Rate{20, 10 * time.Minute},
		ResetAccount: Rate{3, time.Hour}, ResetAddress: Rate{20, time.Hour}, VerifyResend: Rate{3, time.Hour},
		Apps: Rate{DefaultAppsPerDay, 24 * time.Hour}, PendingTopups: DefaultPendingTopups,
	}
}

// DefaultAppsPerDay and DefaultPendingTopups are the per-account limits
// APPS_PER_DAY and WALLET_PENDING_TOPUPS default to.
const (
	DefaultAppsPerDay    = 5
	DefaultPendingTopups = 3
)

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, p := range []struct{ got, def *Rate }{
		{&l.SignInAccount, &d.SignInAccount}, {&l.SignInAddress, &d.SignInAddress},
		{&l.SignUpAccount, &d.SignUpAccount}, {&l.SignUpAddress, &d.SignUpAddress},
		{&l.Posts, &d.Posts}, {&l.Comments, &d.Comments}, {&l.Reactions, &d.Reactions}, {&l.Media, &d.Media}, {&l.Reports, &d.Reports},
		{&l.ResetAccount, &d.ResetAccount}, {&l.ResetAddress, &d.ResetAddress}, {&l.VerifyResend, &d.VerifyResend},
		{&l.Apps, &d.Apps},
	} {
		if p.got.Limit <= 0 || p.got.Per <= 0 {
			*p.got = *p.def
		}
	}
	if l.PendingTopups <= 0 {
		l.PendingTopups = d.PendingTopups
	}
	return l
}

// redisName names a counter in Redis: in the database's namespace
// (store.Storage.RedisKey), so deployments sharing a Redis never count
// against each other. redis_rate puts "rate:" before its own keys; the
// attempt counters (count) do the same.
func (l *rateLimiter) redisName(key string) string {
	if l.name == nil {
		return "marquee:ratelimit:" + key
	}
	return l.name("ratelimit:" + key)
}

// rateLimiter counts in Redis when present, so all processes share the
// counts, else in this process. A Redis failure (or an open breaker) falls
// back to the in-process counts: sign-in and writes keep working and stay
// limited.
//
// Two kinds of counting: hit (redis_rate's GCRA) for writes, and
// count/refund (fixed windows) for sign-in attempts, where a successful
// attempt is handed back so that signing in often never locks an account.
type rateLimiter struct {
	rdb    *redis.Client
	gcra   *redis_rate.Limiter
	logger *slog.Logger
	// name is the store's RedisKey (redisName).
	name func(string) string

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
	l.useRedis(rdb)
	return l
}

func (l *rateLimiter) useRedis(rdb *redis.Client) {
	l.rdb, l.gcra = rdb, nil
	if rdb != nil {
		l.gcra = redis_rate.NewLimiter(rdb)
	}
}

// hit counts one event on key and reports whether it is within the rate;
// when it is not, retryAfter says when the next one may come.
func (l *rateLimiter) hit(ctx context.Context, key string, r Rate) (ok bool, retryAfter time.Duration) {
	if l.gcra != nil {
		res, err := l.gcra.Allow(ctx, l.redisName(key), redis_rate.Limit{Rate: r.Limit, Burst: r.Limit, Period: r.Per})
		if err == nil {
			return res.Allowed > 0, res.RetryAfter
		}
		if !errors.Is(err, store.ErrRedisUnavailable) {
			l.logger.Warn("rate limit: redis unavailable, counting in process", "err", err)
		}
	}
	return l.countMemory(key, r)
}

// countScript increments a fixed window, starting its clock on the first
// attempt, and answers the count and the milliseconds left.
var countScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`)

// refundScript hands one attempt back unless the window already ended (a
// DECR on a missing key would start a counter that never expires).
var refundScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0`)

// count counts one attempt on key in a fixed window of r.Per.
func (l *rateLimiter) count(ctx context.Context, key string, r Rate) (ok bool, retryAfter time.Duration) {
	if l.rdb != nil {
		res, err := countScript.Run(ctx, l.rdb, []string{"rate:" + l.redisName(key)}, r.Per.Milliseconds()).Int64Slice()
		if err == nil && len(res) == 2 {
			return res[0] <= int64(r.Limit), time.Duration(res[1]) * time.Millisecond
		}
		if !errors.Is(err, store.ErrRedisUnavailable) {
			l.logger.Warn("rate limit: redis unavailable, counting in process", "err", err)
		}
	}
	return l.countMemory(key, r)
}

// refund takes back one attempt counted by count on each key.
func (l *rateLimiter) refund(ctx context.Context, keys ...string) {
	for _, key := range keys {
		if l.rdb != nil {
			if err := refundScript.Run(ctx, l.rdb, []string{"rate:" + l.redisName(key)}).Err(); err == nil {
				continue
			}
		}
		l.mu.Lock()
		if w, ok := l.windows[key]; ok && w.count > 0 {
			w.count--
		}
		l.mu.Unlock()
	}
}

func (l *rateLimiter) countMemory(key string, r Rate) (bool, time.Duration) {
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
		w = &window{reset: now.Add(r.Per)}
		l.windows[key] = w
	}
	w.count++
	return w.count <= r.Limit, w.reset.Sub(now)
}

// limitWrite counts one write of kind by the signed-in member; over the
// limit it answers 429 with Retry-After.
func (s *Server) limitWrite(c echo.Context, kind string, userID string) error {
	var r Rate
	switch kind {
	case "post":
		r = s.limits.Posts
	case "comment":
		r = s.limits.Comments
	case "reaction":
		r = s.limits.Reactions
	case "media":
		r = s.limits.Media
	case "report":
		r = s.limits.Reports
	default:
		panic("unknown write limit " + kind)
	}
	if ok, wait := s.limiter.hit(c.Request().Context(), "write:"+kind+":"+userID, r); !ok {
		return tooManyWrites(c, wait)
	}
	return nil
}

// tooManyWrites is the 429 of a write limit, with Retry-After in seconds.
func tooManyWrites(c echo.Context, retryAfter time.Duration) *Error {
	secs := retryAfterSeconds(c, retryAfter)
	return errorf(http.StatusTooManyRequests, fmt.Sprintf("You are doing that too often. Please try again in %d second%s.", secs, plural(secs)))
}

func retryAfterSeconds(c echo.Context, d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return secs
}

// tooManyAttempts is the 429 answer, with Retry-After in whole seconds.
func tooManyAttempts(c echo.Context, retryAfter time.Duration) *Error {
	secs := retryAfterSeconds(c, retryAfter)
	mins := (secs + 59) / 60
	return errorf(http.StatusTooManyRequests, fmt.Sprintf("Too many attempts. Please try again in %d minute%s.", mins, plural(mins)))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
