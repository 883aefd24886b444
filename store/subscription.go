package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

type SubscriptionPlan struct {
	bun.BaseModel `bun:"table:subscription_plans"`

	ID          string `bun:",pk" json:"id"`
	AppID       string `bun:",notnull" json:"-"`
	StoreItemID string `bun:",notnull,unique" json:"storeItemId"`
	// BillingCycle is the tier's default cycle: the one whose price is the
	// store item's price (empty on a draft that never had one).
	BillingCycle string `bun:",notnull" json:"billingCycle" tstype:"'' | 'MONTHLY' | 'YEARLY'"`
	// Rank orders an app's tiers: 1 is the first above following.
	Rank int `bun:"tier_rank,notnull,default:0" json:"rank"`
	// State is DRAFT, ON_SALE or ARCHIVED (tiers.go); only ON_SALE sells.
	State        string `bun:",notnull,default:'ON_SALE'" json:"state" tstype:"'DRAFT' | 'ON_SALE' | 'ARCHIVED'"`
	MonthlyPrice *int64 `json:"monthlyPrice"`
	YearlyPrice  *int64 `json:"yearlyPrice"`
	TrialDays    int    `bun:",notnull,default:0" json:"trialDays"`
	// TrialCardRequired: the trial starts only with a card to charge at
	// its end (the creator's choice); otherwise the wallet, or nothing,
	// will do (trials.go).
	TrialCardRequired bool `bun:",notnull,default:false" json:"trialCardRequired"`
}

// Subscription is a member's paid membership of one app (one row per member
// and app; migration 20261123120001). Status is ACTIVE, PAST_DUE (a renewal
// failed; access lasts until GraceUntil), CANCELED (ended at a period end the
// member chose) or EXPIRED (grace ran out, refunded, or the provider ended it).
type Subscription struct {
	bun.BaseModel `bun:"table:subscriptions"`

	ID                string     `bun:",pk" json:"id"`
	AppID             string     `bun:",notnull" json:"appId"`
	UserID            string     `bun:",notnull" json:"userId"`
	PlanID            string     `bun:",notnull" json:"planId"`
	Status            string     `bun:",notnull" json:"status"`
	CurrentPeriodEnd  time.Time  `bun:",notnull" json:"currentPeriodEnd"`
	CreatedAt         time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	Amount            int64      `bun:",notnull,default:0" json:"amount"`
	Currency          string     `bun:",notnull,default:'USD'" json:"currency"`
	Provider          string     `bun:",notnull,default:''" json:"provider"`
	ProviderRef       string     `bun:",notnull,default:''" json:"-"`
	OrderID           *string    `json:"orderId"`
	CancelAtPeriodEnd bool       `bun:",notnull,default:false" json:"cancelAtPeriodEnd"`
	GraceUntil        *time.Time `json:"graceUntil"`
	EndedAt           *time.Time `json:"endedAt"`
	Renewals          int64      `bun:",notnull,default:0" json:"renewals"`
	// Cycle is the billing cycle the member chose (empty: the plan's).
	Cycle string `bun:",notnull,default:''" json:"cycle"`
	// TrialUntil is set while the membership is a free trial (its period
	// is the trial); TrialReminded: the mail three days before its end
	// went out (trials.go).
	TrialUntil    *time.Time `json:"trialUntil"`
	TrialReminded bool       `bun:",notnull,default:false" json:"-"`
	// OfferID is the code the membership was bought with; ListAmount the
	// price without it; DiscountLeft how many renewals it still discounts
	// (-1: every one). See offers.go.
	OfferID      *string `json:"offerId"`
	ListAmount   int64   `bun:",notnull,default:0" json:"-"`
	DiscountLeft int64   `bun:",notnull,default:0" json:"-"`
	// NextPlanID and NextAmount: a downgrade waiting for the period end
	// (tier_change.go); the next renewal moves the membership to them.
	NextPlanID *string `json:"-"`
	NextAmount *int64  `json:"-"`
}

// Subscription statuses (see the Subscription model).
const (
	SubActive   = "ACTIVE"
	SubPastDue  = "PAST_DUE"
	SubCanceled = "CANCELED"
	SubExpired  = "EXPIRED"

	CycleMonthly = "MONTHLY"
	CycleYearly  = "YEARLY"

	// DefaultGracePeriod is how long a member keeps access after a failed
	// renewal: long enough to top up a wallet or change a card.
	DefaultGracePeriod = 7 * 24 * time.Hour
	// DefaultRenewLead: wallet memberships renew this long before their
	// period ends, so a member never meets the gate between the end of a
	// period and the job's next run.
	DefaultRenewLead = time.Hour
)

// addCycle moves t on by one billing period.
func addCycle(t time.Time, cycle string) time.Time {
	if cycle == CycleYearly {
		return t.AddDate(1, 0, 0)
	}
	return t.AddDate(0, 1, 0)
}

// validSubscription is the one definition of "this membership gives access
// now": active within its period; past due within its grace period; or
// renewed by a card provider whose invoice for the next period is late
// (Stripe's invoice.paid can arrive hours after the period ends), within
// the grace after the period end. A membership cancelled at period end
// gets no such grace: nothing is coming.
func validSubscription(q *bun.SelectQuery, now time.Time, grace time.Duration) *bun.SelectQuery {
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("(status = ? AND current_period_end > ?)", SubActive, now).
			WhereOr("(status = ? AND grace_until > ?)", SubPastDue, now).
			WhereOr("(status = ? AND provider <> ? AND provider_ref <> '' AND cancel_at_period_end = ? AND current_period_end > ?)",
				SubActive, WalletMethod, false, now.Add(-grace))
	})
}

// HasValidSubscription reports whether the user's membership of the app gives
// access at now (see validSubscription).
func (s *Storage) HasValidSubscription(ctx context.Context, appID, userID string, now time.Time) (bool, error) {
	n, err := validSubscription(s.db.NewSelect().Model((*Subscription)(nil)).
		Where("app_id = ? AND user_id = ?", appID, userID), now, s.GracePeriod()).Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check subscription: %w", err)
	}
	return n > 0, nil
}

// SubscriptionOf returns the member's subscription row in the app, or nil.
func (s *Storage) SubscriptionOf(ctx context.Context, appID, userID string) (*Subscription, error) {
	sub := new(Subscription)
	err := selectOne(ctx, s.db.NewSelect().Model(sub).Where("app_id = ? AND user_id = ?", appID, userID), "subscription")
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return sub, err
}

// lockSubscriptions makes SQLite writers queue up front (it has no row
// locks): the read-then-update below must not interleave.
func lockSubscriptions(ctx context.Context, tx bun.Tx) error {
	if tx.Dialect().Name() == dialect.SQLite {
		if _, err := tx.ExecContext(ctx, "UPDATE subscriptions SET status = status WHERE 0"); err != nil {
			return fmt.Errorf("lock subscriptions: %w", err)
		}
	}
	return nil
}

func subscriptionForUpdate(ctx context.Context, tx bun.Tx, where string, args ...any) (*Subscription, error) {
	sub := new(Subscription)
	q := tx.NewSelect().Model(sub).Where(where, args...)
	if tx.Dialect().Name() == dialect.PG {
		q = q.For("UPDATE")
	}
	err := selectOne(ctx, q, "subscription")
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return sub, err
}

// grantSubscriber makes the user SUBSCRIBER in the app, never lowering a
// higher role (a moderator who buys a plan stays a moderator).
func grantSubscriber(ctx context.Context, tx bun.IDB, appID, userID string) error {
	m := &Membership{ID: NewID(), AppID: appID, UserID: userID, Role: RoleSubscriber, CreatedAt: time.Now().UTC()}
	if _, err := tx.NewInsert().Model(m).On("CONFLICT (app_id, user_id) DO UPDATE").
		Set("role = EXCLUDED.role").Where("membership.role = ?", RoleFollower).Exec(ctx); err != nil {
		return fmt.Errorf("grant subscriber: %w", err)
	}
	return recordRole(ctx, tx, appID, userID)
}

// dropSubscriber ends the SUBSCRIBER role (back to FOLLOWER, so the member
// still follows the app); any other role is left alone.
func dropSubscriber(ctx context.Context, tx bun.IDB, appID, userID string) error {
	if _, err := tx.NewUpdate().Model((*Membership)(nil)).Set("role = ?", RoleFollower).
		Where("app_id = ? AND user_id = ? AND role = ?", appID, userID, RoleSubscriber).Exec(ctx); err != nil {
		return fmt.Errorf("drop subscriber: %w", err)
	}
	return recordRole(ctx, tx, appID, userID)
}

// planOfItem answers the subscription plan of a SUBSCRIPTION store item.
func planOfItem(ctx context.Context, db bun.IDB, itemID string) (*SubscriptionPlan, error) {
	plan := new(SubscriptionPlan)
	if err := selectOne(ctx, db.NewSelect().Model(plan).Where("store_item_id = ?", itemID), "subscription plan"); err != nil {
		return nil, err
	}
	return plan, nil
}

// StartSubscription records a paid period of plan for the user: a new
// membership starts now; buying while still valid extends from the current
// period end, so no paid day is lost. It runs in the payer's transaction
// (the SUBSCRIPTION order hook, a provider's webhook).
func StartSubscription(ctx context.Context, tx bun.Tx, appID, userID string, plan *SubscriptionPlan, amount int64, currency, provider, providerRef string, orderID *string, now time.Time) (*Subscription, error) {
	return StartSubscriptionCycle(ctx, tx, appID, userID, plan, "", amount, currency, provider, providerRef, orderID, now)
}

// StartSubscriptionCycle is StartSubscription for the billing cycle the
// member chose (empty: the tier's default cycle).
func StartSubscriptionCycle(ctx context.Context, tx bun.Tx, appID, userID string, plan *SubscriptionPlan, cycle string, amount int64, currency, provider, providerRef string, orderID *string, now time.Time) (*Subscription, error) {
	if cycle == "" {
		cycle = plan.BillingCycle
	}
	if err := lockSubscriptions(ctx, tx); err != nil {
		return nil, err
	}
	cur, err := subscriptionForUpdate(ctx, tx, "app_id = ? AND user_id = ?", appID, userID)
	if err != nil {
		return nil, err
	}
	start, event := now, MembershipStarted
	if cur != nil && cur.Status == SubActive && cur.CurrentPeriodEnd.After(now) {
		start, event = cur.CurrentPeriodEnd, MembershipRenewed
	}
	sub := &Subscription{ID: NewID(), AppID: appID, UserID: userID, PlanID: plan.ID, Status: SubActive,
		CurrentPeriodEnd: addCycle(start, cycle), CreatedAt: now, Amount: amount, Currency: currency,
		Provider: provider, ProviderRef: providerRef, OrderID: orderID, Cycle: cycle}
	if err := saveSubscription(ctx, tx, cur, sub); err != nil {
		return nil, err
	}
	if cur != nil && cur.TrialUntil != nil {
		// Paying during a free trial converts it (the paid period
		// follows the trial's end when the membership still runs).
		if err := markTrial(ctx, tx, appID, userID, true, now); err != nil {
			return nil, err
		}
	}
	if err := grantSubscriber(ctx, tx, appID, userID); err != nil {
		return nil, err
	}
	// Another period bought while the membership still ran is a renewal;
	// anything else (a first one, or one that had ended) starts it.
	if err := membershipMessages(ctx, tx, membershipNote{Event: event, Sub: sub}); err != nil {
		return nil, err
	}
	return sub, nil
}

// saveSubscription writes sub as the member's one membership of the app:
// a new row, or over cur (the row read for update), keeping its id,
// creation and renewal count.
func saveSubscription(ctx context.Context, tx bun.Tx, cur, sub *Subscription) error {
	memberChanged(ctx, sub.AppID, sub.UserID)
	if cur == nil {
		if _, err := tx.NewInsert().Model(sub).Exec(ctx); err != nil {
			return fmt.Errorf("start subscription: %w", err)
		}
		return nil
	}
	sub.ID, sub.CreatedAt, sub.Renewals = cur.ID, cur.CreatedAt, cur.Renewals
	if _, err := tx.NewUpdate().Model(sub).WherePK().
		Column("plan_id", "status", "current_period_end", "amount", "currency", "provider", "provider_ref",
			"order_id", "cancel_at_period_end", "grace_until", "ended_at", "cycle",
			"trial_until", "trial_reminded", "offer_id", "list_amount", "discount_left", "next_plan_id", "next_amount").Exec(ctx); err != nil {
		return fmt.Errorf("restart subscription: %w", err)
	}
	return nil
}

// grantMembership is the SUBSCRIPTION paid effect: a paid plan makes the
// buyer SUBSCRIBER until the end of the period it bought.
func grantMembership(ctx context.Context, tx bun.Tx, o *Order, it *OrderItem) error {
	plan, err := planOfItem(ctx, tx, it.StoreItemID)
	if err != nil {
		return fmt.Errorf("plan of %s: %w", it.StoreItemID, err)
	}
	now := time.Now().UTC()
	sub, err := StartSubscriptionCycle(ctx, tx, o.AppID, o.UserID, plan, lineCycle(it), it.Price, o.Currency, o.PaymentMethod, "", &o.ID, now)
	if err != nil {
		return err
	}
	return applyLineOffer(ctx, tx, o, it, sub, now)
}

// lineCycle is the billing cycle a membership order line bought (recorded
// in its options by CreatePlanOrder; empty: the tier's default).
func lineCycle(it *OrderItem) string {
	var opts struct {
		Cycle string `json:"cycle"`
	}
	_ = json.Unmarshal([]byte(it.CustomOptions), &opts)
	if opts.Cycle == CycleMonthly || opts.Cycle == CycleYearly {
		return opts.Cycle
	}
	return ""
}

// revokeMembership is the refund effect: the membership this order bought ends
// now.
func revokeMembership(ctx context.Context, tx bun.Tx, o *Order, it *OrderItem) error {
	memberChanged(ctx, o.AppID, o.UserID)
	now := time.Now().UTC()
	res, err := tx.NewUpdate().Model((*Subscription)(nil)).Set("status = ?", SubExpired).Set("ended_at = ?", now).
		Where("app_id = ? AND user_id = ? AND order_id = ? AND status IN (?)", o.AppID, o.UserID, o.ID, bun.List([]string{SubActive, SubPastDue})).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("end refunded membership: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return dropSubscriber(ctx, tx, o.AppID, o.UserID)
	}
	return nil
}

// ErrNoSubscription: the member has no membership that can be changed.
var ErrNoSubscription = errors.New("no active subscription")

// SetCancelAtPeriodEnd records the member's choice to stop (or, with
// cancel false, keep) renewing. Access lasts until the period ends either
// way; the renewal job ends the membership then.
func (s *Storage) SetCancelAtPeriodEnd(ctx context.Context, appID, userID string, cancel bool) (*Subscription, error) {
	res, err := s.db.NewUpdate().Model((*Subscription)(nil)).Set("cancel_at_period_end = ?", cancel).
		Where("app_id = ? AND user_id = ? AND status IN (?)", appID, userID, bun.List([]string{SubActive, SubPastDue})).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("cancel subscription: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, ErrNoSubscription
	}
	s.NoteMembership(ctx, appID, userID)
	return s.SubscriptionOf(ctx, appID, userID)
}

// RenewOptions tune RenewDueSubscriptions; zero values take the defaults.
type RenewOptions struct {
	Now   time.Time
	Lead  time.Duration
	Grace time.Duration
}

// RenewResult counts what one run did.
type RenewResult struct {
	Renewed, Failed, Ended int
	// Reminded counts trials whose members were told it ends in 3 days.
	Reminded int
}

type dueSubscription struct {
	Subscription
	BillingCycle string `bun:"billing_cycle"`
}

// RenewDueSubscriptions is the renewal job's work: wallet memberships whose
// period ends within the lead time are charged for the next period; a
// charge the wallet cannot cover moves the membership into its grace period
// with a notice (and is retried on later runs); memberships whose grace ran
// out, that were cancelled at period end, or that nothing renews (granted by
// hand, or a provider that stopped reporting) end, and the member is a
// FOLLOWER again. Every change is a conditional update on the state it read
// and every charge has a reference naming the period, so two servers
// running it at once charge a member once.
func (s *Storage) RenewDueSubscriptions(ctx context.Context, opt RenewOptions) (RenewResult, error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now().UTC()
	}
	if opt.Lead <= 0 {
		opt.Lead = DefaultRenewLead
	}
	if opt.Grace <= 0 {
		opt.Grace = s.GracePeriod()
	}
	var res RenewResult
	var err error
	if res.Reminded, err = s.remindTrials(ctx, opt.Now); err != nil {
		return res, err
	}
	var due []dueSubscription
	// A card membership waiting for its late invoice is not due until its
	// grace is over: leaving it out keeps it from crowding the batch.
	cardLate := "(s.provider <> ? AND s.provider_ref <> '' AND s.cancel_at_period_end = ? AND s.current_period_end > ?)"
	if err := s.db.NewSelect().TableExpr("subscriptions AS s").ColumnExpr("s.*").ColumnExpr("COALESCE(NULLIF(s.cycle, ''), p.billing_cycle) AS billing_cycle").
		Join("JOIN subscription_plans AS p ON p.id = s.plan_id").
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("(s.status = ? AND s.current_period_end <= ? AND NOT "+cardLate+")", SubActive, opt.Now.Add(opt.Lead),
				WalletMethod, false, opt.Now.Add(-opt.Grace)).
				WhereOr("s.status = ?", SubPastDue)
		}).
		OrderExpr("s.current_period_end ASC").Limit(500).Scan(ctx, &due); err != nil {
		return res, fmt.Errorf("find due subscriptions: %w", err)
	}
	for i := range due {
		d := &due[i]
		var err error
		cardRenewed := d.Provider != WalletMethod && d.ProviderRef != ""
		switch {
		case d.Status == SubPastDue && d.GraceUntil != nil && !d.GraceUntil.After(opt.Now):
			text := "Your membership has ended: the renewal payment did not go through."
			if d.CancelAtPeriodEnd {
				text = ""
			}
			err = s.endSubscription(ctx, d, SubExpired, opt.Now, text)
			res.Ended += boolInt(err == nil)
		case d.Status == SubPastDue && d.Provider != WalletMethod:
			// A card provider retries on its own schedule and reports
			// with invoice.paid; only the grace running out ends it.
		case d.CancelAtPeriodEnd:
			// The member chose to stop: access ends with the paid period
			// (one already in its grace keeps the grace).
			if d.Status == SubActive && !d.CurrentPeriodEnd.After(opt.Now) {
				err = s.endSubscription(ctx, d, SubCanceled, opt.Now, "")
				res.Ended += boolInt(err == nil)
			}
		case d.Status == SubActive && cardRenewed:
			// A card provider renews it and its invoice.paid has not come:
			// access lasted through the grace after the period end
			// (validSubscription); now it is over.
			if !d.CurrentPeriodEnd.Add(opt.Grace).After(opt.Now) {
				err = s.endSubscription(ctx, d, SubExpired, opt.Now,
					"Your membership has ended: the card renewal did not arrive. Subscribe again to keep access.")
				res.Ended += boolInt(err == nil)
			}
		case d.Provider != WalletMethod || d.Amount <= 0:
			// Nothing renews it (granted by hand, or a card membership
			// whose provider subscription was never made): it ends with
			// its paid time.
			if d.Status == SubActive && !d.CurrentPeriodEnd.After(opt.Now) {
				err = s.endSubscription(ctx, d, SubExpired, opt.Now, "")
				res.Ended += boolInt(err == nil)
			}
		default:
			var r renewal
			r, err = s.renewFromWallet(ctx, d, opt)
			res.Renewed += boolInt(err == nil && r == renewalDone)
			res.Failed += boolInt(err == nil && r == renewalFailed)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// renewalCharge is what the next wallet payment of sub takes and how many
// discounted renewals are left after it: the end of a trial pays the first
// period as quoted when it started (with its code); otherwise a code still
// running discounts this payment (one fewer left, -1 stays for ever) and
// one run out pays the price without it.
func renewalCharge(sub *Subscription) (int64, int64) {
	if sub.TrialUntil != nil || sub.ListAmount <= 0 {
		return sub.Amount, sub.DiscountLeft
	}
	switch {
	case sub.DiscountLeft < 0:
		return sub.Amount, -1
	case sub.DiscountLeft > 0:
		return sub.Amount, sub.DiscountLeft - 1
	}
	return sub.ListAmount, 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// renewal is what one wallet renewal attempt did.
type renewal int

const (
	renewalSkipped renewal = iota // another run did it, or nothing was due
	renewalDone
	renewalFailed
)

// errRenewalRace rolls back a renewal another run made first.
var errRenewalRace = errors.New("subscription renewed by another run")

func renewalRef(subID string, periodEnd time.Time) string {
	return "subscription:" + subID + ":period:" + strconv.FormatInt(periodEnd.Unix(), 10)
}

// renewFromWallet charges the next period and extends the membership in one
// transaction; renewed false means the wallet could not pay and the
// membership is (or stays) in its grace period.
func (s *Storage) renewFromWallet(ctx context.Context, d *dueSubscription, opt RenewOptions) (renewal, error) {
	charged := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		charged = false
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		cur, err := subscriptionForUpdate(ctx, tx, "id = ?", d.ID)
		if err != nil || cur == nil || cur.Status != d.Status || !cur.CurrentPeriodEnd.Equal(d.CurrentPeriodEnd) {
			return err // another run got here first
		}
		charge, left := renewalCharge(&d.Subscription)
		memo := "Membership renewal"
		if d.TrialUntil != nil {
			memo = "Membership after the free trial"
		}
		// A downgrade waiting for this renewal takes effect with it, at the
		// lower tier's price (an offer's discount was for the tier left).
		plan, listAmount := cur.PlanID, cur.ListAmount
		if cur.NextPlanID != nil && cur.NextAmount != nil {
			plan, charge, left, listAmount = *cur.NextPlanID, *cur.NextAmount, 0, 0
		}
		t, replayed, err := TransferTx(ctx, tx, TransferInput{AppID: d.AppID, Reference: renewalRef(d.ID, d.CurrentPeriodEnd),
			Kind: TransferPayment, From: Member(d.UserID), To: AppRevenue, Amount: charge, Memo: memo})
		if err != nil || replayed {
			return err
		}
		res, err := tx.NewUpdate().Model((*Subscription)(nil)).
			Set("status = ?", SubActive).Set("current_period_end = ?", addCycle(d.CurrentPeriodEnd, d.BillingCycle)).
			Set("grace_until = NULL").Set("renewals = renewals + 1").Set("provider_ref = ?", t.ID).
			Set("amount = ?", charge).Set("discount_left = ?", left).Set("trial_until = NULL").
			Set("plan_id = ?", plan).Set("list_amount = ?", listAmount).Set("next_plan_id = NULL").Set("next_amount = NULL").
			Where("id = ? AND current_period_end = ?", d.ID, d.CurrentPeriodEnd).Exec(ctx)
		if err != nil {
			return fmt.Errorf("extend subscription: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errRenewalRace
		}
		charged = true
		if err := s.bookEarningTx(ctx, tx, Earning{AppID: d.AppID, Ref: renewalRef(d.ID, d.CurrentPeriodEnd), Amount: charge,
			InLedger: true, Memo: memo}); err != nil {
			return err
		}
		if d.TrialUntil != nil {
			if err := markTrial(ctx, tx, d.AppID, d.UserID, true, opt.Now); err != nil {
				return err
			}
		}
		if err := grantSubscriber(ctx, tx, d.AppID, d.UserID); err != nil {
			return err
		}
		cur.Status, cur.CurrentPeriodEnd, cur.GraceUntil, cur.ProviderRef = SubActive, addCycle(d.CurrentPeriodEnd, d.BillingCycle), nil, t.ID
		cur.Amount, cur.DiscountLeft, cur.TrialUntil = charge, left, nil
		cur.PlanID, cur.ListAmount, cur.NextPlanID, cur.NextAmount = plan, listAmount, nil, nil
		cur.Renewals++
		return membershipMessages(ctx, tx, membershipNote{Event: MembershipRenewed, Sub: cur})
	})
	if errors.Is(err, errRenewalRace) {
		return renewalSkipped, nil // rolled back: the other run's renewal stands
	}
	if err == nil && charged {
		return renewalDone, nil
	}
	if err == nil {
		return renewalSkipped, nil
	}
	if !errors.Is(err, ErrInsufficientFunds) {
		return renewalSkipped, fmt.Errorf("renew subscription %s: %w", d.ID, err)
	}
	if d.Status == SubPastDue {
		return renewalFailed, nil // already in grace; the notice was sent once
	}
	if d.TrialUntil != nil {
		// A trial nobody paid for ends with it: no grace, the member
		// follows the app again. Before its end the wallet may still be
		// topped up (the next run tries again).
		if d.CurrentPeriodEnd.After(opt.Now) {
			return renewalSkipped, nil
		}
		return renewalFailed, s.endSubscription(ctx, d, SubExpired, opt.Now,
			"Your free trial has ended and your wallet could not pay for the membership.")
	}
	err = s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		grace := d.CurrentPeriodEnd.Add(opt.Grace)
		res, err := tx.NewUpdate().Model((*Subscription)(nil)).Set("status = ?", SubPastDue).Set("grace_until = ?", grace).
			Where("id = ? AND status = ? AND current_period_end = ?", d.ID, SubActive, d.CurrentPeriodEnd).Exec(ctx)
		if err != nil {
			return fmt.Errorf("start grace period: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		sub := d.Subscription
		sub.Status, sub.GraceUntil = SubPastDue, &grace
		return membershipMessages(ctx, tx, membershipNote{Event: MembershipFailed, Sub: &sub})
	})
	return renewalFailed, err
}

// endSubscription ends a membership that was in state d (conditional on
// it), drops the SUBSCRIBER role and, with a text, tells the member.
func (s *Storage) endSubscription(ctx context.Context, d *dueSubscription, status string, now time.Time, text string) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Subscription)(nil)).Set("status = ?", status).Set("ended_at = ?", now).
			Where("id = ? AND status = ? AND current_period_end = ?", d.ID, d.Status, d.CurrentPeriodEnd).Exec(ctx)
		if err != nil {
			return fmt.Errorf("end subscription: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if err := dropSubscriber(ctx, tx, d.AppID, d.UserID); err != nil {
			return err
		}
		if d.TrialUntil != nil {
			if err := markTrial(ctx, tx, d.AppID, d.UserID, false, now); err != nil {
				return err
			}
		}
		sub := d.Subscription
		sub.Status, sub.EndedAt = status, &now
		return membershipMessages(ctx, tx, membershipNote{Event: MembershipEnded, Sub: &sub, Reason: text})
	})
}

// ApplyProviderRenewal is what a card provider's webhook reports about the
// subscription it renews (by its reference): paid extends to periodEnd,
// failed starts the grace period, ended ends the membership. A stale or
// repeated report changes nothing: a paid period never moves the end
// backwards, and each state change is conditional on the state before it.
func (s *Storage) ApplyProviderRenewal(ctx context.Context, providerRef, event string, periodEnd time.Time, grace time.Duration) (*Subscription, error) {
	if grace <= 0 {
		grace = s.GracePeriod()
	}
	var out *Subscription
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, _, err = applyProviderRenewalTx(ctx, tx, providerRef, event, periodEnd, grace)
		return err
	})
	return out, err
}

// Outcomes of a provider's renewal report (payment_events.outcome).
const (
	OutcomeRenewed = "RENEWED"
	OutcomePastDue = "PAST_DUE"
	OutcomeEnded   = "ENDED"
	// OutcomeCanceled: the provider stopped renewing (the member
	// cancelled in their PayPal account); access lasts the paid period.
	OutcomeCanceled = "CANCELED"
)

// ApplyProviderRenewalEvent records the provider's event ev and, only the
// first time its id is seen, applies it to the membership providerRef in
// the same transaction: a repeated delivery changes nothing, and a failed
// apply records nothing, so the provider's retry tries again. An unknown
// providerRef is recorded as IGNORED (another integration's subscription).
func (s *Storage) ApplyProviderRenewalEvent(ctx context.Context, ev *PaymentEvent, providerRef, event string, periodEnd time.Time, grace time.Duration) (*Subscription, bool, error) {
	if grace <= 0 {
		grace = s.GracePeriod()
	}
	if ev.ID == "" {
		ev.ID = NewID()
	}
	var out *Subscription
	fresh := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		var err error
		if fresh, err = recordPaymentEvent(ctx, tx, ev, false); err != nil || !fresh {
			return err
		}
		var changed bool
		out, changed, err = applyProviderRenewalTx(ctx, tx, providerRef, event, periodEnd, grace)
		switch {
		case errors.Is(err, ErrNotFound):
			ev.Outcome = OutcomeIgnored
		case err != nil:
			return err
		case !changed:
			ev.Outcome = OutcomeAlready
		case event == "paid":
			ev.Outcome = OutcomeRenewed
			// The invoice's amount, as the provider reports it.
			if err := s.bookEarningTx(ctx, tx, Earning{AppID: out.AppID, Ref: "renewal:" + providerRef + ":" + periodEnd.UTC().Format("20060102T150405"),
				Amount: ev.Amount, Currency: ev.Currency, Memo: "Membership renewal"}); err != nil {
				return err
			}
			if ev.Provider == "paypal" && ev.Amount > 0 && ev.Amount != out.Amount {
				// PayPal bills each cycle as the plan says (an offer's
				// discounted cycles, then the list price); the sale says
				// what this one took, which is what the member now pays.
				out.Amount = ev.Amount
				if _, err := tx.NewUpdate().Model(out).WherePK().Column("amount").Exec(ctx); err != nil {
					return fmt.Errorf("record renewal amount: %w", err)
				}
			}
		case event == "failed" && out.Status == SubPastDue:
			ev.Outcome = OutcomePastDue
		case event == "canceled":
			ev.Outcome = OutcomeCanceled
		default:
			ev.Outcome = OutcomeEnded
		}
		q := tx.NewUpdate().Model((*PaymentEvent)(nil)).Set("outcome = ?", ev.Outcome).Where("id = ?", ev.ID)
		if out != nil {
			q = q.Set("app_id = ?", out.AppID)
		}
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("record renewal outcome: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, fresh, nil
}

// applyProviderRenewalTx is ApplyProviderRenewal inside tx; changed says
// whether the report moved the membership (false for a stale or repeated
// one).
func applyProviderRenewalTx(ctx context.Context, tx bun.Tx, providerRef, event string, periodEnd time.Time, grace time.Duration) (*Subscription, bool, error) {
	if err := lockSubscriptions(ctx, tx); err != nil {
		return nil, false, err
	}
	cur, err := subscriptionForUpdate(ctx, tx, "provider_ref = ?", providerRef)
	if err != nil {
		return nil, false, err
	}
	if cur == nil {
		return nil, false, ErrNotFound
	}
	now := time.Now().UTC()
	q := tx.NewUpdate().Model(cur).WherePK()
	switch event {
	case "paid":
		// A membership the renewal job ended after its grace comes back
		// when the card is charged after all (Stripe retries for weeks):
		// the member paid for the period, so they get it. One the member
		// cancelled stays cancelled.
		if cur.Status == SubCanceled || !periodEnd.After(cur.CurrentPeriodEnd) {
			return cur, false, nil
		}
		wasTrial := cur.TrialUntil != nil
		cur.Status, cur.CurrentPeriodEnd, cur.GraceUntil, cur.EndedAt = SubActive, periodEnd, nil, nil
		cur.Renewals++
		// The period just paid is at what the provider charged: an offer
		// code's discount steps on as on the wallet (one run out renews at
		// the list price, so MRR counts the full price from then on).
		cur.Amount, cur.DiscountLeft = renewalCharge(cur)
		cur.TrialUntil = nil
		// A downgrade waiting for the period end takes effect with the
		// renewal (the provider already bills the lower price).
		if cur.NextPlanID != nil && cur.NextAmount != nil {
			cur.PlanID, cur.Amount, cur.ListAmount, cur.DiscountLeft = *cur.NextPlanID, *cur.NextAmount, 0, 0
		}
		cur.NextPlanID, cur.NextAmount = nil, nil
		if _, err := q.Column("status", "current_period_end", "grace_until", "ended_at", "renewals", "plan_id", "amount",
			"next_plan_id", "next_amount", "list_amount", "discount_left", "trial_until").Exec(ctx); err != nil {
			return nil, false, fmt.Errorf("extend subscription: %w", err)
		}
		if wasTrial {
			if err := markTrial(ctx, tx, cur.AppID, cur.UserID, true, now); err != nil {
				return nil, false, err
			}
		}
		if err := grantSubscriber(ctx, tx, cur.AppID, cur.UserID); err != nil {
			return nil, false, err
		}
		return cur, true, membershipMessages(ctx, tx, membershipNote{Event: MembershipRenewed, Sub: cur})
	case "failed":
		if cur.Status != SubActive {
			return cur, false, nil
		}
		if cur.TrialUntil != nil {
			// A card trial whose first charge failed ends at once: no
			// grace, nothing was ever paid; the member follows again.
			return endProviderTrial(ctx, tx, cur, now)
		}
		g := cur.CurrentPeriodEnd.Add(grace)
		cur.Status, cur.GraceUntil = SubPastDue, &g
		if _, err := q.Column("status", "grace_until").Exec(ctx); err != nil {
			return nil, false, fmt.Errorf("start grace period: %w", err)
		}
		return cur, true, membershipMessages(ctx, tx, membershipNote{Event: MembershipFailed, Sub: cur, Card: true})
	case "canceled":
		// Nothing renews it any more: it ends with its paid period (or
		// its grace), as a member's own cancel does.
		if (cur.Status != SubActive && cur.Status != SubPastDue) || cur.CancelAtPeriodEnd {
			return cur, false, nil
		}
		cur.CancelAtPeriodEnd = true
		if _, err := q.Column("cancel_at_period_end").Exec(ctx); err != nil {
			return nil, false, fmt.Errorf("cancel subscription: %w", err)
		}
		return cur, true, nil
	case "ended":
		if cur.Status == SubCanceled || cur.Status == SubExpired {
			return cur, false, nil
		}
		if cur.TrialUntil != nil {
			return endProviderTrial(ctx, tx, cur, now)
		}
		cur.Status, cur.EndedAt = SubExpired, &now
		if _, err := q.Column("status", "ended_at").Exec(ctx); err != nil {
			return nil, false, fmt.Errorf("end subscription: %w", err)
		}
		if err := dropSubscriber(ctx, tx, cur.AppID, cur.UserID); err != nil {
			return nil, false, err
		}
		return cur, true, membershipMessages(ctx, tx, membershipNote{Event: MembershipEnded, Sub: cur})
	}
	return nil, false, fmt.Errorf("unknown renewal event %q", event)
}

// endProviderTrial ends a card trial the provider could not charge (or
// that was deleted before its first invoice): the membership expires, the
// member follows the app again and the trial is marked ended unpaid.
func endProviderTrial(ctx context.Context, tx bun.Tx, cur *Subscription, now time.Time) (*Subscription, bool, error) {
	cur.Status, cur.EndedAt = SubExpired, &now
	if _, err := tx.NewUpdate().Model(cur).WherePK().Column("status", "ended_at").Exec(ctx); err != nil {
		return nil, false, fmt.Errorf("end trial: %w", err)
	}
	if err := dropSubscriber(ctx, tx, cur.AppID, cur.UserID); err != nil {
		return nil, false, err
	}
	if err := markTrial(ctx, tx, cur.AppID, cur.UserID, false, now); err != nil {
		return nil, false, err
	}
	return cur, true, membershipMessages(ctx, tx, membershipNote{Event: MembershipEnded, Sub: cur,
		Reason: "Your free trial has ended and your card could not be charged for the membership."})
}

// SubscriptionPlanView is the plan of the member's subscription as
// subscription.status shows it.
type SubscriptionPlanView struct {
	ID           string `json:"id"`
	StoreItemID  string `json:"storeItemId"`
	Name         string `json:"name"`
	BillingCycle string `json:"billingCycle" tstype:"'MONTHLY' | 'YEARLY'"`
	Price        int64  `json:"price"`
	Currency     string `json:"currency"`
}

// planView loads the plan and its item for the status view.
func (s *Storage) planView(ctx context.Context, planID string) (*SubscriptionPlanView, error) {
	var row struct {
		ID           string `bun:"id"`
		StoreItemID  string `bun:"store_item_id"`
		BillingCycle string `bun:"billing_cycle"`
		Name         string `bun:"name"`
		Price        int64  `bun:"price"`
		Currency     string `bun:"currency"`
	}
	err := s.db.NewSelect().TableExpr("subscription_plans AS p").Join("JOIN store_items AS i ON i.id = p.store_item_id").
		ColumnExpr("p.id, p.store_item_id, p.billing_cycle, i.name, i.price, i.currency").
		Where("p.id = ?", planID).Limit(1).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load plan: %w", err)
	}
	return &SubscriptionPlanView{ID: row.ID, StoreItemID: row.StoreItemID, Name: row.Name, BillingCycle: row.BillingCycle,
		Price: row.Price, Currency: row.Currency}, nil
}

// CreatePlanOrder makes a PENDING order for one period of a plan, outside
// the member's cart: subscribing from the gated screen must not check out
// whatever else sits in the cart. An unpaid order for the same plan is
// reused, so a second click pays one order, not two.
func (s *Storage) CreatePlanOrder(ctx context.Context, appID, userID, itemID, method string) (*Order, error) {
	return s.CreateTierOrder(ctx, appID, userID, itemID, "", method)
}

// CreateTierOrder is CreatePlanOrder for a chosen billing cycle (empty: the
// tier's default). Only a tier on sale is found; its price for the cycle
// is the order's.
func (s *Storage) CreateTierOrder(ctx context.Context, appID, userID, itemID, cycle, method string) (*Order, error) {
	return s.CreateTierOrderWithOffer(ctx, appID, userID, itemID, cycle, method, "")
}

// CreateTierOrderWithOffer is CreateTierOrder with an offer code (empty:
// none): the order is for the first payment with the code, and the line
// remembers the code, so the payment redeems it (applyLineOffer). A code
// that does not apply is refused with its reason (ErrOfferUnknown, ...).
func (s *Storage) CreateTierOrderWithOffer(ctx context.Context, appID, userID, itemID, cycle, method, code string) (*Order, error) {
	var order *Order
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		tier, err := tierOnSale(ctx, tx, appID, itemID)
		if err != nil {
			return err
		}
		it := new(StoreItem)
		if err := selectOne(ctx, tx.NewSelect().Model(it).Where("id = ?", tier.ItemID), "plan"); err != nil {
			return err
		}
		cycle, price, err := tier.price(cycle)
		if err != nil {
			return err
		}
		it.Price = price
		line := orderLineOffer{Cycle: cycle}
		if strings.TrimSpace(code) != "" {
			q, err := quoteOffer(ctx, tx, appID, userID, tier.ID, cycle, price, code, time.Now().UTC())
			if err != nil {
				return err
			}
			it.Price, line.Offer, line.List, line.DiscountLeft = q.Price, q.Offer.ID, price, q.DiscountLeft
		}
		opts, _ := json.Marshal(line)
		existing := new(Order)
		err = selectOne(ctx, tx.NewSelect().Model(existing).
			Where("app_id = ? AND user_id = ? AND status = ? AND cart_id IS NULL", appID, userID, OrderPending).
			Where("EXISTS (SELECT 1 FROM order_items AS oi WHERE oi.order_id = ?TableAlias.id AND oi.store_item_id = ? AND oi.custom_options = ?)", it.ID, string(opts)).
			Where("total = ?", it.Price).OrderExpr("created_at DESC"), "order")
		if err == nil {
			order = existing
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		now := time.Now().UTC()
		currency := it.Currency
		if currency == "" {
			currency = WalletCurrency
		}
		order = &Order{ID: NewID(), AppID: appID, StoreID: it.StoreID, UserID: userID, OrderNumber: newOrderNumber(now),
			Status: OrderPending, Subtotal: it.Price, Total: it.Price, Currency: currency, PaymentMethod: method,
			Notes: "Membership: " + it.Name, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.NewInsert().Model(order).Exec(ctx); err != nil {
			return fmt.Errorf("create plan order: %w", err)
		}
		item := &OrderItem{ID: NewID(), AppID: appID, OrderID: order.ID, StoreItemID: it.ID, Name: it.Name,
			Type: ItemSubscription, Quantity: 1, Price: it.Price, Currency: currency, CustomOptions: string(opts)}
		if _, err := tx.NewInsert().Model(item).Exec(ctx); err != nil {
			return fmt.Errorf("create plan order line: %w", err)
		}
		return nil
	})
	return order, err
}

// PlanOf answers the plan (with its item's name and price) of a
// membership, nil when it is gone.
func (s *Storage) PlanOf(ctx context.Context, planID string) (*SubscriptionPlanView, error) {
	return s.planView(ctx, planID)
}

// SetProviderRef records the provider's subscription that renews the
// membership bought by orderID. Only the first ref sticks: a second
// report (the webhook racing the browser's confirm) changes nothing.
func (s *Storage) SetProviderRef(ctx context.Context, subID, orderID, ref string) (bool, error) {
	res, err := s.db.NewUpdate().Model((*Subscription)(nil)).Set("provider_ref = ?", ref).
		Where("id = ? AND order_id = ? AND provider_ref = ''", subID, orderID).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("set subscription provider ref: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// OrderBuysMembership reports whether the order holds a SUBSCRIPTION line:
// a card paying for it is saved so the membership can renew.
func (s *Storage) OrderBuysMembership(ctx context.Context, orderID string) (bool, error) {
	n, err := s.db.NewSelect().Model((*OrderItem)(nil)).Where("order_id = ? AND type = ?", orderID, ItemSubscription).Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check membership lines: %w", err)
	}
	return n > 0, nil
}

// CartBuysMembership reports whether the cart holds a SUBSCRIPTION item.
func (s *Storage) CartBuysMembership(ctx context.Context, cartID string) (bool, error) {
	n, err := s.db.NewSelect().TableExpr("cart_items AS ci").Join("JOIN store_items AS i ON i.id = ci.store_item_id").
		Where("ci.cart_id = ? AND i.type = ?", cartID, ItemSubscription).Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check membership in cart: %w", err)
	}
	return n > 0, nil
}
