package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server"
	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/server/push"
	"marquee/store"
	"marquee/store/migrations"
)

// application is everything a command needs, built from the environment.
type application struct {
	cfg     server.Config
	db      *bun.DB
	redis   *redis.Client
	storage *store.Storage
	files   media.Storage
	logger  *slog.Logger
}

func (a *application) Close() {
	if a.redis != nil {
		a.redis.Close()
	}
	a.db.Close()
}

func openApp(ctx context.Context, logger *slog.Logger) (*application, error) {
	cfg, err := server.LoadConfig(nil)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx, db, migrations.Migrations); err != nil {
		db.Close()
		return nil, err
	}
	if err := jobs.Migrate(ctx, db, cfg.DatabaseURL, logger); err != nil {
		db.Close()
		return nil, err
	}
	a := &application{cfg: cfg, db: db, logger: logger}
	var cache store.Cache = store.NewMemoryCache()
	if cfg.RedisURL != "" {
		// Short timeouts and a breaker: when Redis is down, pages, sessions
		// and rate limits fall back to the database or the process at once.
		client, err := store.OpenRedis(cfg.RedisURL)
		if err != nil {
			db.Close()
			return nil, err
		}
		a.redis = client
		cache = &store.RedisCache{Client: a.redis, Prefix: "marquee:"}
	}
	files, err := openFiles(ctx, cfg, db)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.files = files
	a.storage = store.NewStorage(db, cache, media.Signer{Storage: files}, logger)
	// Redis caches sessions (the database keeps them) and holds the
	// rate-limit counters every process shares.
	a.storage.Redis = a.redis
	return a, nil
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
		if key, err = storedSecret(ctx, db, "media-signing-key"); err != nil {
			return nil, err
		}
	}
	return &media.Local{Dir: cfg.MediaDir, BaseURL: cfg.PublicURL, Key: []byte(key)}, nil
}

// storedSecret returns a secret generated on first use and kept in the
// database, so restarts keep signed URLs valid without configuration.
func storedSecret(ctx context.Context, db *bun.DB, name string) (string, error) {
	var secret store.Secret
	err := db.NewSelect().Model(&secret).Where("name = ?", name).Scan(ctx)
	if err == nil {
		return secret.Value, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("load secret %s: %w", name, err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	secret = store.Secret{Name: name, Value: hex.EncodeToString(b[:])}
	if _, err := db.NewInsert().Model(&secret).On("CONFLICT (name) DO NOTHING").Exec(ctx); err != nil {
		return "", fmt.Errorf("store secret %s: %w", name, err)
	}
	// Another process may have won the race; read back the value that stuck.
	if err := db.NewSelect().Model(&secret).Where("name = ?", name).Scan(ctx); err != nil {
		return "", fmt.Errorf("reload secret %s: %w", name, err)
	}
	return secret.Value, nil
}

func serve(ctx context.Context, logger *slog.Logger) error {
	if os.Getenv("GOGC") == "" {
		// Server-side React allocates many short-lived strings; collecting
		// less often cut the median landing render by a third (scripts/bench).
		debug.SetGCPercent(400)
	}
	a, err := openApp(ctx, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	engine, err := render.New(render.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("start renderer (did you run the build?): %w", err)
	}
	a.storage.Build = engine.BuildID()
	srv := server.New(server.Deps{Config: a.cfg, Store: a.storage, Renderer: engine, Files: a.files, Logger: logger})
	queue, err := jobs.New(ctx, jobs.Options{DB: a.db, DatabaseURL: a.cfg.DatabaseURL, Logger: logger,
		Work: jobs.Product(jobs.Deps{Store: a.storage, Files: a.files, Logger: logger, OrderExpiry: a.cfg.OrderExpiry,
			CardRenewals: srv.CardRenewals(), StrayRefunds: srv.StrayRefunds(),
			Push: &push.Sender{Store: a.storage, Subscriber: a.cfg.PushSubscriber, Logger: logger}})})
	if err != nil {
		return err
	}
	if err := queue.Start(ctx); err != nil {
		return err
	}
	runErr := srv.Run(ctx)
	// The server has drained; running jobs get the same grace to finish,
	// and whatever has not started stays queued in the database.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := queue.Stop(stopCtx); err != nil {
		logger.Warn("stop job queue", "err", err)
	}
	return runErr
}

func seedDemo(ctx context.Context, logger *slog.Logger) error {
	a, err := openApp(ctx, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := seed.Demo(ctx, a.db, a.files); err != nil {
		return fmt.Errorf("seed demo: %w", err)
	}
	a.storage.InvalidateLanding(ctx, "demo")
	a.storage.InvalidateLanding(ctx, "acme")
	logger.Info("demo seeded", "url", a.cfg.PublicURL+"/apps/demo")
	return nil
}
