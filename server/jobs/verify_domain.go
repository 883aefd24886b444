package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/domains"
	"marquee/store"
)

// VerifyDomainArgs: a creator added a custom domain. Its TXT record is
// checked until it appears (the job fails and river retries it, sooner at
// first: DNS changes usually show within minutes), or the domain is
// removed or replaced, or river gives up (25 attempts, about a day and a
// half); the studio's Check now asks again at any time.
type VerifyDomainArgs struct {
	AppID  string `json:"appId"`
	Domain string `json:"domain"`
}

func (VerifyDomainArgs) Kind() string { return "verify_domain" }

type VerifyDomainWorker struct {
	river.WorkerDefaults[VerifyDomainArgs]
	Store   *store.Storage
	Checker domains.Checker
	Logger  *slog.Logger
	// Verified is told of a domain that now serves its app (the server's
	// routing table, when it runs in the same process); nil tells nobody.
	Verified func()
}

func (w *VerifyDomainWorker) Timeout(*river.Job[VerifyDomainArgs]) time.Duration { return time.Minute }

// NextRetry: 30 s, 1, 2, 4 ... minutes, then every hour.
func (w *VerifyDomainWorker) NextRetry(job *river.Job[VerifyDomainArgs]) time.Time {
	wait := 30 * time.Second << min(job.Attempt-1, 7)
	return time.Now().Add(min(wait, time.Hour))
}

func (w *VerifyDomainWorker) Work(ctx context.Context, job *river.Job[VerifyDomainArgs]) error {
	d, err := w.Store.DomainOfApp(ctx, job.Args.AppID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && d.Domain != job.Args.Domain) {
		return nil // removed or replaced: nothing left to check
	}
	if err != nil {
		return err
	}
	if d.Verified() {
		return nil
	}
	checkErr := w.Checker.Check(ctx, d.Domain, d.Token)
	if _, err := w.Store.RecordDomainCheck(ctx, d.AppID, "", d.Domain, checkErr); err != nil {
		return err
	}
	if checkErr != nil {
		return fmt.Errorf("verify %s: %w", d.Domain, checkErr) // retried
	}
	if w.Logger != nil {
		w.Logger.Info("domain verified", "domain", d.Domain, "app", d.AppID)
	}
	if w.Verified != nil {
		w.Verified()
	}
	return nil
}
