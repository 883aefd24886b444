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

// Options are what a Storage is built from; New is the only way to build
// one, and nothing changes them afterwards (the assembly, package assemble,
// fills them from the configuration).
type Options struct {
	DB *bun.DB
	// Cache holds cached pages, lists and lookups; nil is a RedisCache on
	// Redis (its keys under RedisKey) when Redis is set, else a memory cache.
	Cache Cache
	Media URLSigner
	// MediaURL is the main site's public URL that stable media URLs
	// (PublicMediaPath) start with; empty gives root-relative ones.
	MediaURL string
	// Logger is slog.Default() when nil.
	Logger *slog.Logger
	// Redis, when set (REDIS_URL), holds sessions and rate-limit counters so
	// every process shares them; nil keeps sessions in the database.
	Redis *redis.Client
	// Namespace separates this database's keys and channels in a Redis that
	// other deployments (or an earlier database) share: DatabaseNamespace.
	// It changes when the database is replaced under the process, so the
	// store's users read it through CurrentNamespace or RedisKey.
	Namespace string
	// Grace is how long a membership keeps access after a renewal is due
	// and has not arrived (a wallet that could not pay, a card whose
	// invoice is late or failed); 0 is DefaultGracePeriod.
	Grace time.Duration
	// PlatformFeeBP is the platform's fee on every payment in basis points
	// (PLATFORM_FEE_PERCENT x 100); an app's own (payout_accounts.fee_bp)
	// overrides it.
	PlatformFeeBP int64
	// RenderAhead enqueues JobRenderPages with every write that changes
	// an app's content (page_render.go, RENDER_AHEAD).
	RenderAhead bool
}

// Storage is the data layer: the database, the cache and the media URL
// signer, with one file per entity for its loaders and writes. Its fields
// are unexported so that what New was given is what every request sees: a
// field set after the server was built (the server once wrote the fee and
// the media URL into it) applied to some parts and not others.
type Storage struct {
	db            *bun.DB
	cache         Cache
	media         URLSigner
	mediaURL      string
	logger        *slog.Logger
	rdb           *redis.Client
	namespace     string
	grace         time.Duration
	platformFeeBP int64
	renderAhead   bool
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
	// landingBuildCount counts landing data built from the database
	// (LandingBuilds).
	landingBuildCount atomic.Int64
	// versions owns the page versions of this process (pageversion.go).
	versions     *pageVersions
	versionsOnce sync.Once
	// sessions remembers session lookups for SessionMemoTTL (session_memo.go).
	sessions *sessionMemo
	// endedHeard counts the announcements of ended sessions this process
	// received (SessionChannel, EndedHeard).
	endedHeard atomic.Int64
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

// New builds the store from o.
func New(o Options) *Storage {
	s := &Storage{db: o.DB, cache: o.Cache, media: o.Media, mediaURL: o.MediaURL, logger: o.Logger, rdb: o.Redis,
		namespace: o.Namespace, grace: o.Grace, platformFeeBP: o.PlatformFeeBP, renderAhead: o.RenderAhead, sessions: newSessionMemo()}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.cache == nil {
		if s.rdb != nil {
			s.cache = &RedisCache{Client: s.rdb, Name: s.RedisKey}
		} else {
			s.cache = NewMemoryCache()
		}
	}
	return s
}

// DB is the database, for the writes outside the store that are not the
// store's: the job queue's inserts (jobs.Enqueue), the metrics' pool
// statistics, readiness pings.
func (s *Storage) DB() *bun.DB { return s.db }

// Cache is the cache New was given (or made).
func (s *Storage) Cache() Cache { return s.cache }

// Redis is the Redis client sessions and rate limits share, nil without
// REDIS_URL.
func (s *Storage) Redis() *redis.Client { return s.rdb }

// Logger is the logger the store reports to.
func (s *Storage) Logger() *slog.Logger { return s.logger }

// LandingBuilds counts landing data built from the database (tests and the
// benchmark read it).
func (s *Storage) LandingBuilds() int64 { return s.landingBuildCount.Load() }

// EndedHeard counts the announcements of ended sessions this process
// received (SessionChannel); tests wait on it.
func (s *Storage) EndedHeard() int64 { return s.endedHeard.Load() }

// GracePeriod answers the configured grace, DefaultGracePeriod when unset.
func (s *Storage) GracePeriod() time.Duration {
	if s.grace <= 0 {
		return DefaultGracePeriod
	}
	return s.grace
}
