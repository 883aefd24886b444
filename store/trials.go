package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Free trials (issue 40 item 5). A tier may have a free trial of N days;
// a member has one trial per app, ever (the trials row, unique per app and
// member, is taken in the transaction that starts it, so of any number of
// racing joins one starts a trial). A trial is a membership like any other
// (role SUBSCRIBER with the tier) whose period is the trial and whose
// trial_until is set; nothing is charged. Three days before it ends the
// renewal job mails the member (remindTrials); at its end the job charges
// the first period from the wallet like any renewal, and a wallet that
// cannot pay ends it at once: the member follows the app again (no grace,
// nothing was ever paid). A tier whose trial needs a card
// (TrialCardRequired) starts no trial on the wallet.

// TrialReminderLead: the mail about a trial's end goes this long before it.
const TrialReminderLead = 3 * 24 * time.Hour

// Trial errors.
var (
	// ErrTrialTaken: the member has had (or is in) this app's free trial.
	ErrTrialTaken = errors.New("free trial already taken")
	// ErrTrialNeedsCard: the tier's trial starts only with a card.
	ErrTrialNeedsCard = errors.New("free trial needs a card")
)

// Trial is one member's trial of an app.
type Trial struct {
	bun.BaseModel `bun:"table:trials"`

	ID          string     `bun:",pk" json:"id"`
	AppID       string     `bun:",notnull" json:"-"`
	UserID      string     `bun:",notnull" json:"userId"`
	PlanID      string     `bun:",notnull" json:"tierId"`
	StartedAt   time.Time  `bun:",notnull,default:current_timestamp" json:"startedAt"`
	EndsAt      time.Time  `bun:",notnull" json:"endsAt"`
	ConvertedAt *time.Time `json:"convertedAt"`
	EndedAt     *time.Time `json:"endedAt"`
}

// TrialEligible reports whether a join of the tier of itemID by the member
// paying with method would start a free trial: the tier has one (and
// does not need a card, or method is the card), the member never had one
// in the app and holds no membership now.
func (s *Storage) TrialEligible(ctx context.Context, appID, userID, itemID, method string, now time.Time) (bool, error) {
	tier, err := tierOnSale(ctx, s.db, appID, itemID)
	if err != nil || tier.TrialDays <= 0 || (tier.CardNeeded && method != "stripe") {
		return false, err
	}
	had, err := s.db.NewSelect().Model((*Trial)(nil)).Where("app_id = ? AND user_id = ?", appID, userID).Count(ctx)
	if err != nil {
		return false, fmt.Errorf("load trial: %w", err)
	}
	if had > 0 {
		return false, nil
	}
	valid, err := s.HasValidSubscription(ctx, appID, userID, now)
	return !valid, err
}

// TrialAvailable reports whether the member has had no trial in the app.
func (s *Storage) TrialAvailable(ctx context.Context, appID, userID string) (bool, error) {
	n, err := s.db.NewSelect().Model((*Trial)(nil)).Where("app_id = ? AND user_id = ?", appID, userID).Count(ctx)
	if err != nil {
		return false, fmt.Errorf("load trial: %w", err)
	}
	return n == 0, nil
}

// TrialStart is one request for a trial.
type TrialStart struct {
	AppID, UserID, ItemID, Cycle, OfferCode string
	// Method is how the first period will be paid (the wallet; a tier
	// whose trial needs a card refuses anything else).
	Method string
	// ProviderRef is the card provider's subscription that charges the
	// first period at the trial's end (card_trials.go), and Ends that
	// end as the provider set it; zero Ends is now plus the tier's days.
	ProviderRef string
	Ends        time.Time
}

// StartTrial starts the member's free trial of the tier: no charge now,
// the first period (with the offer, if any, redeemed now) charged at its
// end. ErrTrialTaken when the member had one (or is in a membership).
func (s *Storage) StartTrial(ctx context.Context, in TrialStart, now time.Time) (*Subscription, error) {
	var sub *Subscription
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		sub, err = startTrialTx(ctx, tx, in, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}

func startTrialTx(ctx context.Context, tx bun.Tx, in TrialStart, now time.Time) (*Subscription, error) {
	now = now.UTC()
	tier, err := tierOnSale(ctx, tx, in.AppID, in.ItemID)
	if err != nil {
		return nil, err
	}
	if tier.TrialDays <= 0 {
		return nil, &ErrInvalid{Msg: "This tier has no free trial", Field: "itemId"}
	}
	if tier.CardNeeded && in.Method != "stripe" {
		return nil, ErrTrialNeedsCard
	}
	cycle, price, err := tier.price(in.Cycle)
	if err != nil {
		return nil, err
	}
	if err := lockSubscriptions(ctx, tx); err != nil {
		return nil, err
	}
	end := now.AddDate(0, 0, tier.TrialDays)
	if !in.Ends.IsZero() {
		end = in.Ends.UTC()
	}
	t := &Trial{ID: NewID(), AppID: in.AppID, UserID: in.UserID, PlanID: tier.ID, StartedAt: now, EndsAt: end}
	res, err := tx.NewInsert().Model(t).On("CONFLICT (app_id, user_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("start trial: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, ErrTrialTaken
	}
	cur, err := subscriptionForUpdate(ctx, tx, "app_id = ? AND user_id = ?", in.AppID, in.UserID)
	if err != nil {
		return nil, err
	}
	if cur != nil && (cur.Status == SubActive && cur.CurrentPeriodEnd.After(now) || cur.Status == SubPastDue) {
		return nil, ErrTrialTaken // a member already: no trial on top
	}
	currency := tier.Currency
	if currency == "" {
		currency = WalletCurrency
	}
	method := in.Method
	if method == "" {
		method = WalletMethod
	}
	sub := &Subscription{ID: NewID(), AppID: in.AppID, UserID: in.UserID, PlanID: tier.ID, Status: SubActive,
		CurrentPeriodEnd: end, CreatedAt: now, Amount: price, Currency: currency, Provider: method, ProviderRef: in.ProviderRef,
		Cycle: cycle, TrialUntil: &end}
	if strings.TrimSpace(in.OfferCode) != "" {
		q, err := quoteOffer(ctx, tx, in.AppID, in.UserID, tier.ID, cycle, price, in.OfferCode, now)
		if err != nil {
			return nil, err
		}
		// The wallet's code is redeemed exactly; a card's provider
		// already holds the coupon, so it is recorded whatever.
		if err := redeemOffer(ctx, tx, q.Offer.ID, in.AppID, in.UserID, tier.ID, method, q.Discount, now, method == WalletMethod); err != nil {
			return nil, err
		}
		sub.Amount, sub.ListAmount, sub.DiscountLeft, sub.OfferID = q.Price, price, q.DiscountLeft, &q.Offer.ID
	}
	if err := saveSubscription(ctx, tx, cur, sub); err != nil {
		return nil, err
	}
	if err := grantSubscriber(ctx, tx, in.AppID, in.UserID); err != nil {
		return nil, err
	}
	return sub, membershipMessages(ctx, tx, membershipNote{Event: MembershipTrial, Sub: sub})
}

// remindTrials mails each member whose trial ends within
// TrialReminderLead, once (the conditional trial_reminded flag).
func (s *Storage) remindTrials(ctx context.Context, now time.Time) (int, error) {
	var due []Subscription
	if err := s.db.NewSelect().Model(&due).Where("trial_until IS NOT NULL AND trial_reminded = ? AND status = ?", false, SubActive).
		Where("current_period_end > ? AND current_period_end <= ?", now, now.Add(TrialReminderLead)).
		Where("cancel_at_period_end = ?", false).
		OrderExpr("current_period_end ASC").Limit(500).Scan(ctx); err != nil {
		return 0, fmt.Errorf("find ending trials: %w", err)
	}
	sent := 0
	for i := range due {
		sub := &due[i]
		err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.NewUpdate().Model((*Subscription)(nil)).Set("trial_reminded = ?", true).
				Where("id = ? AND trial_reminded = ? AND trial_until IS NOT NULL", sub.ID, false).Exec(ctx)
			if err != nil {
				return fmt.Errorf("remind trial: %w", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return nil
			}
			sent++
			return membershipMessages(ctx, tx, membershipNote{Event: MembershipTrialEnding, Sub: sub})
		})
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// markTrial records how a trial ended: converted (the first period was
// paid) or not.
func markTrial(ctx context.Context, tx bun.IDB, appID, userID string, converted bool, now time.Time) error {
	col := "ended_at"
	if converted {
		col = "converted_at"
	}
	if _, err := tx.NewUpdate().Model((*Trial)(nil)).Set("? = ?", bun.Ident(col), now).
		Where("app_id = ? AND user_id = ? AND converted_at IS NULL AND ended_at IS NULL", appID, userID).Exec(ctx); err != nil {
		return fmt.Errorf("mark trial: %w", err)
	}
	return nil
}

// applyLineOffer is the paid order line's code (if any): it is redeemed in
// the paying transaction (exactly, for the wallet: a code used up
// meanwhile refuses the payment; a card already charged at the discounted
// price has it recorded whatever), and the membership remembers it for
// its renewals.
func applyLineOffer(ctx context.Context, tx bun.Tx, o *Order, it *OrderItem, sub *Subscription, now time.Time) error {
	var line orderLineOffer
	_ = json.Unmarshal([]byte(it.CustomOptions), &line)
	if line.Offer == "" {
		return nil
	}
	if err := redeemOffer(ctx, tx, line.Offer, o.AppID, o.UserID, sub.PlanID, o.PaymentMethod, line.List-it.Price, now,
		o.PaymentMethod == WalletMethod); err != nil {
		return err
	}
	sub.OfferID, sub.ListAmount, sub.DiscountLeft = &line.Offer, line.List, line.DiscountLeft
	if _, err := tx.NewUpdate().Model(sub).WherePK().Column("offer_id", "list_amount", "discount_left").Exec(ctx); err != nil {
		return fmt.Errorf("remember offer: %w", err)
	}
	return nil
}
