package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Card trials (issue 40 item 5): a tier whose free trial needs a card
// starts it when the member has saved a card with the card provider (Stripe
// Checkout in subscription mode, server/payments/stripe/card_trial.go).
// Between the join and the saved card the member's request is a card_trials
// row, one per member and app: every join of the same tier, cycle and code
// answers the same row, and so (its id keys the provider's calls) the same
// Checkout Session, however many race. The trial itself starts once, in
// StartCardTrial, when the provider reports the card saved (its webhook or
// the member's return, whichever comes first): the trials row (unique per
// app and member) keeps it to one trial per member per app whatever the
// method.

// Card trial states.
const (
	CardTrialPending  = "PENDING"
	CardTrialStarted  = "STARTED"
	CardTrialCanceled = "CANCELED"
)

// CardTrialReuse is how long a pending card trial's Checkout Session is
// offered again to the member (Stripe keeps a session open 24 hours, and an
// idempotency key as long); after it a join makes a new one.
const CardTrialReuse = 23 * time.Hour

// CardTrial is a member's card trial being set up, or set up.
type CardTrial struct {
	bun.BaseModel `bun:"table:card_trials"`

	ID          string    `bun:",pk"`
	AppID       string    `bun:",notnull"`
	UserID      string    `bun:",notnull"`
	PlanID      string    `bun:",notnull"`
	ItemID      string    `bun:",notnull"`
	Cycle       string    `bun:",notnull,default:''"`
	OfferCode   string    `bun:",notnull,default:''"`
	SessionRef  string    `bun:",notnull,default:''"`
	ProviderRef string    `bun:",notnull,default:''"`
	Status      string    `bun:",notnull,default:'PENDING'"`
	CreatedAt   time.Time `bun:",notnull,default:current_timestamp"`
}

// CardTrialPlan is what the provider needs to set a card trial up: the
// row, the tier's name, its price for the cycle (Amount is the first charge
// with the offer, ListAmount without), the trial's days and the offer.
type CardTrialPlan struct {
	Trial      *CardTrial
	Name       string
	Amount     int64
	ListAmount int64
	Currency   string
	Cycle      string
	TrialDays  int
	// Offer is the code's offer (nil without a code); DiscountLeft how
	// many charges after the first it still discounts (-1: all).
	Offer        *Offer
	DiscountLeft int64
}

// ReserveCardTrial answers the member's card trial of the tier of itemID:
// the pending one when it asks for the same tier, cycle and code (and is
// recent), else a new one; stale is the pending one it replaces (its
// session is to be expired). ErrTrialTaken when the member had a trial in
// the app or holds a membership now.
func (s *Storage) ReserveCardTrial(ctx context.Context, appID, userID, itemID, cycle, code string, now time.Time) (*CardTrialPlan, *CardTrial, error) {
	now = now.UTC()
	code = NormalizeOfferCode(code)
	var out *CardTrialPlan
	var stale *CardTrial
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		out, stale = nil, nil
		tier, err := tierOnSale(ctx, tx, appID, itemID)
		if err != nil {
			return err
		}
		if tier.TrialDays <= 0 {
			return &ErrInvalid{Msg: "This tier has no free trial", Field: "itemId"}
		}
		cycle, price, err := tier.price(cycle)
		if err != nil {
			return err
		}
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		had, err := tx.NewSelect().Model((*Trial)(nil)).Where("app_id = ? AND user_id = ?", appID, userID).Count(ctx)
		if err != nil {
			return fmt.Errorf("load trial: %w", err)
		}
		valid, err := validSubscription(tx.NewSelect().Model((*Subscription)(nil)).Where("app_id = ? AND user_id = ?", appID, userID),
			now, s.GracePeriod()).Count(ctx)
		if err != nil {
			return fmt.Errorf("check subscription: %w", err)
		}
		if had > 0 || valid > 0 {
			return ErrTrialTaken
		}
		currency := tier.Currency
		if currency == "" {
			currency = WalletCurrency
		}
		out = &CardTrialPlan{Name: tier.Name, Amount: price, ListAmount: price, Currency: currency, Cycle: cycle, TrialDays: tier.TrialDays}
		if code != "" {
			q, err := quoteOffer(ctx, tx, appID, userID, tier.ID, cycle, price, code, now)
			if err != nil {
				return err
			}
			out.Amount, out.Offer, out.DiscountLeft = q.Price, q.Offer, q.DiscountLeft
		}
		cur := new(CardTrial)
		q := tx.NewSelect().Model(cur).Where("app_id = ? AND user_id = ?", appID, userID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		switch err := selectOne(ctx, q, "card trial"); {
		case err == nil:
			if cur.Status == CardTrialPending && cur.PlanID == tier.ID && cur.Cycle == cycle && cur.OfferCode == code &&
				now.Sub(cur.CreatedAt) < CardTrialReuse {
				out.Trial = cur
				return nil
			}
			if cur.Status == CardTrialPending {
				stale = cur
			}
			if _, err := tx.NewDelete().Model(cur).WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("replace card trial: %w", err)
			}
		case !errors.Is(err, ErrNotFound):
			return err
		}
		row := &CardTrial{ID: NewID(), AppID: appID, UserID: userID, PlanID: tier.ID, ItemID: itemID, Cycle: cycle, OfferCode: code,
			Status: CardTrialPending, CreatedAt: now}
		res, err := tx.NewInsert().Model(row).On("CONFLICT (app_id, user_id) DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("reserve card trial: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			// A concurrent join made it first: that one is answered.
			row = new(CardTrial)
			if err := selectOne(ctx, tx.NewSelect().Model(row).Where("app_id = ? AND user_id = ?", appID, userID), "card trial"); err != nil {
				return err
			}
		}
		out.Trial = row
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, stale, nil
}

// SetCardTrialSession records the provider's Checkout Session of a pending
// card trial; the first one sticks, and the one that stuck is answered.
func (s *Storage) SetCardTrialSession(ctx context.Context, id, sessionRef string) (string, error) {
	if _, err := s.db.NewUpdate().Model((*CardTrial)(nil)).Set("session_ref = ?", sessionRef).
		Where("id = ? AND session_ref = ''", id).Exec(ctx); err != nil {
		return "", fmt.Errorf("record card trial session: %w", err)
	}
	t, err := s.CardTrialByID(ctx, id)
	if err != nil {
		return "", err
	}
	return t.SessionRef, nil
}

// CancelPendingCardTrial ends a pending card trial whose Checkout expired,
// so the member's next join starts a new one; a trial that started stays.
func (s *Storage) CancelPendingCardTrial(ctx context.Context, id string) error {
	if _, err := s.db.NewUpdate().Model((*CardTrial)(nil)).Set("status = ?", CardTrialCanceled).
		Where("id = ? AND status = ?", id, CardTrialPending).Exec(ctx); err != nil {
		return fmt.Errorf("cancel card trial: %w", err)
	}
	return nil
}

// CardTrialByID answers a card trial, or ErrNotFound.
func (s *Storage) CardTrialByID(ctx context.Context, id string) (*CardTrial, error) {
	t := new(CardTrial)
	if err := selectOne(ctx, s.db.NewSelect().Model(t).Where("id = ?", id), "card trial"); err != nil {
		return nil, err
	}
	return t, nil
}

// CardTrialOf answers the member's card trial in the app, nil when none.
func (s *Storage) CardTrialOf(ctx context.Context, appID, userID string) (*CardTrial, error) {
	t := new(CardTrial)
	err := selectOne(ctx, s.db.NewSelect().Model(t).Where("app_id = ? AND user_id = ?", appID, userID), "card trial")
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return t, err
}

// StartCardTrial starts the free trial of card trial id now that the card
// is saved on the provider's subscription providerRef, whose trial ends at
// ends: the membership is a trial renewed by that subscription (role
// SUBSCRIBER, the trial recorded for the analytics and the role history).
// It is idempotent: a second report of the same subscription answers the
// membership with fresh false. ErrTrialTaken when the member had a trial
// (or a membership) meanwhile, or the card trial was replaced: the
// provider's subscription must then be cancelled. ErrNotFound when id is
// not a card trial.
func (s *Storage) StartCardTrial(ctx context.Context, id, providerRef string, ends, now time.Time) (*Subscription, bool, error) {
	var sub *Subscription
	fresh := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := lockSubscriptions(ctx, tx); err != nil {
			return err
		}
		t := new(CardTrial)
		q := tx.NewSelect().Model(t).Where("id = ?", id)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "card trial"); err != nil {
			return err
		}
		switch t.Status {
		case CardTrialStarted:
			if t.ProviderRef != providerRef {
				return ErrTrialTaken
			}
			var err error
			sub, err = s.subscriptionByRefTx(ctx, tx, providerRef)
			return err
		case CardTrialCanceled:
			return ErrTrialTaken
		}
		var err error
		sub, err = startTrialTx(ctx, tx, TrialStart{AppID: t.AppID, UserID: t.UserID, ItemID: t.ItemID, Cycle: t.Cycle,
			OfferCode: t.OfferCode, Method: "stripe", ProviderRef: providerRef, Ends: ends}, now)
		if err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model(t).Set("status = ?", CardTrialStarted).Set("provider_ref = ?", providerRef).
			WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("record card trial: %w", err)
		}
		fresh = true
		return nil
	})
	if CardTrialRefused(err) {
		// Nothing started: the card trial is over, so a later report of
		// the same subscription is refused at once.
		if _, uerr := s.db.NewUpdate().Model((*CardTrial)(nil)).Set("status = ?", CardTrialCanceled).
			Where("id = ? AND status = ?", id, CardTrialPending).Exec(ctx); uerr != nil {
			return nil, false, fmt.Errorf("cancel card trial: %w", uerr)
		}
	}
	if err != nil {
		return nil, false, err
	}
	return sub, fresh, nil
}

func (s *Storage) subscriptionByRefTx(ctx context.Context, tx bun.Tx, ref string) (*Subscription, error) {
	sub := new(Subscription)
	if err := selectOne(ctx, tx.NewSelect().Model(sub).Where("provider_ref = ?", ref), "subscription"); err != nil {
		return nil, err
	}
	return sub, nil
}

// CardTrialRefused reports whether err means a card trial cannot start
// (had a trial or a membership meanwhile, replaced, the tier off sale or
// without a trial now): the provider's subscription is to be cancelled.
func CardTrialRefused(err error) bool {
	var inv *ErrInvalid
	return errors.Is(err, ErrTrialTaken) || errors.Is(err, ErrNotFound) || errors.As(err, &inv)
}
