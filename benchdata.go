package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"marquee/assemble"
	"marquee/render"
	"marquee/scripts/seed"
)

// benchData runs `marquee bench-data [--app NAME] [--posts N] [--items N]
// [--events N] [--users N]`: one app filled with content at scale, for the
// API benchmarks of scripts/bench. It refuses an app name that exists.
func benchData(ctx context.Context, args []string, logger *slog.Logger) error {
	sz := seed.DefaultBenchSizes
	fs := flag.NewFlagSet("bench-data", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&sz.App, "app", sz.App, "app name")
	fs.IntVar(&sz.Posts, "posts", sz.Posts, "posts")
	fs.IntVar(&sz.Items, "items", sz.Items, "store items")
	fs.IntVar(&sz.Events, "events", sz.Events, "events")
	fs.IntVar(&sz.Users, "users", sz.Users, "users (members of the app)")
	apps := fs.Int("apps", 0, "seed this many apps named APP1..APPn, each with the sizes given")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return fmt.Errorf("%s", usage)
	}
	if sz.Posts < 0 || sz.Items < 0 || sz.Events < 0 || sz.Users < 0 || *apps < 0 {
		return errors.New("bench-data: sizes must be 0 or more")
	}
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	start := time.Now()
	if *apps > 0 {
		res, err := seed.BenchApps(ctx, a.DB, sz, *apps)
		if errors.Is(err, seed.ErrBenchSeeded) {
			return fmt.Errorf("bench-data: an app %s1..%s%d already exists (pick another prefix with --app, or drop the database)", sz.App, sz.App, *apps)
		}
		if err != nil {
			return fmt.Errorf("bench-data: %w", err)
		}
		a.Storage.InvalidateAllApps(ctx)
		fmt.Printf("seeded %d apps %s1..%s%d in %s: %d users, %d posts, %d comments, %d likes, %d store items, %d events, %d attendees\n",
			*apps, sz.App, sz.App, *apps, time.Since(start).Round(time.Millisecond), res.Users, res.Posts, res.Comments, res.Likes, res.Items, res.Events, res.Attendees)
		names := make([]string, *apps)
		for i := range names {
			names[i] = fmt.Sprintf("%s%d", sz.App, i+1)
		}
		return renderAhead(ctx, a, names)
	}
	res, err := seed.BenchData(ctx, a.DB, sz)
	if errors.Is(err, seed.ErrBenchSeeded) {
		return fmt.Errorf("bench-data: app %q already exists, nothing written (pick another with --app, or drop the database)", sz.App)
	}
	if err != nil {
		return fmt.Errorf("bench-data: %w", err)
	}
	// A running server drops whatever it cached of this app at once.
	a.Storage.InvalidateApp(ctx, res.AppID)
	fmt.Printf("seeded app %s in %s: %d users, %d posts, %d comments, %d likes, %d store items, %d events, %d attendees\n",
		sz.App, time.Since(start).Round(time.Millisecond), res.Users, res.Posts, res.Comments, res.Likes, res.Items, res.Events, res.Attendees)
	fmt.Printf("sign in as creator@%s.test or user1@%s.test with password %s: %s/apps/%s\n",
		sz.App, sz.App, seed.BenchPassword, a.Config.PublicURL, sz.App)
	return renderAhead(ctx, a, []string{sz.App})
}

// renderAhead renders the seeded apps' visitor pages into the page cache's
// second tier, as the render_pages jobs of the writes would have had the
// data been written through the product (the seed writes in bulk, around
// the store): a server started on the database finds them made, or (with
// another binary, or past their expiry) renders them at their first visit.
// Off with RENDER_AHEAD=false.
func renderAhead(ctx context.Context, a *assemble.App, names []string) error {
	if !a.Config.RenderAhead {
		return nil
	}
	start := time.Now()
	engine, err := a.Renderer(render.Options{})
	if err != nil {
		return err
	}
	srv := a.Server(engine, assemble.ServerOptions{})
	if !srv.PagesRenderedAheadLast() {
		return nil // PostgreSQL without Redis: the pages would go with this process
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for _, name := range names {
		g.Go(func() error { return srv.RenderAppPages(ctx, name) })
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("bench-data: render pages ahead: %w", err)
	}
	fmt.Printf("rendered the visitor pages of %d apps ahead in %s\n", len(names), time.Since(start).Round(time.Millisecond))
	return nil
}
