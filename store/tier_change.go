package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Moving between tiers (issue 40 item 4). An upgrade takes effect at once
// and costs the difference between the two prices for what is left of the
// paid period (prorated to the second, rounded up to the cent); a
// downgrade takes effect at the period end: the membership keeps its tier
// until then and the next renewal charges the lower price. Choosing one's
// own tier again calls a waiting downgrade off. The billing cycle stays the
// member's.

// Tier change directions.
const (
	TierUpgrade   = "UPGRADE"
	TierDowngrade = "DOWNGRADE"
	// TierKeep: the member's own tier, which calls off a waiting downgrade.
	TierKeep = "KEEP"
)

// TierChange is what moving to a tier would do (a quote) or did.
type TierChange struct {
	Direction string `json:"direction" tstype:"'UPGRADE' | 'DOWNGRADE' | 'KEEP'"`
	From      Tier   `json:"from"`
	To        Tier   `json:"to"`
	Cycle     string `json:"cycle" tstype:"'MONTHLY' | 'YEARLY'"`
	// Charge is what an upgrade costs now (0 for the others), Price what
	// each period costs after the change, both in Currency's cents.
	Charge   int64  `json:"charge"`
	Price    int64  `json:"price"`
	Currency string `json:"currency"`
	// EffectiveAt: now for an upgrade, the period end for a downgrade.
	EffectiveAt time.Time `json:"effectiveAt"`
	// RenewedBy says who charges: the wallet (WalletMethod), or the card provider that
	// renews the membership (the upgrade's charge goes there too).
	RenewedBy string `json:"renewedBy"`
	// ProviderRef is the provider's subscription for card renewals.
	ProviderRef    string    `json:"-"`
	SubscriptionID string    `json:"-"`
	PeriodEnd      time.Time `json:"periodEnd"`
	// Offer is the code an upgrade takes (nil: none): its ListPrice is the
	// upgrade's charge without it, its Price the charge with it (Charge),
	// Discount the difference. The code discounts as a Stripe coupon does
	// from the upgrade on: ONCE the upgrade's charge only, REPEATING the
	// charges made within its months (the upgrade's and the renewals
	// before they end), FOREVER every one.
	Offer *OfferQuote `json:"offer"`
	// NextCharge is what the next renewal charges (Price, or less while
	// the code runs).
	NextCharge int64 `json:"nextCharge"`
}

// upgradeDiscountLeft is how many renewals after an upgrade made now the
// offer discounts: as a Stripe coupon applied now does (invoices made
// within its months; the first renewal is at periodEnd).
func upgradeDiscountLeft(o *Offer, cycle string, periodEnd, now time.Time) int64 {
	switch o.Duration {
	case OfferForever:
		return -1
	case OfferRepeating:
		until := now.AddDate(0, int(o.DurationMonths), 0)
		n := int64(0)
		for at := periodEnd; at.Before(until) && n < 1000; at = addCycle(at, cycle) {
			n++
		}
		return n
	}
	return 0
}

// ErrTierChange: a membership that cannot move between tiers as asked; the
// message says why and what to do instead.
type ErrTierChange struct{ Msg string }

func (e *ErrTierChange) Error() string { return e.Msg }

// prorate is the difference of two period prices for the time left of a
// period ending at end, rounded up to the cent.
func prorate(from, to int64, cycle string, end, now time.Time) int64 {
	if to <= from || !end.After(now) {
		return 0
	}
	start := end.AddDate(0, -1, 0)
	if cycle == CycleYearly {
		start = end.AddDate(-1, 0, 0)
	}
	length, left := end.Sub(start), end.Sub(now)
	if left > length {
		left = length
	}
	diff := to - from
	// In whole seconds, so the product stays far inside int64.
	num := diff * int64(left/time.Second)
	den := int64(length / time.Second)
	return (num + den - 1) / den
}

// quoteTierChange reads the member's membership (for update inside tx) and
// the tier of itemID, and answers what moving there would do. Only a
// membership that is paid, active and renewed by the wallet or a card can
// move; the messages say what to do otherwise.
func quoteTierChange(ctx context.Context, db bun.IDB, appID, userID, itemID, code string, now time.Time, forUpdate bool) (*TierChange, *Subscription, error) {
	var cur *Subscription
	var err error
	if tx, ok := db.(bun.Tx); ok && forUpdate {
		cur, err = subscriptionForUpdate(ctx, tx, "app_id = ? AND user_id = ?", appID, userID)
	} else {
		cur = new(Subscription)
		if err = db.NewSelect().Model(cur).Where("app_id = ? AND user_id = ?", appID, userID).Limit(1).Scan(ctx); errors.Is(err, sql.ErrNoRows) {
			cur, err = nil, nil
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load membership: %w", err)
	}
	if err := TierChangeRefusal(cur, now); err != nil {
		return nil, nil, err
	}
	renewedBy := WalletMethod
	if cur.Provider != WalletMethod {
		renewedBy = cur.Provider
	}
	var fromRows []tierRow
	if err := tierQuery(db).Where("p.app_id = ? AND p.id = ?", appID, cur.PlanID).Limit(1).Scan(ctx, &fromRows); err != nil {
		return nil, nil, fmt.Errorf("load tier: %w", err)
	}
	if len(fromRows) == 0 {
		return nil, nil, ErrNotFound
	}
	to, err := tierOnSale(ctx, db, appID, itemID)
	if err != nil {
		return nil, nil, err
	}
	cycle := cur.Cycle
	if cycle == "" {
		var billing string
		if err := db.NewSelect().Table("subscription_plans").Column("billing_cycle").Where("id = ?", cur.PlanID).Scan(ctx, &billing); err != nil {
			return nil, nil, fmt.Errorf("load plan cycle: %w", err)
		}
		cycle = billing
	}
	_, price, err := to.price(cycle)
	if err != nil {
		return nil, nil, err
	}
	if to.Currency != cur.Currency {
		return nil, nil, &ErrTierChange{Msg: "This tier is priced in another currency: cancel and join it instead"}
	}
	q := &TierChange{From: fromRows[0].tier(), To: to.tier(), Cycle: cycle, Price: price, Currency: cur.Currency,
		RenewedBy: renewedBy, ProviderRef: cur.ProviderRef, SubscriptionID: cur.ID, PeriodEnd: cur.CurrentPeriodEnd}
	switch {
	case to.ID == cur.PlanID:
		q.Direction, q.EffectiveAt, q.Price = TierKeep, now, cur.Amount
	case to.Rank > q.From.Rank || (to.Rank == q.From.Rank && price > cur.Amount):
		q.Direction, q.EffectiveAt = TierUpgrade, now
		q.Charge = prorate(cur.Amount, price, cycle, cur.CurrentPeriodEnd, now)
	default:
		q.Direction, q.EffectiveAt = TierDowngrade, cur.CurrentPeriodEnd
	}
	q.NextCharge = q.Price
	if strings.TrimSpace(code) != "" {
		switch q.Direction {
		case TierDowngrade:
			return nil, nil, &ErrTierChange{Msg: "An offer code applies to an upgrade: downgrade without it"}
		case TierUpgrade:
			oq, err := quoteOffer(ctx, db, appID, userID, to.ID, cycle, price, code, now)
			if err != nil {
				return nil, nil, err
			}
			full := q.Charge
			q.Charge = offerPrice(oq.Offer, full)
			left := upgradeDiscountLeft(oq.Offer, cycle, cur.CurrentPeriodEnd, now)
			q.Offer = &OfferQuote{Offer: oq.Offer, Code: oq.Code, ListPrice: full, Price: q.Charge, Discount: full - q.Charge,
				Description: oq.Description, DiscountLeft: left}
			if left != 0 {
				q.NextCharge = offerPrice(oq.Offer, price)
			}
		}
		// KEEP: the upgrade was made (a repeated request); the code was
		// taken with it.
	}
	return q, cur, nil
}

// QuoteTierChange answers what moving the member to the tier of itemID
// would do, changing nothing (the confirmation page).
func (s *Storage) QuoteTierChange(ctx context.Context, appID, userID, itemID, code string, now time.Time) (*TierChange, error) {
	q, _, err := quoteTierChange(ctx, s.db, appID, userID, itemID, code, now, false)
	return q, err
}

// TierChangeRefusal says why membership sub cannot move between tiers
// now, or nil when it can: only a membership that is paid, active, out of
// its trial, not ending, and renewed by the wallet or a provider can. The
// membership page shows the reason instead of buttons that would answer it.
func TierChangeRefusal(cur *Subscription, now time.Time) error {
	if cur == nil || cur.Status != SubActive || !cur.CurrentPeriodEnd.After(now) {
		if cur != nil && cur.Status == SubPastDue {
			return &ErrTierChange{Msg: "Your last renewal did not go through: settle it before changing tiers"}
		}
		return &ErrTierChange{Msg: "You have no active membership in this app: join a tier first"}
	}
	if cur.Provider == CompProvider || cur.Amount <= 0 {
		return &ErrTierChange{Msg: "Your membership is a gift: join a tier to pay for one of your own"}
	}
	if cur.Provider != WalletMethod && cur.ProviderRef == "" {
		return &ErrTierChange{Msg: "Your membership does not renew: join the tier you want when it ends"}
	}
	if cur.TrialUntil != nil {
		return &ErrTierChange{Msg: "You are on a free trial: change tiers once it has ended, or cancel and join the tier you want"}
	}
	if cur.CancelAtPeriodEnd {
		return &ErrTierChange{Msg: "Your membership ends at the end of this period: keep it first to change tiers"}
	}
	return nil
}

// upgradeRef names one upgrade's charge: the membership, the tier and the
// period, so a repeated request charges once.
func upgradeRef(subID, planID string, periodEnd time.Time) string {
	return "upgrade:" + subID + ":" + planID + ":" + strconv.FormatInt(periodEnd.Unix(), 10)
}

// ChangeTier moves a wallet-renewed membership to the tier of itemID: an
// upgrade charges the prorated difference from the wallet and switches at
// once, a downgrade waits for the period end, the own tier calls a waiting
// downgrade off. Everything happens in one transaction on the membership
// row it read, so any number of concurrent requests change it (and charge)
// once. Card-renewed memberships go through ApplyCardTierChange after the
// provider agreed.
func (s *Storage) ChangeTier(ctx context.Context, appID, userID, itemID, code string, now time.Time) (*TierChange, error) {
	var out *TierChange
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		q, cur, err := quoteTierChange(ctx, tx, appID, userID, itemID, code, now, true)
		if err != nil {
			return err
		}
		if q.RenewedBy != WalletMethod {
			return &ErrTierChange{Msg: "Your membership renews by card: change it there"}
		}
		out = q
		return applyTierChange(ctx, tx, s, q, cur, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReserveUpgradeOffer redeems a card upgrade's code before the provider is
// asked to move the subscription (exactly: the conditional increment and
// the unique redemption hold under any number of racing requests); a
// provider that refuses hands it back with ReleaseUpgradeOffer.
func (s *Storage) ReserveUpgradeOffer(ctx context.Context, q *TierChange, appID, userID string, now time.Time) error {
	if q.Offer == nil {
		return nil
	}
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		return redeemOffer(ctx, tx, q.Offer.Offer.ID, appID, userID, q.To.ID, q.RenewedBy, q.Offer.Discount, now, true)
	})
}

// ReleaseUpgradeOffer gives back a code reserved for an upgrade the
// provider refused.
func (s *Storage) ReleaseUpgradeOffer(ctx context.Context, q *TierChange, userID string) error {
	if q.Offer == nil {
		return nil
	}
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*OfferRedemption)(nil)).Where("offer_id = ? AND user_id = ?", q.Offer.Offer.ID, userID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("release offer: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			if _, err := tx.NewUpdate().Model((*Offer)(nil)).Set("redemptions = redemptions - 1").Where("id = ? AND redemptions > 0", q.Offer.Offer.ID).Exec(ctx); err != nil {
				return fmt.Errorf("release offer: %w", err)
			}
		}
		return nil
	})
}

// ApplyCardTierChange records a tier change the card provider has made on
// its subscription (the upgrade's difference is invoiced by the provider).
// It is conditional on the membership as quoted: a change that raced
// another answers ErrTierChange.
func (s *Storage) ApplyCardTierChange(ctx context.Context, q *TierChange, now time.Time) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		cur, err := subscriptionForUpdate(ctx, tx, "id = ?", q.SubscriptionID)
		if err != nil {
			return err
		}
		if cur == nil || cur.ProviderRef != q.ProviderRef || cur.PlanID != q.From.ID {
			if cur != nil && cur.ProviderRef == q.ProviderRef && q.Direction == TierUpgrade && cur.PlanID == q.To.ID && q.Offer != nil {
				// The provider's echo of this upgrade got here first: it
				// knows the tier's list price, not the code (reserved for
				// this request alone), so the quote's price stands.
				_, err := upgradePrice(tx.NewUpdate().Model((*Subscription)(nil)).Where("id = ? AND plan_id = ?", cur.ID, q.To.ID), q).Exec(ctx)
				if err != nil {
					return fmt.Errorf("record upgrade price: %w", err)
				}
				return nil
			}
			if cur != nil && (cur.PlanID == q.To.ID || (cur.NextPlanID != nil && *cur.NextPlanID == q.To.ID)) {
				return nil // the same change, made by a repeated request
			}
			return &ErrTierChange{Msg: "Your membership changed meanwhile: look again and retry"}
		}
		return applyTierChange(ctx, tx, s, q, cur, now)
	})
}

// applyTierChange writes a quoted change onto cur (read for update in tx).
// The wallet pays an upgrade's charge here; a card provider invoices it.
func applyTierChange(ctx context.Context, tx bun.Tx, s *Storage, q *TierChange, cur *Subscription, now time.Time) error {
	memberChanged(ctx, cur.AppID, cur.UserID)
	upd := tx.NewUpdate().Model((*Subscription)(nil)).Where("id = ? AND plan_id = ?", cur.ID, cur.PlanID)
	switch q.Direction {
	case TierKeep:
		if cur.NextPlanID == nil {
			return nil
		}
		upd = upd.Set("next_plan_id = NULL").Set("next_amount = NULL")
	case TierDowngrade:
		if cur.NextPlanID != nil && *cur.NextPlanID == q.To.ID {
			return nil
		}
		upd = upd.Set("next_plan_id = ?", q.To.ID).Set("next_amount = ?", q.Price)
	case TierUpgrade:
		if q.Charge > 0 && q.RenewedBy == WalletMethod {
			ref := upgradeRef(cur.ID, q.To.ID, cur.CurrentPeriodEnd)
			if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: cur.AppID, Reference: ref, Kind: TransferPayment,
				From: Member(cur.UserID), To: AppRevenue, Amount: q.Charge, Memo: "Membership upgrade to " + q.To.Name}); err != nil {
				return err
			}
			if err := s.bookEarningTx(ctx, tx, Earning{AppID: cur.AppID, Ref: ref, Amount: q.Charge, InLedger: true,
				Memo: "Membership upgrade"}); err != nil {
				return err
			}
		}
		// An offer's discount was for the tier left: the new tier is at
		// its list price from now on, less the upgrade's own code while it
		// runs (redeemed here for the wallet, in the same transaction; a
		// card's was reserved before the provider was asked).
		if o := q.Offer; o != nil && q.RenewedBy == WalletMethod {
			if err := redeemOffer(ctx, tx, o.Offer.ID, cur.AppID, cur.UserID, q.To.ID, WalletMethod, o.Discount, now, true); err != nil {
				return err
			}
		}
		upd = upgradePrice(upd.Set("plan_id = ?", q.To.ID), q)
	}
	res, err := upd.Exec(ctx)
	if err != nil {
		return fmt.Errorf("change tier: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return &ErrTierChange{Msg: "Your membership changed meanwhile: look again and retry"}
	}
	if q.Direction == TierKeep {
		return nil
	}
	if q.Direction == TierUpgrade {
		// The role history follows the paid tier (analytics by tier).
		if err := recordRole(ctx, tx, cur.AppID, cur.UserID); err != nil {
			return err
		}
	}
	sub := *cur
	sub.PlanID, sub.Amount = q.To.ID, q.NextCharge
	if q.Direction == TierDowngrade {
		sub.PlanID = cur.PlanID
	}
	return membershipMessages(ctx, tx, membershipNote{Event: MembershipChanged, Sub: &sub, Change: q, Now: now})
}

// upgradePrice sets what an upgraded membership pays from now: the new
// tier's list price, less the upgrade's own code while it runs.
func upgradePrice(upd *bun.UpdateQuery, q *TierChange) *bun.UpdateQuery {
	upd = upd.Set("amount = ?", q.NextCharge).Set("next_plan_id = NULL").Set("next_amount = NULL")
	if o := q.Offer; o != nil {
		return upd.Set("offer_id = ?", o.Offer.ID).Set("list_amount = ?", q.Price).Set("discount_left = ?", o.DiscountLeft)
	}
	return upd.Set("list_amount = 0").Set("discount_left = 0")
}

// NextTierOf answers the tier a waiting downgrade moves the member to at
// the period end, or nil.
func (s *Storage) NextTierOf(ctx context.Context, appID, userID string) (*Tier, error) {
	var next *string
	if err := s.db.NewSelect().Table("subscriptions").Column("next_plan_id").
		Where("app_id = ? AND user_id = ? AND status = ?", appID, userID, SubActive).Limit(1).Scan(ctx, &next); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load next tier: %w", err)
	}
	if next == nil {
		return nil, nil
	}
	t, err := s.TierByPlan(ctx, appID, *next)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return t, err
}

// Outcomes of a card provider's tier reports (payment_events.outcome).
const (
	OutcomeTierChanged = "TIER_CHANGED"
	OutcomeUpgradePaid = "UPGRADE_PAID"
)

// recordProviderEvent records ev once and runs apply in the same
// transaction on the membership providerRef (nil when unknown: the event
// is IGNORED). apply answers the outcome. A repeated delivery changes
// nothing and answers fresh false.
func (s *Storage) recordProviderEvent(ctx context.Context, ev *PaymentEvent, providerRef string,
	apply func(ctx context.Context, tx bun.Tx, cur *Subscription) (string, error)) (bool, error) {
	if ev.ID == "" {
		ev.ID = NewID()
	}
	fresh := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		var err error
		if fresh, err = recordPaymentEvent(ctx, tx, ev, false); err != nil || !fresh {
			return err
		}
		cur, err := subscriptionForUpdate(ctx, tx, "provider_ref = ?", providerRef)
		if err != nil {
			return err
		}
		ev.Outcome = OutcomeIgnored
		if cur != nil {
			if ev.Outcome, err = apply(ctx, tx, cur); err != nil {
				return err
			}
		}
		q := tx.NewUpdate().Model((*PaymentEvent)(nil)).Set("outcome = ?", ev.Outcome).Where("id = ?", ev.ID)
		if cur != nil {
			q = q.Set("app_id = ?", cur.AppID)
		}
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("record provider event outcome: %w", err)
		}
		return nil
	})
	return fresh, err
}

// ApplyProviderUpgradeInvoice books the invoice a card provider sent for an
// upgrade's prorated difference (ev.Amount), once per event and invoice.
func (s *Storage) ApplyProviderUpgradeInvoice(ctx context.Context, ev *PaymentEvent, providerRef, invoiceID string) (bool, error) {
	return s.recordProviderEvent(ctx, ev, providerRef, func(ctx context.Context, tx bun.Tx, cur *Subscription) (string, error) {
		if ev.Amount <= 0 {
			return OutcomeAlready, nil
		}
		err := s.bookEarningTx(ctx, tx, Earning{AppID: cur.AppID, Ref: "upgrade-invoice:" + invoiceID, Amount: ev.Amount,
			Currency: ev.Currency, Memo: "Membership upgrade"})
		return OutcomeUpgradePaid, err
	})
}

// ApplyProviderPlanChange reflects what the card provider says its
// subscription now bills (a change made in its customer portal, or the
// echo of one made here): the tier planID at amount a period, and whether
// it stops at the period end. A higher tier applies at once, a lower one
// waits for the period end, the member's own tier calls a waiting
// downgrade off; a tier of another app, or none, changes only the cancel
// flag.
func (s *Storage) ApplyProviderPlanChange(ctx context.Context, ev *PaymentEvent, providerRef, planID string, amount int64, cancelAtPeriodEnd bool) (bool, error) {
	return s.recordProviderEvent(ctx, ev, providerRef, func(ctx context.Context, tx bun.Tx, cur *Subscription) (string, error) {
		if cur.Status != SubActive && cur.Status != SubPastDue {
			return OutcomeAlready, nil
		}
		outcome := OutcomeAlready
		memberChanged(ctx, cur.AppID, cur.UserID)
		if cur.CancelAtPeriodEnd != cancelAtPeriodEnd {
			if _, err := tx.NewUpdate().Model((*Subscription)(nil)).Set("cancel_at_period_end = ?", cancelAtPeriodEnd).
				Where("id = ?", cur.ID).Exec(ctx); err != nil {
				return "", fmt.Errorf("reflect cancel at period end: %w", err)
			}
			outcome = OutcomeTierChanged
		}
		if planID == "" || (cur.NextPlanID != nil && *cur.NextPlanID == planID) || (planID == cur.PlanID && cur.NextPlanID == nil) {
			return outcome, nil
		}
		var rows []tierRow
		if err := tierQuery(tx).Where("p.app_id = ? AND p.id IN (?, ?)", cur.AppID, cur.PlanID, planID).Scan(ctx, &rows); err != nil {
			return "", fmt.Errorf("load tiers: %w", err)
		}
		var from, to *tierRow
		for i := range rows {
			if rows[i].ID == cur.PlanID {
				from = &rows[i]
			}
			if rows[i].ID == planID {
				to = &rows[i]
			}
		}
		if from == nil || to == nil {
			return outcome, nil // not a tier of this app
		}
		q := &TierChange{From: from.tier(), To: to.tier(), Cycle: cur.Cycle, Price: amount, NextCharge: amount, Currency: cur.Currency,
			RenewedBy: cur.Provider, ProviderRef: cur.ProviderRef, SubscriptionID: cur.ID, PeriodEnd: cur.CurrentPeriodEnd}
		now := time.Now().UTC()
		switch {
		case planID == cur.PlanID:
			q.Direction = TierKeep
		case to.Rank > from.Rank:
			q.Direction, q.EffectiveAt = TierUpgrade, now
		default:
			q.Direction, q.EffectiveAt = TierDowngrade, cur.CurrentPeriodEnd
		}
		if err := applyTierChange(ctx, tx, s, q, cur, now); err != nil {
			return "", err
		}
		return OutcomeTierChanged, nil
	})
}
