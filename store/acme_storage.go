package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/uptrace/bun"
)

// ACMEStorage is certmagic's storage in the database (issue 42 item 4):
// the certificates, keys and ACME accounts TLS_ACME obtains, shared by
// every instance on the database, so a certificate one instance obtained is
// served by all of them without a new issuance. Keys are paths ("a/b/c");
// a key that prefixes others is a directory. Locks are rows with an expiry
// that their holder renews while it holds them: an instance that stops
// mid-issuance frees the name after LockLease.
type ACMEStorage struct {
	DB *bun.DB
	// LockLease is how long a lock outlives its holder's last renewal
	// (default 20s); LockPoll how often a waiting Lock tries again
	// (default 500ms).
	LockLease, LockPoll time.Duration

	mu   sync.Mutex
	held map[string]heldLock
}

type heldLock struct {
	owner string
	stop  context.CancelFunc
}

var _ certmagic.Storage = (*ACMEStorage)(nil)

func (s *ACMEStorage) lease() time.Duration {
	if s.LockLease > 0 {
		return s.LockLease
	}
	return 20 * time.Second
}

func (s *ACMEStorage) poll() time.Duration {
	if s.LockPoll > 0 {
		return s.LockPoll
	}
	return 500 * time.Millisecond
}

// normKey is a key as stored: no leading, trailing or doubled slashes.
func normKey(k string) string { return strings.Trim(path.Clean("/"+k), "/") }

// underDir is the WHERE clause of the keys under dir (a prefix match
// without LIKE, whose wildcards a key may contain).
func underDir(dir string) (string, []any) {
	p := dir + "/"
	return `substr("key", 1, ?) = ?`, []any{len([]rune(p)), p}
}

func (s *ACMEStorage) Store(ctx context.Context, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.DB.NewRaw(`INSERT INTO "acme_storage" ("key", "value", "modified") VALUES (?, ?, ?)
		ON CONFLICT ("key") DO UPDATE SET "value" = EXCLUDED."value", "modified" = EXCLUDED."modified"`,
		normKey(key), value, time.Now().UnixNano()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("acme storage: store %s: %w", key, err)
	}
	return nil
}

func (s *ACMEStorage) Load(ctx context.Context, key string) ([]byte, error) {
	var value []byte
	err := s.DB.NewRaw(`SELECT "value" FROM "acme_storage" WHERE "key" = ?`, normKey(key)).Scan(ctx, &value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("acme storage: %s: %w", key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("acme storage: load %s: %w", key, err)
	}
	return value, nil
}

func (s *ACMEStorage) Delete(ctx context.Context, key string) error {
	k := normKey(key)
	where, args := underDir(k)
	_, err := s.DB.NewRaw(`DELETE FROM "acme_storage" WHERE "key" = ? OR `+where, append([]any{k}, args...)...).Exec(ctx)
	if err != nil {
		return fmt.Errorf("acme storage: delete %s: %w", key, err)
	}
	return nil
}

func (s *ACMEStorage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

// List answers the keys under dir: every key and directory below it when
// recursive, else its direct children (a file or a directory, once each).
func (s *ACMEStorage) List(ctx context.Context, dir string, recursive bool) ([]string, error) {
	d := normKey(dir)
	var keys []string
	var err error
	if d == "" {
		err = s.DB.NewRaw(`SELECT "key" FROM "acme_storage"`).Scan(ctx, &keys)
	} else {
		where, args := underDir(d)
		err = s.DB.NewRaw(`SELECT "key" FROM "acme_storage" WHERE `+where, args...).Scan(ctx, &keys)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("acme storage: list %s: %w", dir, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("acme storage: list %s: %w", dir, fs.ErrNotExist)
	}
	prefix := ""
	if d != "" {
		prefix = d + "/"
	}
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range keys {
		rest := strings.TrimPrefix(k, prefix)
		parts := strings.Split(rest, "/")
		if !recursive {
			add(prefix + parts[0])
			continue
		}
		for i := range parts {
			add(prefix + strings.Join(parts[:i+1], "/"))
		}
	}
	sort.Strings(out)
	return out, nil
}

func (s *ACMEStorage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	k := normKey(key)
	var row struct {
		Modified int64 `bun:"modified"`
		Size     int64 `bun:"size"`
	}
	err := s.DB.NewRaw(`SELECT "modified", length("value") AS "size" FROM "acme_storage" WHERE "key" = ?`, k).Scan(ctx, &row)
	if err == nil {
		return certmagic.KeyInfo{Key: k, Modified: time.Unix(0, row.Modified), Size: row.Size, IsTerminal: true}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return certmagic.KeyInfo{}, fmt.Errorf("acme storage: stat %s: %w", key, err)
	}
	where, args := underDir(k)
	var n int
	if err := s.DB.NewRaw(`SELECT count(*) FROM "acme_storage" WHERE `+where, args...).Scan(ctx, &n); err != nil {
		return certmagic.KeyInfo{}, fmt.Errorf("acme storage: stat %s: %w", key, err)
	}
	if n == 0 || k == "" {
		return certmagic.KeyInfo{}, fmt.Errorf("acme storage: %s: %w", key, fs.ErrNotExist)
	}
	return certmagic.KeyInfo{Key: k}, nil
}

// Lock takes the named lock, waiting while another holder's lease runs;
// the lease is renewed until Unlock.
func (s *ACMEStorage) Lock(ctx context.Context, name string) error {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	owner := hex.EncodeToString(b)
	for {
		ok, err := s.tryLock(ctx, name, owner)
		if err != nil {
			if ctx.Err() != nil {
				// The wait was cut by the caller's deadline mid-query: the
				// driver reports that as an i/o timeout, certmagic expects
				// the context's own error.
				return ctx.Err()
			}
			if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
				// The driver's read deadline is the context's and may fire
				// a moment before the context itself says it is done.
				return context.DeadlineExceeded
			}
			return err
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.poll()):
		}
	}
	renewCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.mu.Lock()
	if s.held == nil {
		s.held = map[string]heldLock{}
	}
	s.held[name] = heldLock{owner: owner, stop: stop}
	s.mu.Unlock()
	go s.renew(renewCtx, name, owner)
	return nil
}

func (s *ACMEStorage) tryLock(ctx context.Context, name, owner string) (bool, error) {
	now := time.Now()
	if _, err := s.DB.NewRaw(`DELETE FROM "acme_locks" WHERE "name" = ? AND "expires" < ?`, name, now.UnixNano()).Exec(ctx); err != nil {
		return false, fmt.Errorf("acme storage: lock %s: %w", name, err)
	}
	res, err := s.DB.NewRaw(`INSERT INTO "acme_locks" ("name", "owner", "expires") VALUES (?, ?, ?) ON CONFLICT ("name") DO NOTHING`,
		name, owner, now.Add(s.lease()).UnixNano()).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("acme storage: lock %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (s *ACMEStorage) renew(ctx context.Context, name, owner string) {
	t := time.NewTicker(s.lease() / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.DB.NewRaw(`UPDATE "acme_locks" SET "expires" = ? WHERE "name" = ? AND "owner" = ?`,
				time.Now().Add(s.lease()).UnixNano(), name, owner).Exec(ctx)
		}
	}
}

// Unlock frees a lock this storage holds.
func (s *ACMEStorage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h, ok := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("acme storage: unlock %s: not held", name)
	}
	h.stop()
	if _, err := s.DB.NewRaw(`DELETE FROM "acme_locks" WHERE "name" = ? AND "owner" = ?`, name, h.owner).Exec(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("acme storage: unlock %s: %w", name, err)
	}
	return nil
}
