package store

import (
	"context"
	"time"
)

// Without Redis no bump is announced, so a version learned from the
// database is trusted for UnannouncedTrust (another process's write shows
// within it) and then read again, one query per app and second. With
// visitors reading a thousand apps that was a query for most requests'
// app, each answered in turn by SQLite's connection: 9% of the server's
// CPU in a profile of `scripts/bench apps`, and a wait for the visitor.
// RefreshPageVersions reads instead every version read recently, a few
// hundred per query, twice per UnannouncedTrust, so the versions visitors
// use are always trusted and a request reads the database only for an app
// nobody read in the last refreshActiveRounds.
//
// With Redis announcing bumps a version is trusted for VersionTrust, and
// then each app's next request read it again: on PostgreSQL with a
// thousand apps, a query every five seconds for each app, each one a
// visitor waiting for it (`scripts/bench apps`). The rounds refresh those
// too, each version once it is due within two rounds, so about every
// four seconds.

const (
	// refreshEvery is the pace of the rounds: each version is read again
	// well within its trust.
	refreshEvery = UnannouncedTrust / 2
	// refreshActiveRounds: a scope not read for that many rounds (ten
	// seconds) is left to expire, and read again at its next use.
	refreshActiveRounds = 20
	// refreshBatch is how many scopes one query reads.
	refreshBatch = 500
)

// touch notes that scope was used in this round (pv.mu held): the next
// round refreshes it.
func (pv *pageVersions) touch(scope string, k knownVersion) {
	if k.used == pv.round {
		return
	}
	k.used = pv.round
	pv.known[scope] = k
	if len(pv.touched) < touchedLimit { // no refresher running: bounded all the same
		pv.touched = append(pv.touched, scope)
	}
}

const touchedLimit = 100_000

// RefreshPageVersions refreshes the versions read recently, every
// refreshEvery until ctx ends. Server.Run starts it.
func (s *Storage) RefreshPageVersions(ctx context.Context) {
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	active := map[string]uint32{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.refreshPageVersions(ctx, active); err != nil && ctx.Err() == nil {
			s.logger.Warn("refreshing page versions; requests read them themselves", "err", err)
		}
	}
}

// refreshPageVersions is one round: it reads the versions of the scopes
// used in the last refreshActiveRounds (active: scope to the round it was
// last used in, kept between rounds) whose trust runs out before the round
// after next, and answers how many it read. A version read is kept only if
// it is not older than the one known (a bump of this process may have
// moved it meanwhile), trusted from the query's start.
func (s *Storage) refreshPageVersions(ctx context.Context, active map[string]uint32) (int, error) {
	pv := s.pv()
	now := time.Now()
	pv.mu.Lock()
	round := pv.round
	pv.round++
	for _, scope := range pv.touched {
		active[scope] = round
	}
	pv.touched = nil
	due := pv.trustLocked() - 2*refreshEvery
	scopes := make([]string, 0, len(active))
	for scope, used := range active {
		if round-used >= refreshActiveRounds {
			delete(active, scope)
			continue
		}
		if k, ok := pv.known[scope]; ok && now.Sub(k.at) < due {
			continue // trusted past the next round
		}
		scopes = append(scopes, scope)
	}
	pv.mu.Unlock()
	read := 0
	for len(scopes) > 0 {
		batch := scopes[:min(refreshBatch, len(scopes))]
		scopes = scopes[len(batch):]
		start := time.Now()
		got, err := s.PageVersions(ctx, batch...)
		if err != nil {
			return read, err
		}
		read += len(batch)
		pv.mu.Lock()
		for _, scope := range batch {
			k, ok := pv.known[scope]
			if !ok || got[scope] < k.version || !start.After(k.at) {
				continue // forgotten, moved on by a bump, or read since
			}
			k.version, k.at = got[scope], start
			pv.known[scope] = k
		}
		pv.mu.Unlock()
	}
	return read, nil
}
