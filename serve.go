package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"marquee/assemble"
	"marquee/render"
	"marquee/scripts/seed"
	"marquee/server"
	"marquee/store"
)

// defaultMemoryLimit is serve's soft memory limit when GOMEMLIMIT is unset.
const defaultMemoryLimit = 170 << 20

func serve(ctx context.Context, logger *slog.Logger) error {
	if os.Getenv("GOGC") == "" {
		// Server-side React allocates many short-lived strings; collecting
		// less often cut the median landing render by a third (scripts/bench).
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// GOGC=400 lets the heap grow to five times what is live; past
		// this soft limit the collector runs earlier instead, so RSS stays
		// near the 200 MB budget (docs/BENCHMARKS.md) while the live heap
		// is well under it. GOMEMLIMIT overrides it (off for no limit).
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	cfg, err := server.LoadConfig(nil)
	if err != nil {
		return err
	}
	// Before anything is opened: a mail or media folder this user cannot
	// write would only show as every mail failing later.
	if err := cfg.CheckFolders(); err != nil {
		return err
	}
	// Bound first, so the URLs derived from the ports are right everywhere.
	lns, err := server.Listen(&cfg)
	if err != nil {
		return err
	}
	defer lns.Close()
	a, err := assemble.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	engine, err := a.Renderer(render.Options{})
	if err != nil {
		return err
	}
	srv := a.Server(engine, assemble.ServerOptions{})
	queue, err := a.Jobs(ctx, srv)
	if err != nil {
		return err
	}
	if err := queue.Start(ctx); err != nil {
		return err
	}
	// Which database this is, so a DATABASE_URL that was not meant (no
	// scheme: a new SQLite file) shows at once.
	logger.Info("database", "in_use", store.DescribeDatabase(a.Config.DatabaseURL))
	if mailer := srv.Mailer(); a.Config.SMTPURL == "" {
		logger.Info("mail: no SMTP_URL, writing mails as .eml files", "dir", mailer.Transport.Describe())
	} else {
		logger.Info("mail: sending through SMTP", "server", mailer.Transport.Describe())
	}
	runErr := srv.Run(ctx, lns)
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
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := seed.Demo(ctx, a.DB, a.Files); err != nil {
		return fmt.Errorf("seed demo: %w", err)
	}
	a.Storage.InvalidateLanding(ctx, "demo")
	a.Storage.InvalidateLanding(ctx, "acme")
	logger.Info("demo seeded", "url", a.Config.PublicURL+"/apps/demo")
	return nil
}
