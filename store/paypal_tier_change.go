package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Moving a PayPal membership between tiers (issue 40 item 4). PayPal's
// revise moves a subscription to another plan only once the member
// approves it on PayPal, and bills the new plan from the next cycle; it
// prorates nothing. So a move is kept here from the request on:
//
//   - PENDING: PayPal was asked to revise (the approval link is kept); the
//     membership is unchanged.
//   - REVISED: the member approved and PayPal bills the new plan from the
//     next cycle. An upgrade waits here for its prorated difference, a
//     one-off PayPal order the member approves too; paid, the new tier
//     starts at once. Unpaid, it starts with the next renewal, which
//     PayPal bills at the new price.
//   - DONE: the move is on the membership (an upgrade's tier at once, a
//     downgrade's at the period end as next_plan_id, a kept tier calls a
//     waiting downgrade off), with the role history and the mail.
//
// Every step is a conditional update on the row and the membership in one
// transaction, so any number of concurrent return visits and webhooks make
// each step once.

// PayPal tier change states.
const (
	PayPalChangePending = "PENDING"
	PayPalChangeRevised = "REVISED"
	PayPalChangeDone    = "DONE"
	// PayPalChangeVoid: the membership moved otherwise meanwhile (ended,
	// another change); the revision is not applied.
	PayPalChangeVoid = "VOID"
)

// PayPalTierChange is one move of a PayPal membership between tiers.
type PayPalTierChange struct {
	bun.BaseModel  `bun:"table:paypal_tier_changes"`
	ID             string    `bun:"id,pk" json:"id"`
	Key            string    `bun:"key,notnull" json:"-"`
	SubscriptionID string    `bun:"subscription_id,notnull" json:"-"`
	AppID          string    `bun:"app_id,notnull" json:"-"`
	UserID         string    `bun:"user_id,notnull" json:"-"`
	ProviderRef    string    `bun:"provider_ref,notnull" json:"-"`
	Direction      string    `bun:"direction,notnull" json:"direction"`
	FromPlanID     string    `bun:"from_plan_id,notnull" json:"-"`
	ToPlanID       string    `bun:"to_plan_id,notnull" json:"-"`
	Cycle          string    `bun:"cycle,notnull" json:"-"`
	Price          int64     `bun:"price,notnull" json:"-"`
	Charge         int64     `bun:"charge,notnull" json:"charge"`
	Currency       string    `bun:"currency,notnull" json:"-"`
	PeriodEnd      time.Time `bun:"period_end,notnull" json:"-"`
	PayPalPlanID   string    `bun:"paypal_plan_id,notnull" json:"-"`
	ApprovalURL    string    `bun:"approval_url,notnull" json:"-"`
	ChargeRef      string    `bun:"charge_ref,notnull" json:"-"`
	Status         string    `bun:"status,notnull" json:"status"`
	// OfferID is the code an upgrade was asked with ("" for none):
	// ListCharge is the upgrade's charge without it (Charge is with it),
	// NextCharge what each renewal costs while it runs and DiscountLeft how
	// many renewals it discounts (-1: all), which the PayPal plan the move
	// revises to bills as its TRIAL cycles.
	OfferID      string    `bun:"offer_id,notnull" json:"-"`
	ListCharge   int64     `bun:"list_charge,notnull" json:"-"`
	NextCharge   int64     `bun:"next_charge,notnull" json:"-"`
	DiscountLeft int64     `bun:"discount_left,notnull" json:"-"`
	CreatedAt    time.Time `bun:"created_at,notnull" json:"-"`
	UpdatedAt    time.Time `bun:"updated_at,notnull" json:"-"`
}

// OpenPayPalTierChange answers the move q of a PayPal membership to the
// PayPal plan paypalPlanID, making it (PENDING) unless an identical one is
// open: the key names the membership, both tiers, the period, how many
// moves the membership made before and the offer code, so concurrent and
// repeated requests share one row (and so one revise at PayPal). The code
// is only kept here: it is redeemed once the member approved the move.
func (s *Storage) OpenPayPalTierChange(ctx context.Context, q *TierChange, userID, paypalPlanID string) (*PayPalTierChange, error) {
	done, err := s.db.NewSelect().Model((*PayPalTierChange)(nil)).
		Where("subscription_id = ? AND status = ?", q.SubscriptionID, PayPalChangeDone).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("count tier changes: %w", err)
	}
	key := q.SubscriptionID + ":" + q.From.ID + ":" + q.To.ID + ":" + strconv.FormatInt(q.PeriodEnd.Unix(), 10) + ":" + strconv.FormatInt(int64(done), 10)
	now := time.Now().UTC()
	row := &PayPalTierChange{ID: NewID(), Key: key, SubscriptionID: q.SubscriptionID, UserID: userID, ProviderRef: q.ProviderRef,
		Direction: q.Direction, FromPlanID: q.From.ID, ToPlanID: q.To.ID, Cycle: q.Cycle, Price: q.Price, Charge: q.Charge,
		Currency: q.Currency, PeriodEnd: q.PeriodEnd, PayPalPlanID: paypalPlanID, Status: PayPalChangePending, CreatedAt: now, UpdatedAt: now,
		ListCharge: q.Charge, NextCharge: q.NextCharge}
	if o := q.Offer; o != nil && q.Direction == TierUpgrade {
		row.Key += ":offer:" + o.Offer.ID
		row.OfferID, row.ListCharge, row.DiscountLeft = o.Offer.ID, o.ListPrice, o.DiscountLeft
	}
	key = row.Key
	var appID string
	if err := s.db.NewSelect().Table("subscriptions").Column("app_id").Where("id = ?", q.SubscriptionID).Scan(ctx, &appID); err != nil {
		return nil, fmt.Errorf("load membership app: %w", err)
	}
	row.AppID = appID
	if _, err := s.db.NewInsert().Model(row).On("CONFLICT (key) DO NOTHING").Exec(ctx); err != nil {
		return nil, fmt.Errorf("open tier change: %w", err)
	}
	out := new(PayPalTierChange)
	if err := s.db.NewSelect().Model(out).Where("key = ?", key).Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load tier change: %w", err)
	}
	return out, nil
}

// PayPalTierChangeByID answers one move (ErrNotFound when unknown).
func (s *Storage) PayPalTierChangeByID(ctx context.Context, id string) (*PayPalTierChange, error) {
	out := new(PayPalTierChange)
	if err := s.db.NewSelect().Model(out).Where("id = ?", id).Limit(1).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load tier change: %w", err)
	}
	return out, nil
}

// OpenPayPalTierChanges lists the moves of subscription ref that wait for
// PayPal (PENDING) or for the upgrade's difference (REVISED), oldest first.
func (s *Storage) OpenPayPalTierChanges(ctx context.Context, ref string) ([]PayPalTierChange, error) {
	var out []PayPalTierChange
	if err := s.db.NewSelect().Model(&out).Where("provider_ref = ? AND status IN (?)", ref, bun.List([]string{PayPalChangePending, PayPalChangeRevised})).
		Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list tier changes: %w", err)
	}
	return out, nil
}

// SetPayPalChangeApproval keeps where the member approves the revision.
func (s *Storage) SetPayPalChangeApproval(ctx context.Context, id, url string) error {
	if _, err := s.db.NewUpdate().Model((*PayPalTierChange)(nil)).Set("approval_url = ?", url).Set("updated_at = ?", time.Now().UTC()).
		Where("id = ?", id).Exec(ctx); err != nil {
		return fmt.Errorf("keep approval link: %w", err)
	}
	return nil
}

// SetPayPalChangeCharge keeps the PayPal order paying an upgrade's
// difference (the first kept wins: concurrent makers got PayPal's one
// order for the same request id anyway).
func (s *Storage) SetPayPalChangeCharge(ctx context.Context, id, ref string) error {
	if _, err := s.db.NewUpdate().Model((*PayPalTierChange)(nil)).Set("charge_ref = ?", ref).Set("updated_at = ?", time.Now().UTC()).
		Where("id = ? AND charge_ref = ''", id).Exec(ctx); err != nil {
		return fmt.Errorf("keep upgrade charge: %w", err)
	}
	return nil
}

// paypalChangeQuote rebuilds the TierChange of row for the membership cur.
func paypalChangeQuote(ctx context.Context, tx bun.Tx, row *PayPalTierChange, cur *Subscription, now time.Time) (*TierChange, error) {
	var rows []tierRow
	if err := tierQuery(tx).Where("p.app_id = ? AND p.id IN (?, ?)", cur.AppID, row.FromPlanID, row.ToPlanID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load tiers: %w", err)
	}
	q := &TierChange{Direction: row.Direction, Cycle: row.Cycle, Price: row.Price, NextCharge: row.Price, Charge: row.Charge,
		Currency: row.Currency, RenewedBy: cur.Provider, ProviderRef: cur.ProviderRef, SubscriptionID: cur.ID, PeriodEnd: cur.CurrentPeriodEnd,
		EffectiveAt: now}
	for i := range rows {
		if rows[i].ID == row.FromPlanID {
			q.From = rows[i].tier()
		}
		if rows[i].ID == row.ToPlanID {
			q.To = rows[i].tier()
		}
	}
	if q.From.ID == "" || q.To.ID == "" {
		return nil, ErrNotFound
	}
	if row.OfferID != "" {
		o := new(Offer)
		if err := selectOne(ctx, tx.NewSelect().Model(o).Where("id = ?", row.OfferID), "offer"); err != nil {
			return nil, err
		}
		q.NextCharge = row.NextCharge
		q.Offer = &OfferQuote{Offer: o, Code: o.Code, ListPrice: row.ListCharge, Price: row.Charge, Discount: row.ListCharge - row.Charge,
			Description: o.Describe(), DiscountLeft: row.DiscountLeft}
	}
	if q.Direction == TierDowngrade {
		q.EffectiveAt = cur.CurrentPeriodEnd
	}
	return q, nil
}

// stepPayPalChange runs step on the row id and its membership, both read
// for update in one transaction, when the row is in state from; it answers
// the row as it stands after.
func (s *Storage) stepPayPalChange(ctx context.Context, id, from string,
	step func(ctx context.Context, tx bun.Tx, row *PayPalTierChange, cur *Subscription) (string, error)) (*PayPalTierChange, error) {
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		row := new(PayPalTierChange)
		q := tx.NewSelect().Model(row).Where("id = ?", id)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := q.Limit(1).Scan(ctx); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return fmt.Errorf("load tier change: %w", err)
		}
		if row.Status != from {
			return nil
		}
		cur, err := subscriptionForUpdate(ctx, tx, "id = ?", row.SubscriptionID)
		if err != nil {
			return err
		}
		next := PayPalChangeVoid
		if cur != nil && cur.ProviderRef == row.ProviderRef && (cur.Status == SubActive || cur.Status == SubPastDue) {
			if next, err = step(ctx, tx, row, cur); err != nil {
				return err
			}
		}
		if next == from {
			return nil
		}
		if _, err := tx.NewUpdate().Model((*PayPalTierChange)(nil)).Set("status = ?", next).Set("updated_at = ?", time.Now().UTC()).
			Where("id = ? AND status = ?", id, from).Exec(ctx); err != nil {
			return fmt.Errorf("step tier change: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.PayPalTierChangeByID(ctx, id)
}

// applyPayPalChange puts the move on the membership (as quoted when it was
// asked): a membership that changed tier meanwhile voids it. renewed says
// that PayPal just billed the renewal at the new plan (an upgrade whose
// difference was never paid): that payment was the first of the code's
// discounted renewals, so one fewer is left.
func (s *Storage) applyPayPalChange(ctx context.Context, tx bun.Tx, row *PayPalTierChange, cur *Subscription, now time.Time, renewed bool) (string, error) {
	if cur.PlanID != row.FromPlanID {
		return PayPalChangeVoid, nil
	}
	q, err := paypalChangeQuote(ctx, tx, row, cur, now)
	if errors.Is(err, ErrNotFound) {
		return PayPalChangeVoid, nil
	}
	if err != nil {
		return "", err
	}
	if q.Direction == TierUpgrade {
		q.Charge = 0 // booked apart, from PayPal's capture
		if renewed && q.Offer != nil && q.Offer.DiscountLeft > 0 {
			q.Offer.DiscountLeft--
		}
	}
	var tc *ErrTierChange
	if err := applyTierChange(ctx, tx, s, q, cur, now); errors.As(err, &tc) {
		return PayPalChangeVoid, nil
	} else if err != nil {
		return "", err
	}
	return PayPalChangeDone, nil
}

// ConfirmPayPalRevision records that PayPal bills the move's plan now (the
// member approved the revision): a downgrade waits for the period end, a
// kept tier calls the waiting downgrade off, an upgrade without a
// difference to pay starts at once; one with a difference waits for it
// (REVISED).
func (s *Storage) ConfirmPayPalRevision(ctx context.Context, id string, now time.Time) (*PayPalTierChange, error) {
	return s.stepPayPalChange(ctx, id, PayPalChangePending, func(ctx context.Context, tx bun.Tx, row *PayPalTierChange, cur *Subscription) (string, error) {
		next := PayPalChangeRevised
		if row.Direction == TierUpgrade && row.Charge > 0 && cur.CurrentPeriodEnd.After(now) {
			if cur.PlanID != row.FromPlanID {
				return PayPalChangeVoid, nil
			}
		} else {
			var err error
			if next, err = s.applyPayPalChange(ctx, tx, row, cur, now, false); err != nil {
				return "", err
			}
		}
		if next != PayPalChangeVoid && row.OfferID != "" && row.Direction == TierUpgrade {
			// The member agreed on PayPal to the code's prices: it is
			// redeemed now, with the approval, and only now.
			if err := redeemApprovedOffer(ctx, tx, row, now); err != nil {
				return "", err
			}
		}
		return next, nil
	})
}

// PayPalUpgradePaid starts a revised upgrade whose difference PayPal
// captured (captureID, amount): the new tier at once, the payment booked
// as the creator's earning (its ledger reference "paypal-upgrade:ID"), once however many return
// visits and webhooks report it.
func (s *Storage) PayPalUpgradePaid(ctx context.Context, id, captureID string, amount int64, currency string, now time.Time) (*PayPalTierChange, error) {
	return s.stepPayPalChange(ctx, id, PayPalChangeRevised, func(ctx context.Context, tx bun.Tx, row *PayPalTierChange, cur *Subscription) (string, error) {
		// The money came whatever the membership did meanwhile: it is
		// booked (a void move's payment is refunded by hand, as a stray).
		ref := "paypal-upgrade:" + row.ID
		if err := s.bookEarningTx(ctx, tx, Earning{AppID: row.AppID, Ref: ref, Amount: amount, Currency: currency,
			Memo: "Membership upgrade"}); err != nil {
			return "", err
		}
		ev := &PaymentEvent{ID: NewID(), Provider: "paypal", EventID: "tierup:" + captureID, Type: "tier.upgrade.paid", AppID: &row.AppID,
			PaymentRef: row.ChargeRef, Amount: amount, Currency: currency, Outcome: OutcomeUpgradePaid, CreatedAt: now}
		if _, err := recordPaymentEvent(ctx, tx, ev, false); err != nil {
			return "", err
		}
		next, err := s.applyPayPalChange(ctx, tx, row, cur, now, false)
		if err != nil {
			return "", err
		}
		return next, nil
	})
}

// SettlePayPalRevisions applies, at a renewal of subscription ref, the
// revised upgrades whose difference was never paid: PayPal bills the new
// plan from this cycle, so the new tier starts now, as a downgrade does at
// the period end.
func (s *Storage) SettlePayPalRevisions(ctx context.Context, ref string, now time.Time) error {
	open, err := s.OpenPayPalTierChanges(ctx, ref)
	if err != nil {
		return err
	}
	for _, row := range open {
		if row.Status != PayPalChangeRevised {
			continue
		}
		if _, err := s.stepPayPalChange(ctx, row.ID, PayPalChangeRevised, func(ctx context.Context, tx bun.Tx, row *PayPalTierChange, cur *Subscription) (string, error) {
			if !cur.CurrentPeriodEnd.After(row.PeriodEnd) {
				return PayPalChangeRevised, nil // not renewed yet
			}
			return s.applyPayPalChange(ctx, tx, row, cur, now, true)
		}); err != nil {
			return err
		}
	}
	return nil
}

// redeemApprovedOffer records the member's redemption of the code of a
// PayPal upgrade they approved, once per member and code (a second move
// with the same code, approved too, shares the one redemption). Its limit
// and expiry were checked before the member was sent to PayPal; a member
// who approved there keeps what PayPal now bills, so a limit reached by
// others in between still records the redemption (as a card already
// charged at the discounted price does).
func redeemApprovedOffer(ctx context.Context, tx bun.Tx, row *PayPalTierChange, now time.Time) error {
	r := &OfferRedemption{ID: NewID(), OfferID: row.OfferID, AppID: row.AppID, UserID: row.UserID, PlanID: row.ToPlanID,
		Method: "paypal", Discount: row.ListCharge - row.Charge, CreatedAt: now}
	res, err := tx.NewInsert().Model(r).On("CONFLICT (offer_id, user_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return fmt.Errorf("record redemption: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil
	}
	if _, err := tx.NewUpdate().Model((*Offer)(nil)).Set("redemptions = redemptions + 1").Where("id = ?", row.OfferID).Exec(ctx); err != nil {
		return fmt.Errorf("redeem offer: %w", err)
	}
	return nil
}
