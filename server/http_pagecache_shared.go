package server

import (
	"context"
	"errors"
	"time"

	"marquee/store"
)

// With Redis, the instances of a deployment render a page once between
// them: the first to need a render claims it (store.ClaimPageRender) and
// shares the bytes (store.SharePage); the others serve the copy they have
// meanwhile, or wait for the shared one when they have none, and then take
// it instead of rendering. Under engagement every page is rendered again
// about once per staleness bound; without sharing, each instance did so.

// peerPoll is how often an instance that waits on a peer's render looks
// for it, and how long one that serves its own copy meanwhile leaves
// Redis alone.
const peerPoll = 20 * time.Millisecond

// fromPeers answers a page another instance rendered that will do: one at
// the current engagement, or (unless fresh, for a viewer who just wrote)
// one rendered within the staleness bound. While a peer renders it, stale
// is the answer when there is one, else it waits for the peer. When this
// process is to render the page, done is false and release, when not nil,
// gives up the deployment's claim on the render once the page is shared.
// Redis failing leaves the render to this process: slower, never wrong.
func (s *Server) fromPeers(ctx context.Context, key string, engagement int64, stale *cachedPage, fresh bool) (page *cachedPage, release func(), done bool) {
	if s.store.Redis() == nil {
		return nil, nil, false
	}
	// usable answers the shared page when it will do.
	usable := func() (*cachedPage, error) {
		sp, err := s.store.SharedPage(ctx, key)
		if err != nil || sp == nil || sp.Status == 0 {
			return nil, err
		}
		if sp.Engagement >= engagement || !fresh && time.Since(sp.Rendered) < s.pages.staleFor {
			p := sharedToCached(sp)
			if p.expired(time.Now()) {
				// Kept past its expiry for its clock (sharedTTL): its
				// relative times rewritten as of now, or a render.
				if p = p.restamped(s.now()); p == nil {
					return nil, nil
				}
				s.metrics.pageRestamped()
				s.sharePage(ctx, key, p)
			}
			s.metrics.sharedPage("taken")
			return p, nil
		}
		return nil, nil
	}
	deadline := time.Now().Add(s.claimTTL())
	for {
		p, err := usable()
		if err != nil {
			s.sharedWarn("shared page unavailable; rendering here", err)
			return nil, nil, false
		}
		if p != nil {
			return p, nil, true
		}
		release, claimed, err := s.store.ClaimPageRender(ctx, key, s.claimTTL())
		if err != nil {
			s.sharedWarn("page render claim unavailable; rendering here", err)
			return nil, nil, false
		}
		if claimed {
			// A peer may have shared the page and let its claim go between
			// the look above and the claim (it shares before it lets go).
			if p, err := usable(); err == nil && p != nil {
				release()
				return p, nil, true
			}
			return nil, release, false
		}
		if stale != nil {
			s.pages.markPeerRendering(key, time.Now().Add(peerPoll))
			s.metrics.sharedPage("peer_rendering")
			return stale, nil, true
		}
		if time.Now().After(deadline) {
			// The peer's claim outlived any render: it went away.
			return nil, nil, false
		}
		select {
		case <-ctx.Done():
			return nil, nil, false
		case <-time.After(peerPoll):
		}
	}
}

// claimTTL bounds a claim: a render's timeout and its compression. A peer
// that stops mid-render holds the page back for no longer.
func (s *Server) claimTTL() time.Duration {
	timeout := s.cfg.RenderTimeout
	if timeout <= 0 {
		timeout = defaultRenderTimeout
	}
	return timeout + time.Second
}

// sharePage files a page this process rendered for the other instances.
func (s *Server) sharePage(ctx context.Context, key string, p *cachedPage) {
	if s.store.Redis() == nil {
		return
	}
	err := s.store.SharePage(context.WithoutCancel(ctx), key, sharedOf(p), sharedTTL(p))
	if err != nil {
		s.sharedWarn("sharing a rendered page failed; the other instances render it themselves", err)
		return
	}
	s.metrics.sharedPage("shared")
}

// sharedTTL keeps a shared page until its expiry or, when only the clock
// ends it, until a render is due (pageClock.until): an instance that finds
// it expired rewrites its relative times instead of rendering it (pages
// rendered ahead by bench-data had passed their minute by the time a
// server read them, and 551 of 2,000 were rendered again under load).
func sharedTTL(p *cachedPage) time.Duration {
	until := p.expires
	if p.clock != nil && p.clock.until.After(until) {
		until = p.clock.until
	}
	return time.Until(until)
}

func (s *Server) sharedWarn(msg string, err error) {
	if errors.Is(err, store.ErrRedisUnavailable) {
		return // the breaker said once that Redis is down
	}
	s.logger.Warn(msg, "err", err)
}

// sharedToCached makes a cache entry of a shared page: it ages from its
// render, wherever that ran.
func sharedToCached(sp *store.SharedPage) *cachedPage {
	p := cachedPageOf(sp.Status, sp.Header, sp.ETag, sp.Length, sp.Gzip, sp.Brotli)
	p.engagement, p.rendered, p.expires = sp.Engagement, sp.Rendered, sp.Expires
	if sp.Expires.IsZero() {
		p.expires = sp.Rendered.Add(PageTTL)
	}
	if !sp.ClockUntil.IsZero() {
		p.clock = &pageClock{now: sp.ClockNow, ago: sp.Ago, until: sp.ClockUntil}
	}
	return p
}

// sharedOf is the shared (and disk) form of a cache entry.
func sharedOf(p *cachedPage) *store.SharedPage {
	sp := &store.SharedPage{
		Status: p.status, Header: p.header, ETag: p.etag, Length: p.identityLen, Gzip: p.gz, Brotli: p.brotliIfMade(),
		Engagement: p.engagement, Rendered: p.rendered, Expires: p.expires,
	}
	if p.clock != nil {
		sp.ClockNow, sp.Ago, sp.ClockUntil = p.clock.now, p.clock.ago, p.clock.until
	}
	return sp
}

// markPeerRendering notes that a peer renders key until about until: the
// requests meanwhile get the copy this process has, without asking Redis.
func (pc *pageCache) markPeerRendering(key string, until time.Time) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.peerBusy) > 10_000 {
		clear(pc.peerBusy)
	}
	pc.peerBusy[key] = until
}
