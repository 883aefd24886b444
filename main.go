// Command marquee runs the Marquee creator platform.
//
//	marquee serve       serve the main site (PORT) and the auth site (AUTH_PORT)
//	marquee migrate     apply database migrations
//	marquee seed-demo   create the demo apps (idempotent)
//	marquee bench-data  fill one app with content at scale, for benchmarks
//	marquee app ...     manage apps and members from the command line
//	marquee user ...    create, reset, disable, delete accounts; sessions revoke signs one out everywhere
//	marquee jobs ...    list failed background jobs and push deliveries, retry a job
//	marquee wallet ...  credit a member's wallet, show its balance
//	marquee media resize  make the resized copies of older uploaded images
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/redis/go-redis/v9"

	"marquee/assemble"
	"marquee/server"
)

// redisLogger routes go-redis's prints into the process's logger.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}

// version and commit are stamped at build time by the Makefile
// (-ldflags "-X main.version=... -X main.commit=...", from git); without
// them the commit comes from the build's VCS stamp when there is one.
var version, commit = "dev", ""

func versionLine() string {
	commit, dirty, goVersion := commit, "", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+modified"
				}
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("marquee %s commit %s%s %s", version, commit, dirty, goVersion)
}

func main() {
	out, err := server.NewLogOutput(os.Stderr, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "marquee:", err)
		os.Exit(1)
	}
	logger, err := server.NewLogger(out, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "marquee:", err)
		os.Exit(1)
	}
	// go-redis prints its own complaints (a failed dial) through ours.
	redis.SetLogger(redisLogger{logger})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, os.Args[1:], logger)
	stop()
	_ = out.Close() // the access lines gathered last
	if err != nil {
		fmt.Fprintln(os.Stderr, "marquee:", err)
		os.Exit(1)
	}
}

const usage = `usage: marquee <command>

commands:
  version                                print the version, commit and Go version
  serve                                  serve the main and auth sites
  migrate                                apply database migrations
  seed-demo                              create the demo apps (safe to repeat)
  backup FILE                            write a consistent copy of the database (online: SQLite VACUUM INTO, pg_dump)
  restore FILE                           replace the database with a backup (stop the instances first)
  bench-data [--app bench] [--posts 100000] [--items 10000] [--events 1000] [--users 500] [--apps N]
                                         fill a new app with content at scale, for benchmarks
  app create NAME --creator EMAIL [--published]
                                         create an app (unpublished, for its staff only, unless --published)
  app publish NAME | app unpublish NAME  open an app to everyone, or back to its staff only
  app set NAME KEY=VALUE...              change app settings (e.g. features.store.enabled=false)
  app list                               list every app: name, id, status, creator, members
  app suspend NAME | app unsuspend NAME  take an app offline (every page and call answers 404) or back
  app delete NAME --yes                  delete an app and everything in it, for good
  app domain add NAME DOMAIN [--verified]
                                         give an app a custom domain (verified: serve it at once,
                                         else once its DNS TXT record is found)
  app domain list                        list custom domains: app, state, TXT record to create
  app domain remove NAME [DOMAIN]        take an app's custom domain away (back to /apps/NAME)
  user create EMAIL USERNAME [--password-stdin]
                                         create a verified account (the password is generated and printed,
                                         or read from one line of stdin)
  user reset-password EMAIL|USERNAME [--password-stdin]
                                         set a new password and end every session of the account
  user disable EMAIL|USERNAME | user enable EMAIL|USERNAME
                                         refuse (or allow again) sign-in; disabling ends every session at once
  user delete EMAIL|USERNAME             delete the account's personal data (orders stay, anonymised)
  sessions revoke EMAIL|USERNAME         sign the user out everywhere, on every instance at once
  jobs failed [--limit 50]               list failed background jobs and failed push deliveries
  jobs retry JOB                         run a failed job again now
  member set-role NAME EMAIL ROLE        give a user a role in an app
  wallet credit NAME EMAIL AMOUNT [--ref REF]  add dollars (e.g. 25.00) to a member's wallet in an app
  wallet balance NAME EMAIL              show a member's wallet balance in an app
  payouts fee NAME PERCENT|default       set an app's platform fee (e.g. 2.5), or back to PLATFORM_FEE_PERCENT
  media resize                           make the resized copies of images uploaded before they existed`

func run(ctx context.Context, args []string, logger *slog.Logger) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage)
	}
	switch args[0] {
	case "version", "--version":
		fmt.Println(versionLine())
		return nil
	case "serve":
		return serve(ctx, logger)
	case "migrate":
		a, err := assemble.FromEnv(ctx, logger)
		if err != nil {
			return err
		}
		defer a.Close()
		logger.Info("migrations applied")
		return nil
	case "seed-demo":
		return seedDemo(ctx, logger)
	case "backup":
		return backup(ctx, args[1:], logger)
	case "restore":
		return restore(ctx, args[1:], logger)
	case "media":
		if len(args) != 2 || args[1] != "resize" {
			return fmt.Errorf("usage: marquee media resize")
		}
		return resizeMedia(ctx, logger)
	case "bench-data":
		return benchData(ctx, args[1:], logger)
	case "app", "member", "wallet":
		return manage(ctx, args, logger)
	case "user", "sessions", "jobs":
		return operate(ctx, args, os.Stdin, os.Stdout, logger)
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
}
