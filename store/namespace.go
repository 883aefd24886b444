package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/uptrace/bun"
)

// Every key and channel this deployment uses in Redis is named
// "marquee:<namespace>:...": sessions, rate-limit counters, cached data,
// shared renders and the announcement channels. The namespace says which
// database the entries belong to, so that
//   - two deployments sharing a Redis (even on copies of one database)
//     never read each other's entries or accept each other's sessions, and
//   - after a restore, or any other swap of the database under running
//     instances, nothing cached from the database that was there before is
//     read again: the restored database has a new namespace, and every
//     process notices it (WatchDatabase) and drops what it holds.
//
// The namespace is a hash of the database's generation (a secret that
// `marquee restore` renews: RenewGeneration) and of what tells this copy
// of the data from another: on PostgreSQL the server's system identifier,
// the database's oid and the oid of its secrets table (which pg_restore
// --clean recreates, so a restore made by hand is noticed too); on SQLite
// the file's path.

// generationSecret names the secret holding the database's generation. (It
// was the namespace itself before restores renewed it: the name is kept.)
const generationSecret = "redis-namespace"

// GenerationCheckEvery is how often a serving process asks the database
// whether it was replaced (WatchDatabase): the bound on how long an
// instance may serve what it cached from a database that is gone.
const GenerationCheckEvery = 2 * time.Second

// DatabaseNamespace answers the namespace of the database db is connected
// to (12 hex digits), creating its generation on first use.
func DatabaseNamespace(ctx context.Context, db *bun.DB) (string, error) {
	gen, err := StoredSecret(ctx, db, generationSecret, newGeneration)
	if err != nil {
		return "", err
	}
	id, err := databaseIdentity(ctx, db)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(gen + "\x00" + id))
	return hex.EncodeToString(sum[:6]), nil
}

// RenewGeneration gives the database a new generation: every instance
// reading it stops using what Redis or its own memory holds for the old
// one. `marquee restore` calls it on the database it put back.
func RenewGeneration(ctx context.Context, db *bun.DB) error {
	gen, err := newGeneration()
	if err != nil {
		return err
	}
	_, err = db.NewInsert().Model(&Secret{Name: generationSecret, Value: gen}).
		On("CONFLICT (name) DO UPDATE").Set("value = EXCLUDED.value").Exec(ctx)
	if err != nil {
		return fmt.Errorf("renew the database generation: %w", err)
	}
	return nil
}

func newGeneration() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// databaseIdentity tells this copy of a database from another with the
// same contents.
func databaseIdentity(ctx context.Context, db *bun.DB) (string, error) {
	if db.Dialect().Name().String() == "pg" {
		var dbOID, tableOID int64
		err := db.NewRaw(`SELECT d.oid, 'secrets'::regclass::oid FROM pg_database d WHERE d.datname = current_database()`).
			Scan(ctx, &dbOID, &tableOID)
		if err != nil {
			return "", fmt.Errorf("identify the database: %w", err)
		}
		// A managed service may refuse pg_control_system to its users:
		// the oids still tell copies on one server apart.
		var system string
		if err := db.NewRaw(`SELECT system_identifier::text FROM pg_control_system()`).Scan(ctx, &system); err != nil {
			system = ""
		}
		return fmt.Sprintf("pg:%s:%d:%d", system, dbOID, tableOID), nil
	}
	var rows []struct {
		Seq  int
		Name string
		File string
	}
	if err := db.NewRaw(`PRAGMA database_list`).Scan(ctx, &rows); err != nil {
		return "", fmt.Errorf("identify the database: %w", err)
	}
	for _, r := range rows {
		if r.Name == "main" {
			if abs, err := filepath.Abs(r.File); err == nil && r.File != "" {
				return "sqlite:" + abs, nil
			}
			return "sqlite:" + r.File, nil
		}
	}
	return "sqlite:", nil
}

// RedisKey names a key or channel of this database in Redis:
// "marquee:<namespace>:<name>".
func (s *Storage) RedisKey(name string) string {
	ns := s.CurrentNamespace()
	if ns == "" {
		return "marquee:" + name
	}
	return "marquee:" + ns + ":" + name
}

// CurrentNamespace is the namespace in use: Namespace until the database
// was found replaced, then the replacement's.
func (s *Storage) CurrentNamespace() string {
	if ns := s.swappedTo.Load(); ns != nil {
		return *ns
	}
	return s.namespace
}

// OnDatabaseSwap registers fn to run when the database is found replaced,
// after this store dropped what it holds: the server drops its rendered
// pages there.
func (s *Storage) OnDatabaseSwap(fn func()) {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	s.onSwap = append(s.onSwap, fn)
}

// swapNotice is closed at the next swap (WatchPageVersions subscribes
// again, to the new namespace's channels).
func (s *Storage) swapNotice() <-chan struct{} {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	if s.swapped == nil {
		s.swapped = make(chan struct{})
	}
	return s.swapped
}

// WatchDatabase asks the database every interval (GenerationCheckEvery
// when 0) whether it is still the one this process started on, until ctx
// ends; when it is not (a restore, a failover to other data), the process
// forgets everything it cached and moves to the new namespace, leaving
// what Redis holds for the old database unread.
func (s *Storage) WatchDatabase(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = GenerationCheckEvery
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.CheckDatabase(ctx)
	}
}

// CheckDatabase compares the database's namespace with the one in use and
// swaps when they differ; it reports whether it swapped. A database that
// does not answer is not a swap.
func (s *Storage) CheckDatabase(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ns, err := DatabaseNamespace(cctx, s.db)
	if err != nil || ns == s.CurrentNamespace() {
		return false
	}
	s.logger.Warn("the database was replaced (a restore or a swap): dropping every cached page, data and session of the one before",
		"namespace", ns, "before", s.CurrentNamespace())
	s.swapNamespace(ns)
	return true
}

// swapNamespace moves to ns and drops everything this process remembers
// of the database before.
func (s *Storage) swapNamespace(ns string) {
	s.swappedTo.Store(&ns)
	if c, ok := s.cache.(interface{ Purge() }); ok {
		c.Purge()
	}
	s.landingMemo.Clear()
	s.landingContentMemo.Clear()
	s.touched.Clear()
	s.sessions.purge()
	s.pv().forget("", nil)
	s.swapMu.Lock()
	hooks := append([]func(){}, s.onSwap...)
	if s.swapped != nil {
		close(s.swapped)
		s.swapped = nil
	}
	s.swapMu.Unlock()
	for _, fn := range hooks {
		fn()
	}
}
