package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"marquee/assemble"
	"marquee/server/auth"
	"marquee/store"
)

// operate runs the operator's commands on users, sessions and jobs (the
// app ones are in manage.go): out gets what they report, stdin a password
// given with --password-stdin.
func operate(ctx context.Context, args []string, stdin io.Reader, out io.Writer, logger *slog.Logger) error {
	a, err := assemble.FromEnv(ctx, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	s := a.Storage
	switch {
	case len(args) >= 4 && args[0] == "user" && args[1] == "create":
		if strings.Contains(args[3], "@") || strings.TrimSpace(args[3]) == "" || !strings.Contains(args[2], "@") {
			return fmt.Errorf("usage: marquee user create EMAIL USERNAME [--password-stdin]")
		}
		pw, generated, err := passwordArg(args[4:], stdin)
		if err != nil {
			return err
		}
		hash, err := auth.HashPassword(pw)
		if err != nil {
			return err
		}
		u, err := s.CreateUser(ctx, args[2], args[3], hash)
		if err != nil {
			return fmt.Errorf("create user %s: %w", args[2], err)
		}
		// The operator vouches for the address.
		if _, err := s.DB().NewUpdate().Model((*store.User)(nil)).Set("email_verified = true").Where("id = ?", u.ID).Exec(ctx); err != nil {
			return fmt.Errorf("verify %s: %w", u.Email, err)
		}
		fmt.Fprintf(out, "created user %s (%s, id %s)\n", u.Username, u.Email, u.ID)
		if generated {
			fmt.Fprintf(out, "password: %s\n", pw)
		}
		return nil
	case len(args) >= 3 && args[0] == "user" && args[1] == "reset-password":
		u, err := userArg(ctx, s, args[2])
		if err != nil {
			return err
		}
		pw, generated, err := passwordArg(args[3:], stdin)
		if err != nil {
			return err
		}
		hash, err := auth.HashPassword(pw)
		if err != nil {
			return err
		}
		// Every session of the account ends: whoever knew the old password
		// is signed out.
		if err := s.ChangePassword(ctx, u.ID, hash, ""); err != nil {
			return err
		}
		fmt.Fprintf(out, "new password set for %s; every session of it ended\n", u.Email)
		if generated {
			fmt.Fprintf(out, "password: %s\n", pw)
		}
		return nil
	case len(args) == 3 && args[0] == "user" && (args[1] == "disable" || args[1] == "enable"):
		u, err := userArg(ctx, s, args[2])
		if err != nil {
			return err
		}
		n, err := s.SetUserDisabled(ctx, u.ID, args[1] == "disable")
		if err != nil {
			return err
		}
		if args[1] == "enable" {
			fmt.Fprintf(out, "%s can sign in again\n", u.Email)
			return nil
		}
		fmt.Fprintf(out, "%s is disabled; %d session(s) ended\n", u.Email, n)
		return nil
	case len(args) == 3 && args[0] == "user" && args[1] == "delete":
		u, err := userArg(ctx, s, args[2])
		if err != nil {
			return err
		}
		if err := s.DeleteAccount(ctx, u.ID); err != nil {
			if errors.Is(err, store.ErrOwnsApp) {
				return fmt.Errorf("%s owns an app: delete the app or give it another creator first", u.Email)
			}
			return err
		}
		fmt.Fprintf(out, "deleted %s: personal data removed, orders and payments kept anonymised\n", u.Email)
		return nil
	case len(args) == 3 && args[0] == "sessions" && args[1] == "revoke":
		u, err := userArg(ctx, s, args[2])
		if err != nil {
			return err
		}
		n, err := s.EndOtherSessions(ctx, u.ID, "")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s is signed out everywhere: %d session(s) ended\n", u.Email, n)
		return nil
	case len(args) >= 2 && args[0] == "jobs" && args[1] == "failed":
		limit := 50
		if len(args) == 4 && args[2] == "--limit" {
			if limit, err = strconv.Atoi(args[3]); err != nil || limit < 1 {
				return fmt.Errorf("--limit: want a positive number, got %q", args[3])
			}
		} else if len(args) != 2 {
			return fmt.Errorf("usage: marquee jobs failed [--limit N]")
		}
		return failedJobs(ctx, a, limit, out)
	case len(args) == 3 && args[0] == "jobs" && args[1] == "retry":
		id, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return fmt.Errorf("job id: want a number (see `marquee jobs failed`), got %q", args[2])
		}
		q, err := a.Admin(ctx)
		if err != nil {
			return err
		}
		defer q.Stop(context.WithoutCancel(ctx)) //nolint:errcheck
		row, err := q.Retry(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "job %d (%s) is %s\n", row.ID, row.Kind, row.State)
		return nil
	}
	return fmt.Errorf("%s", usage)
}

// userArg finds a user by e-mail or username.
func userArg(ctx context.Context, s *store.Storage, login string) (*store.User, error) {
	u := new(store.User)
	q := s.DB().NewSelect().Model(u).Where("deleted_at IS NULL")
	if strings.Contains(login, "@") {
		q = q.Where("email = ?", store.NormalizeEmail(login))
	} else {
		q = q.Where("lower(username) = lower(?)", login)
	}
	if err := q.Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("no user %s", login)
	}
	return u, nil
}

// passwordArg reads the password from stdin (--password-stdin, one line)
// or generates one, which the command prints.
func passwordArg(rest []string, stdin io.Reader) (pw string, generated bool, err error) {
	switch {
	case len(rest) == 0:
		var b [15]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", false, err
		}
		return base64.RawURLEncoding.EncodeToString(b[:]), true, nil
	case len(rest) == 1 && rest[0] == "--password-stdin":
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", false, fmt.Errorf("read password: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
		if err := auth.ValidatePassword(pw); err != nil {
			return "", false, fmt.Errorf("password: %w", err)
		}
		return pw, false, nil
	}
	return "", false, fmt.Errorf("unexpected %q: the password is generated, or read with --password-stdin", strings.Join(rest, " "))
}

func failedJobs(ctx context.Context, a *assemble.App, limit int, out io.Writer) error {
	q, err := a.Admin(ctx)
	if err != nil {
		return err
	}
	defer q.Stop(context.WithoutCancel(ctx)) //nolint:errcheck
	rows, err := q.Failed(ctx, limit)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "JOB\tKIND\tSTATE\tATTEMPT\tWHEN\tLAST ERROR\n")
	for _, j := range rows {
		last, when := "", j.CreatedAt
		if n := len(j.Errors); n > 0 {
			last, when = oneLine(j.Errors[n-1].Error), j.Errors[n-1].At
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID, j.Kind, j.State, j.Attempt, j.MaxAttempts, when.UTC().Format(time.RFC3339), last)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d failed job(s); retry one with `marquee jobs retry JOB`\n", len(rows))
	pushes, err := a.Storage.RecentPushFailures(ctx, limit)
	if err != nil {
		return err
	}
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "\nPUSH FAILED\tAPP\tUSER\tPUSH SERVICE\tSTATUS\tERROR\n")
	for _, p := range pushes {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", p.CreatedAt.UTC().Format(time.RFC3339), p.AppID, p.UserID, p.EndpointHost, p.Status, oneLine(p.Error))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d failed push deliver(ies) shown (kept for NOTIFICATION_RETENTION)\n", len(pushes))
	return nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
