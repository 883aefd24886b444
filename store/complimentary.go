package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Complimentary memberships (issue 40 item 5): the creator gives a member a
// tier for some months or for good, from the studio, with no payment. It is
// a membership like any other (the member reads what the tier opens, the
// role history and analytics count it) whose provider is CompProvider and
// whose amount is 0: nothing renews it, and the renewal job ends it with
// its time (RenewDueSubscriptions' "granted by hand" case).

// CompProvider is the provider of a complimentary membership.
const CompProvider = "COMP"

// MaxCompMonths bounds a time-limited gift; 0 months is for good.
const MaxCompMonths = 120

// ErrPaidMember: the member pays for a membership of the app; they change
// or cancel it themselves, a gift does not replace what they pay for.
var ErrPaidMember = errors.New("member pays for a membership")

// Comp is one gift: who gives what to whom, for how long (0: for good).
type Comp struct {
	AppID, ActorID, UserID, PlanID string
	Months                         int
}

// forGood is the end of a membership given for good: far enough that no
// renewal job ever reaches it.
func forGood(now time.Time) time.Time { return now.AddDate(100, 0, 0) }

// GiveComplimentary gives the member the tier, in one transaction with its
// audit line and the member's notice and mail. Giving again replaces the
// earlier gift (another tier or length); a member who pays is refused
// (ErrPaidMember), as is one who does not follow the app (ErrNotFound) or
// a tier that is a draft or another app's (ErrInvalid).
func (s *Storage) GiveComplimentary(ctx context.Context, g Comp, now time.Time) (*Subscription, error) {
	if g.Months < 0 || g.Months > MaxCompMonths {
		return nil, &ErrInvalid{Msg: fmt.Sprintf("Give between 1 and %d months, or 0 for good", MaxCompMonths), Field: "months"}
	}
	now = now.UTC()
	var sub *Subscription
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		plan := new(SubscriptionPlan)
		if err := selectOne(ctx, tx.NewSelect().Model(plan).Where("subscription_plan.id = ? AND subscription_plan.app_id = ?", g.PlanID, g.AppID).
			Where("EXISTS (SELECT 1 FROM store_items AS i WHERE i.id = subscription_plan.store_item_id AND i.deleted_at IS NULL)"), "tier"); err != nil {
			if errors.Is(err, ErrNotFound) {
				return &ErrInvalid{Msg: "Choose one of the app's tiers", Field: "tierId"}
			}
			return err
		}
		if plan.State == TierDraft {
			return &ErrInvalid{Msg: "A draft tier cannot be given: put it on sale first", Field: "tierId"}
		}
		n, err := tx.NewSelect().Model((*Membership)(nil)).Where("app_id = ? AND user_id = ?", g.AppID, g.UserID).Count(ctx)
		if err != nil {
			return fmt.Errorf("load member: %w", err)
		}
		if n == 0 {
			return ErrNotFound
		}
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		cur, err := subscriptionForUpdate(ctx, tx, "app_id = ? AND user_id = ?", g.AppID, g.UserID)
		if err != nil {
			return err
		}
		if cur != nil && cur.Provider != CompProvider && cur.TrialUntil == nil && (cur.Status == SubActive && cur.CurrentPeriodEnd.After(now) || cur.Status == SubPastDue) {
			return ErrPaidMember
		}
		if cur != nil && cur.TrialUntil != nil {
			// A gift replaces a free trial (nothing was paid): the trial ends.
			if err := markTrial(ctx, tx, g.AppID, g.UserID, false, now); err != nil {
				return err
			}
		}
		end := forGood(now)
		if g.Months > 0 {
			end = now.AddDate(0, g.Months, 0)
		}
		sub = &Subscription{ID: NewID(), AppID: g.AppID, UserID: g.UserID, PlanID: plan.ID, Status: SubActive,
			CurrentPeriodEnd: end, CreatedAt: now, Currency: "USD", Provider: CompProvider, Cycle: CycleMonthly}
		if err := saveSubscription(ctx, tx, cur, sub); err != nil {
			return fmt.Errorf("give membership: %w", err)
		}
		if err := grantSubscriber(ctx, tx, g.AppID, g.UserID); err != nil {
			return err
		}
		detail := fmt.Sprintf("tier %s for %d months", plan.ID, g.Months)
		if g.Months == 0 {
			detail = "tier " + plan.ID + " for good"
		}
		if err := writeAudit(ctx, tx, g.AppID, g.ActorID, "membership.give", g.UserID, detail); err != nil {
			return err
		}
		return membershipMessages(ctx, tx, membershipNote{Event: MembershipGiven, Sub: sub})
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// A member's pages are rendered for their role and tier (the page cache's
// member class), so neither a gift nor its end has shared pages to renew.

// EndComplimentary ends a member's gift now (they follow the app again);
// a membership they pay for is not a gift and is left alone (ErrNotFound).
func (s *Storage) EndComplimentary(ctx context.Context, appID, actorID, userID string, now time.Time) error {
	now = now.UTC()
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Subscription)(nil)).Set("status = ?", SubCanceled).Set("ended_at = ?", now).
			Set("current_period_end = ?", now).
			Where("app_id = ? AND user_id = ? AND provider = ? AND status = ?", appID, userID, CompProvider, SubActive).Exec(ctx)
		if err != nil {
			return fmt.Errorf("end gift: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if err := dropSubscriber(ctx, tx, appID, userID); err != nil {
			return err
		}
		return writeAudit(ctx, tx, appID, actorID, "membership.end_gift", userID, "")
	})
	return err
}

// GiftableTiers lists the tiers a creator may give (every tier but drafts
// and deleted ones), in rank order.
func (s *Storage) GiftableTiers(ctx context.Context, appID string) ([]Tier, error) {
	var rows []tierRow
	if err := tierQuery(s.db).Where("p.app_id = ? AND p.state <> ? AND i.deleted_at IS NULL", appID, TierDraft).
		OrderExpr("p.tier_rank ASC, p.id ASC").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load giftable tiers: %w", err)
	}
	out := make([]Tier, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.tier())
	}
	return out, nil
}
