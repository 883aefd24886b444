package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedPage is a rendered page as the instances of a deployment share it
// through Redis: one instance renders a page while the others serve the
// copy they have (or wait for it), then they take its bytes instead of
// rendering the same page again each.
type SharedPage struct {
	Status int
	Header http.Header
	// ETag is the page's base tag and Length its uncompressed size: only
	// the two encodings are shared (a client taking neither gets the gzip
	// bytes inflated).
	ETag         string
	Length       int
	Gzip, Brotli []byte
	// Engagement is the engagement version the page was rendered at, and
	// Rendered when its render started: a page is served for a newer
	// engagement only while it is younger than the staleness bound.
	Engagement int64
	Rendered   time.Time
	// Expires is when the page stops being current (its text changes with
	// the clock); zero in a copy shared before it was kept.
	Expires time.Time
	// ClockNow, Ago and ClockUntil say how the page is renewed past
	// Expires without a render (its Ago relative times, as of ClockNow,
	// rewritten until ClockUntil); zero ClockUntil: by a render.
	ClockNow   time.Time
	Ago        int
	ClockUntil time.Time
}

// sharedPageKey is the Redis key of a page key (app, content version,
// build, path, query and viewer class), and of the claim on its render.
func (s *Storage) sharedPageKey(pageKey, kind string) string {
	sum := sha256.Sum256([]byte(pageKey))
	return s.RedisKey(kind + ":" + hex.EncodeToString(sum[:16]))
}

// SharedPage answers the page another instance (or this one) last shared
// under pageKey, nil when there is none or no Redis.
func (s *Storage) SharedPage(ctx context.Context, pageKey string) (*SharedPage, error) {
	if s.rdb == nil {
		return nil, nil
	}
	fields, err := s.rdb.HGetAll(ctx, s.sharedPageKey(pageKey, "page")).Result()
	if err != nil {
		return nil, fmt.Errorf("read shared page: %w", err)
	}
	if len(fields) == 0 {
		return nil, nil
	}
	p := &SharedPage{ETag: fields["etag"], Gzip: []byte(fields["gzip"]), Brotli: []byte(fields["brotli"])}
	length, err0 := strconv.Atoi(fields["length"])
	status, err1 := strconv.Atoi(fields["status"])
	engagement, err2 := strconv.ParseInt(fields["engagement"], 10, 64)
	rendered, err3 := strconv.ParseInt(fields["rendered"], 10, 64)
	err4 := json.Unmarshal([]byte(fields["header"]), &p.Header)
	if err := errors.Join(err0, err1, err2, err3, err4); err != nil || p.ETag == "" {
		// Another build's layout, or a write cut short: render it again.
		return nil, nil
	}
	p.Status, p.Length, p.Engagement, p.Rendered = status, length, engagement, time.Unix(0, rendered)
	if expires, err := strconv.ParseInt(fields["expires"], 10, 64); err == nil && expires > 0 {
		p.Expires = time.Unix(0, expires)
	}
	clockNow, err0 := strconv.ParseInt(fields["clock_now"], 10, 64)
	ago, err1 := strconv.Atoi(fields["ago"])
	until, err2 := strconv.ParseInt(fields["clock_until"], 10, 64)
	if errors.Join(err0, err1, err2) == nil && until > 0 {
		p.ClockNow, p.Ago, p.ClockUntil = time.Unix(0, clockNow), ago, time.Unix(0, until)
	}
	return p, nil
}

// SharePage files a rendered page under pageKey for the other instances,
// for ttl.
func (s *Storage) SharePage(ctx context.Context, pageKey string, p *SharedPage, ttl time.Duration) error {
	if s.rdb == nil {
		return nil
	}
	header, err := json.Marshal(p.Header)
	if err != nil {
		return fmt.Errorf("share page: header: %w", err)
	}
	key := s.sharedPageKey(pageKey, "page")
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Del(ctx, key)
		pipe.HSet(ctx, key, "status", p.Status, "header", header, "etag", p.ETag, "length", p.Length, "gzip", p.Gzip,
			"brotli", p.Brotli, "engagement", p.Engagement, "rendered", p.Rendered.UnixNano(), "expires", p.Expires.UnixNano())
		if !p.ClockUntil.IsZero() {
			pipe.HSet(ctx, key, "clock_now", p.ClockNow.UnixNano(), "ago", p.Ago, "clock_until", p.ClockUntil.UnixNano())
		}
		pipe.PExpire(ctx, key, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("share page: %w", err)
	}
	return nil
}

// releaseClaim deletes a claim only if it is still the caller's: one that
// outlived its ttl may have been taken by another instance since.
var releaseClaim = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// ClaimPageRender claims the render of pageKey for ttl across the
// deployment: claimed is false while another instance holds the claim.
// release gives it up (after the page is shared, or when it could not be
// kept). Without Redis every claim succeeds: the process's own single
// flight is the only one there is.
func (s *Storage) ClaimPageRender(ctx context.Context, pageKey string, ttl time.Duration) (release func(), claimed bool, err error) {
	if s.rdb == nil {
		return func() {}, true, nil
	}
	token := make([]byte, 12)
	_, _ = rand.Read(token)
	value := hex.EncodeToString(token)
	key := s.sharedPageKey(pageKey, "render")
	ok, err := s.rdb.SetNX(ctx, key, value, ttl).Result()
	if err != nil {
		return nil, false, fmt.Errorf("claim page render: %w", err)
	}
	if !ok {
		return nil, false, nil
	}
	return func() {
		// The claim must go even if the request that rendered has ended.
		ctx := context.WithoutCancel(ctx)
		if err := releaseClaim.Run(ctx, s.rdb, []string{key}, value).Err(); err != nil {
			s.cacheWarn("release page render claim failed (it expires by itself)", err)
		}
	}, true, nil
}
