package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// PayPalCatalog is one thing PayPal made for Marquee's PayPal subscriptions
// (issue 40 item 3): an app's catalog product or a tier's billing plan for
// one cycle and price, by a key naming what was asked for. PayPal plans
// keep their price for ever, so a tier whose price changes gets a plan of
// its own under a new key, and members on the old plan keep paying what
// they agreed to.
type PayPalCatalog struct {
	bun.BaseModel `bun:"table:paypal_catalog"`

	Key       string    `bun:",pk"`
	AppID     string    `bun:",notnull"`
	PayPalID  string    `bun:"paypal_id,notnull"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
}

// PayPalCatalogID answers the PayPal id kept under key ("" when none).
func (s *Storage) PayPalCatalogID(ctx context.Context, key string) (string, error) {
	c := new(PayPalCatalog)
	err := selectOne(ctx, s.db.NewSelect().Model(c).Where("key = ?", key), "paypal catalog entry")
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return c.PayPalID, nil
}

// SavePayPalCatalogID keeps id under key unless one is kept already, and
// answers the one kept: the first writer wins, so concurrent makers agree.
func (s *Storage) SavePayPalCatalogID(ctx context.Context, appID, key, id string) (string, error) {
	c := &PayPalCatalog{Key: key, AppID: appID, PayPalID: id, CreatedAt: time.Now().UTC()}
	if _, err := s.db.NewInsert().Model(c).On("CONFLICT (key) DO NOTHING").Exec(ctx); err != nil {
		return "", fmt.Errorf("save paypal catalog entry: %w", err)
	}
	kept, err := s.PayPalCatalogID(ctx, key)
	if err != nil {
		return "", err
	}
	if kept == "" {
		return "", fmt.Errorf("paypal catalog entry %s not kept", key)
	}
	return kept, nil
}

// LinkProviderSubscriptionTx records, in the transaction that paid orderID,
// the provider's subscription ref that renews the membership the order
// bought, and moves the membership's period end to when the provider bills
// next (never earlier than it is: no paid day is lost). Only the first
// link sticks.
func LinkProviderSubscriptionTx(ctx context.Context, tx bun.Tx, orderID, ref string, nextBilling time.Time) error {
	q := tx.NewUpdate().Model((*Subscription)(nil)).Set("provider_ref = ?", ref).
		Where("order_id = ? AND provider_ref = ''", orderID)
	if !nextBilling.IsZero() {
		q = q.Set("current_period_end = CASE WHEN current_period_end < ? THEN ? ELSE current_period_end END", nextBilling.UTC(), nextBilling.UTC())
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("link provider subscription: %w", err)
	}
	return nil
}

// SubscriptionByProviderRef answers the membership a provider's
// subscription renews (ErrNotFound when none).
func (s *Storage) SubscriptionByProviderRef(ctx context.Context, provider, ref string) (*Subscription, error) {
	sub := new(Subscription)
	if err := selectOne(ctx, s.db.NewSelect().Model(sub).Where("provider = ? AND provider_ref = ?", provider, ref), "subscription"); err != nil {
		return nil, err
	}
	return sub, nil
}

// MembershipLine is what an order's membership line buys, as a provider
// that bills it on its own needs it: the tier's plan, the cycle, the price
// of the first payment and, with an offer code, the list price after the
// discounted payments (DiscountLeft renewals after the first, -1 for
// every one).
type MembershipLine struct {
	PlanID       string
	Name         string
	Cycle        string
	Price        int64
	List         int64
	DiscountLeft int64
	Currency     string
}

// MembershipLineOf answers the membership line of orderID (ErrNotFound when
// the order buys none).
func (s *Storage) MembershipLineOf(ctx context.Context, orderID string) (*MembershipLine, error) {
	it := new(OrderItem)
	if err := selectOne(ctx, s.db.NewSelect().Model(it).Where("order_id = ? AND type = ?", orderID, ItemSubscription), "membership line"); err != nil {
		return nil, err
	}
	plan, err := planOfItem(ctx, s.db, it.StoreItemID)
	if err != nil {
		return nil, err
	}
	var line orderLineOffer
	_ = json.Unmarshal([]byte(it.CustomOptions), &line)
	out := &MembershipLine{PlanID: plan.ID, Name: it.Name, Cycle: line.Cycle, Price: it.Price, Currency: it.Currency}
	if out.Cycle == "" {
		out.Cycle = plan.BillingCycle
	}
	if line.Offer != "" && line.List > it.Price {
		out.List, out.DiscountLeft = line.List, line.DiscountLeft
	}
	return out, nil
}
