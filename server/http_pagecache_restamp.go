package server

import (
	"time"

	"github.com/klauspost/compress/gzip"

	"marquee/render"
)

// pageClock says how a cached page may be renewed without a render: its
// relative times ("5m ago") are rewritten as of the new time
// (render.Restamp), which gives the bytes a render would, until something
// else the page shows changes with the clock (an event starting, a story
// ending) or the data it was rendered from reaches its age bound
// (PageTTLMax after the render). A community page rendered is its data,
// some 10 ms of goja and its compression; rewritten, the compression.
type pageClock struct {
	now   time.Time // the props' now the page's relative times are as of
	ago   int       // how many it shows
	until time.Time // from then on a render is due
}

// restamped is p as of now, or nil when it is to be rendered instead.
func (p *cachedPage) restamped(now time.Time) *cachedPage {
	// Never back in time (another instance's clock behind the one that
	// rendered), nor past what else changes with the clock.
	if p.clock == nil || !now.After(p.clock.now) || !now.Before(p.clock.until) {
		return nil
	}
	identity := p.identity()
	if identity == nil {
		return nil
	}
	body, changes, ok := render.Restamp(identity, p.clock.now, now, p.clock.ago)
	if !ok {
		return nil
	}
	// Brotli is made at the first request that takes it: a restamp's cost
	// is its compression, and with every page of an app renewed as its
	// times move on, brotli for clients that take only gzip (crawlers,
	// plain HTTP) was two thirds of it.
	np := cachedPageOf(p.status, p.header, pageETag(body), len(body), gzipBytes(body, gzip.BestCompression), nil)
	np.engagement, np.rendered = p.engagement, p.rendered
	np.expires = expiryWithin(changes, now, p.clock.until)
	np.clock = &pageClock{now: now, ago: p.clock.ago, until: p.clock.until}
	return np
}
