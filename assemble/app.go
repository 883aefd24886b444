// Package assemble puts Marquee together from its configuration, in one
// place: the database and its migrations, Redis, the media storage, the
// store, the renderer, the server with its payment providers, the one push
// sender, and the job queue with every worker. The serve command, the other
// CLI commands, the scripts, the benchmarks and the tests that run the whole
// product all build it here, so the parts are put together one way
// (TestOnlyTheAssemblyBuildsTheParts). It sits at the top level rather than
// under server/ because it imports the server and everything beside it.
package assemble

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"marquee/render"
	"marquee/server"
	"marquee/server/domains"
	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/server/push"
	"marquee/store"
	"marquee/store/migrations"
)

// App is the assembled product's data side; Renderer, Server and Jobs add
// the parts only serving needs.
type App struct {
	Config  server.Config
	DB      *bun.DB
	Redis   *redis.Client
	Storage *store.Storage
	Files   media.Storage
	// Push is the one web push sender: the server's notices and the jobs'
	// fan-outs share its VAPID keys and its client.
	Push   *push.Sender
	Logger *slog.Logger
}

// FromEnv is Open with the configuration of the environment.
func FromEnv(ctx context.Context, logger *slog.Logger) (*App, error) {
	cfg, err := server.LoadConfig(nil)
	if err != nil {
		return nil, err
	}
	return Open(ctx, cfg, logger)
}

// Open connects to the database and migrates it (the store's tables and
// river's), connects Redis when configured, and opens the media storage.
func Open(ctx context.Context, cfg server.Config, logger *slog.Logger) (*App, error) {
	db, err := store.OpenWith(cfg.DatabaseURL, store.DBOptions{ConnectTimeout: cfg.DBConnectTimeout, QueryTimeout: cfg.DBQueryTimeout,
		MaxIdleTime: cfg.DBMaxIdleTime})
	if err != nil {
		return nil, err
	}
	// The store's tables and river's are migrated under one lock, and
	// only when something is missing (store/migrate.go).
	err = store.Migrate(ctx, cfg.DatabaseURL, migrations.Migrations, store.MigrateOptions{
		LockTimeout: cfg.MigrationLockTimeout, Logger: logger, AllowNewerSchema: cfg.AllowNewerSchema,
		Pending: func(ctx context.Context) (bool, error) { return jobs.Pending(ctx, db, cfg.DatabaseURL, logger) },
		Then:    func(ctx context.Context) error { return jobs.Migrate(ctx, db, cfg.DatabaseURL, logger) },
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	if cfg.DBMaxConns > 0 && db.Dialect().Name().String() == "pg" {
		db.SetMaxOpenConns(cfg.DBMaxConns)
		db.SetMaxIdleConns(cfg.DBMaxConns)
	}
	a := &App{Config: cfg, DB: db, Logger: logger}
	if cfg.RedisURL != "" {
		// Short timeouts and a breaker: when Redis is down, pages, sessions
		// and rate limits fall back to the database or the process at once.
		client, err := store.OpenRedis(cfg.RedisURL, cfg.RedisPoolSize, logger)
		if err != nil {
			db.Close()
			return nil, err
		}
		a.Redis = client
		// Serving goes on without Redis (slower paths); the operator is told.
		pingCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := client.Ping(pingCtx).Err(); err != nil {
			logger.Warn("Redis is not reachable at start; serving without it until it answers", "err", err)
		}
		cancel()
	}
	// Every key and channel in Redis carries the database's namespace:
	// another deployment on the same Redis, or this one after its database
	// was restored or replaced, never reads these entries (an app name
	// would otherwise map to an id of the old database, a session of the
	// old database would be accepted). store/namespace.go.
	ns, err := store.DatabaseNamespace(ctx, db)
	if err != nil {
		a.Close()
		return nil, err
	}
	files, err := openFiles(ctx, cfg, db)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Files = files
	// Redis caches pages and sessions (the database keeps them) and holds
	// the rate-limit counters every process shares; without it the cache
	// is the process's memory. Stable media URLs (og:image, srcset) point
	// at the main site.
	a.Storage = store.New(store.Options{DB: db, Media: media.Signer{Storage: files}, Logger: logger,
		MediaURL: strings.TrimRight(cfg.PublicURL, "/"), Redis: a.Redis, Namespace: ns, PlatformFeeBP: cfg.PlatformFeeBP,
		RenderAhead: cfg.RenderAhead})
	a.Push = &push.Sender{Store: a.Storage, Subscriber: cfg.PushSubscriber, Logger: logger}
	return a, nil
}

func (a *App) Close() {
	if a.Redis != nil {
		a.Redis.Close()
	}
	a.DB.Close()
}

// Renderer starts the server-side React renderer on the built bundles.
func (a *App) Renderer(opts render.Options) (*render.Engine, error) {
	if opts.Logger == nil {
		opts.Logger = a.Logger
	}
	// The engine's own timer must be RENDER_TIMEOUT too: left at the
	// engine's default it cut renders at 2 s whatever the operator set.
	if opts.Timeout <= 0 {
		opts.Timeout = a.Config.RenderTimeout
	}
	engine, err := render.New(opts)
	if err != nil {
		return nil, fmt.Errorf("start renderer (did you run the build?): %w", err)
	}
	return engine, nil
}

// ServerOptions are the choices a caller of Server may make.
type ServerOptions struct {
	// NoPageCache renders every page per request (scripts/bench).
	NoPageCache bool
}

// Server builds both sites on the app, with the payment providers the
// configuration enables.
func (a *App) Server(r server.Renderer, opts ServerOptions) *server.Server {
	return server.New(server.Deps{Config: a.Config, Store: a.Storage, Renderer: r, Files: a.Files, Logger: a.Logger,
		Push: a.Push, NoPageCache: opts.NoPageCache})
}

// Jobs builds the durable job queue with every worker of the product
// (jobs.Product); srv supplies the providers jobs call back into.
func (a *App) Jobs(ctx context.Context, srv *server.Server) (*jobs.Queue, error) {
	return jobs.New(ctx, jobs.Options{DB: a.DB, DatabaseURL: a.Config.DatabaseURL, Logger: a.Logger, JobRetention: a.Config.JobRetention,
		MaxConns: JobConns(a.Config.DBMaxConns), Failures: srv.JobFailures(),
		Work: jobs.Product(jobs.Deps{Store: a.Storage, Files: a.Files, Logger: a.Logger, OrderExpiry: a.Config.OrderExpiry,
			PublishInterval: a.Config.PublishInterval,
			CardRenewals:    srv.CardRenewals(), StrayRefunds: srv.StrayRefunds(), Mail: srv.Mailer(),
			Domains:        domains.Checker{Resolver: a.Config.DNSResolver, Timeout: a.Config.DNSTimeout},
			DomainVerified: srv.DomainsChanged,
			Pages:          srv,
			Push:           a.Push,
			Retention:      store.Retention{Notifications: a.Config.NotificationRetention}})})
}

func openFiles(ctx context.Context, cfg server.Config, db *bun.DB) (media.Storage, error) {
	if cfg.S3.Enabled() {
		return media.NewS3(ctx, media.S3Options{
			Endpoint: cfg.S3.Endpoint, AccessKey: cfg.S3.AccessKey, SecretKey: cfg.S3.SecretKey,
			Bucket: cfg.S3.Bucket, Region: cfg.S3.Region, UseSSL: cfg.S3.UseSSL,
		})
	}
	key := cfg.SecretKey
	if key == "" {
		var err error
		// Generated on first use and kept in the database, so restarts
		// keep signed URLs valid without configuration.
		if key, err = store.StoredSecret(ctx, db, "media-signing-key", randomKey); err != nil {
			return nil, err
		}
	}
	return &media.Local{Dir: cfg.MediaDir, BaseURL: cfg.PublicURL, Key: []byte(key)}, nil
}

// Admin connects to the job queue without working it: what the CLI's
// `jobs failed` and `jobs retry` use.
func (a *App) Admin(ctx context.Context) (*jobs.Queue, error) {
	return jobs.New(ctx, jobs.Options{DB: a.DB, DatabaseURL: a.Config.DatabaseURL, Logger: a.Logger,
		MaxConns: JobConns(a.Config.DBMaxConns), Work: jobs.Work{Workers: river.NewWorkers()}})
}

// JobConns is the job queue's own pool beside the DB_MAX_CONNS of the
// request pool: a fifth of it, at least 2 (river listens on one) and at
// most 4. An instance holds up to DB_MAX_CONNS + JobConns connections.
func JobConns(dbMaxConns int) int {
	return min(max(dbMaxConns/5, 2), 4)
}

func randomKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
