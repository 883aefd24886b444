package store

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"golang.org/x/sync/singleflight"
)

// URLSigner turns a media object key into a URL a browser can load.
type URLSigner interface {
	SignedURL(ctx context.Context, key string) (string, error)
}

// Storage is the data layer: the database, the cache and the media URL
// signer, with one file per entity for its loaders and writes.
type Storage struct {
	DB    *bun.DB
	Cache Cache
	Media URLSigner
	// MediaURL is the main site's public URL that stable media URLs
	// (PublicMediaPath) start with; empty gives root-relative ones.
	MediaURL string
	Logger   *slog.Logger
	// Build identifies the deployed bundles; cached pages are keyed by it.
	Build string
	// Redis, when set (REDIS_URL), holds sessions and rate-limit counters so
	// every process shares them; nil keeps sessions in the database.
	Redis *redis.Client
	// Namespace separates this database's keys and channels in a Redis that
	// other deployments (or an earlier database) share; app.Open sets it
	// (DatabaseNamespace). Read it through CurrentNamespace or RedisKey: it
	// changes when the database is replaced under the process.
	Namespace string
	// Grace is how long a membership keeps access after a renewal is due
	// and has not arrived (a wallet that could not pay, a card whose
	// invoice is late or failed); 0 is DefaultGracePeriod.
	Grace time.Duration
	// PlatformFeeBP is the platform's fee on every payment in basis points
	// (PLATFORM_FEE_PERCENT x 100); an app's own (payout_accounts.fee_bp)
	// overrides it.
	PlatformFeeBP int64
	// landingMemo holds, per app, the last landing view decoded from a
	// versioned in-process key (Landing).
	landingMemo sync.Map
	// landingContentMemo is the same for the content part alone, per
	// content version (landingContent).
	landingContentMemo sync.Map
	// landingBuilds collapses concurrent builds of one landing key.
	landingBuilds singleflight.Group
	// countBuilds collapses concurrent reads of one list's counts.
	countBuilds singleflight.Group
	// listBuilds collapses concurrent loads of one list page (cachedList).
	listBuilds singleflight.Group
	// LandingBuildCount counts landing data built from the database (tests
	// and the benchmark read it).
	LandingBuildCount atomic.Int64
	// versions owns the page versions of this process (pageversion.go).
	versions     *pageVersions
	versionsOnce sync.Once
	// sessions remembers session lookups for SessionMemoTTL (session_memo.go).
	sessions *sessionMemo
	// EndedHeard counts the announcements of ended sessions this process
	// received (SessionChannel); tests wait on it.
	EndedHeard atomic.Int64
	// touched holds, per session id, when this process last recorded the
	// session's use (TouchSession writes at most every few minutes).
	touched sync.Map
	// swappedTo is the namespace of the database that replaced the one
	// this process started on (namespace.go); onSwap and swapped are told.
	swappedTo atomic.Pointer[string]
	swapMu    sync.Mutex
	onSwap    []func()
	swapped   chan struct{}
}

// GracePeriod answers the configured grace, DefaultGracePeriod when unset.
func (s *Storage) GracePeriod() time.Duration {
	if s.Grace <= 0 {
		return DefaultGracePeriod
	}
	return s.Grace
}

func NewStorage(db *bun.DB, cache Cache, signer URLSigner, logger *slog.Logger) *Storage {
	if cache == nil {
		cache = NewMemoryCache()
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Storage{DB: db, Cache: cache, Media: signer, Logger: logger, sessions: newSessionMemo()}
}
