package jobs

import (
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/domains"
	"marquee/server/mail"
	"marquee/server/media"
	"marquee/server/push"
	"marquee/store"
)

// Deps are what the product's jobs need.
type Deps struct {
	Store  *store.Storage
	Files  media.Storage
	Logger *slog.Logger
	// Push sends web push: the assembly's one sender, which the server
	// shares. Nil builds one on Store (tests of a worker alone).
	Push *push.Sender
	// OrderExpiry is how long an unpaid order holds its stock
	// (ORDER_EXPIRY; 0 means store.DefaultOrderExpiry).
	OrderExpiry time.Duration
	// PublishInterval is how often due scheduled posts are looked for
	// (PUBLISH_INTERVAL; 0 means PublishScheduledInterval).
	PublishInterval time.Duration
	// CardRenewals makes the Stripe subscription of a membership bought by
	// card; nil when cards are not configured (nothing enqueues the job).
	CardRenewals CardRenewals
	// StrayRefunds gives back payments their orders could not take; nil
	// when no card or PayPal method is configured (nothing enqueues it).
	StrayRefunds StrayRefunds
	// Mail sends the product's e-mails (SMTP or .eml files); nil sends
	// none (the jobs wait in the queue).
	Mail *mail.Sender
	// Domains checks custom domains' TXT records (DNS_RESOLVER, DNS_TIMEOUT).
	Domains domains.Checker
	// DomainVerified is told when a job verified a domain; nil tells nobody.
	DomainVerified func()
	// Pages renders an app's visitor pages after a write (the server); nil
	// leaves them to their first visitor (nothing enqueues the job unless
	// RENDER_AHEAD is on).
	Pages PageRenderer
	// Retention is what the hourly prune keeps (NOTIFICATION_RETENTION);
	// zero is DefaultNotificationRetention.
	Retention store.Retention
}

// Product lists every worker and every repeating job of Marquee, in one
// place, as routes.go lists every route.
func Product(d Deps) Work {
	workers := river.NewWorkers()
	var periodic []*river.PeriodicJob
	every := func(interval time.Duration, args river.JobArgs) {
		periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(interval),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{RunOnStart: true}))
	}

	sender := d.Push
	if sender == nil {
		sender = &push.Sender{Store: d.Store, Logger: d.Logger}
	}
	river.AddWorker(workers, &FanOutWorker{Store: d.Store})
	river.AddWorker(workers, &PushWorker{Store: d.Store, Sender: sender})

	if local, ok := d.Files.(*media.Local); ok {
		river.AddWorker(workers, &SweepUploadsWorker{Files: local, Logger: d.Logger})
		every(time.Hour, SweepUploadsArgs{})
	}
	if d.Files != nil {
		river.AddWorker(workers, &DeleteFilesWorker{Files: d.Files})
	}
	river.AddWorker(workers, &AdoptProfilePictureWorker{Store: d.Store, Files: d.Files, Logger: d.Logger})
	river.AddWorker(workers, &MediaVariantsWorker{Store: d.Store, Files: d.Files, Logger: d.Logger})
	river.AddWorker(workers, &FetchLinkIconWorker{Store: d.Store, Logger: d.Logger})
	if d.Store != nil {
		river.AddWorker(workers, &RenewMembershipsWorker{Store: d.Store, Logger: d.Logger})
		river.AddWorker(workers, &VerifyDomainWorker{Store: d.Store, Checker: d.Domains, Logger: d.Logger, Verified: d.DomainVerified})
		every(RenewMembershipsInterval, RenewMembershipsArgs{})
	}
	if d.Mail != nil && d.Store != nil {
		river.AddWorker(workers, &SendMailWorker{Store: d.Store, Sender: d.Mail})
		river.AddWorker(workers, &NewsletterStartWorker{Store: d.Store})
		river.AddWorker(workers, &NewsletterSendWorker{Store: d.Store, Sender: d.Mail, Logger: d.Logger})
		river.AddWorker(workers, &NewsletterTestWorker{Store: d.Store, Sender: d.Mail})
		river.AddWorker(workers, &DigestWorker{Store: d.Store})
		every(DigestInterval, DigestArgs{})
	}
	if d.Store != nil {
		river.AddWorker(workers, &ExportAccountWorker{Store: d.Store})
		river.AddWorker(workers, &PasswordResetWorker{Store: d.Store})
		river.AddWorker(workers, &ExportAppWorker{Store: d.Store})
	}
	if d.Pages != nil {
		river.AddWorker(workers, &RenderPagesWorker{Pages: d.Pages})
	}
	if d.CardRenewals != nil {
		river.AddWorker(workers, &StartCardRenewalWorker{Renewals: d.CardRenewals})
	}
	if d.StrayRefunds != nil {
		river.AddWorker(workers, &RefundStrayPaymentWorker{Refunds: d.StrayRefunds})
		river.AddWorker(workers, &CancelPaymentWorker{Refunds: d.StrayRefunds})
	}
	if d.Store != nil {
		river.AddWorker(workers, &PublishScheduledWorker{Store: d.Store, Logger: d.Logger})
		interval := d.PublishInterval
		if interval <= 0 {
			interval = PublishScheduledInterval
		}
		every(interval, PublishScheduledArgs{})
	}
	if d.Store != nil {
		river.AddWorker(workers, &PruneWorker{Store: d.Store, Retention: d.Retention, Logger: d.Logger})
		every(PruneInterval, PruneArgs{})
	}
	// Unpaid orders give their stock back once their hold is over; checked
	// every minute, so an order is cancelled at most a minute late.
	river.AddWorker(workers, &ExpireOrdersWorker{Orders: d.Store, After: d.OrderExpiry, Logger: d.Logger})
	every(time.Minute, ExpireOrdersArgs{})
	return Work{Workers: workers, Periodic: periodic}
}
