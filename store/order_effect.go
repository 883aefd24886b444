package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Entitlement is something a paid order grants its buyer: today the
// download of a DIGITAL item (tickets and plans grant attendance and
// membership rows of their own).
type Entitlement struct {
	bun.BaseModel `bun:"table:entitlements"`

	ID          string     `bun:",pk" json:"id"`
	AppID       string     `bun:",notnull" json:"appId"`
	UserID      string     `bun:",notnull" json:"userId"`
	OrderID     string     `bun:",notnull" json:"orderId"`
	StoreItemID string     `bun:",notnull" json:"storeItemId"`
	Kind        string     `bun:",notnull" json:"kind"`
	CreatedAt   time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	RevokedAt   *time.Time `json:"revokedAt"`
	// Downloads counts the buyer's downloads of the item's files.
	Downloads int64 `bun:",notnull,default:0" json:"downloads"`
}

const EntitlementDownload = "DOWNLOAD"

// orderEffect is what paying for one order line of an item type does, and
// what a full refund takes back. Each runs inside the transaction that moves
// the order: an error rolls the whole transition back, so an order is not
// PAID unless every effect happened.
type orderEffect func(ctx context.Context, tx bun.Tx, order *Order, item *OrderItem) error

// orderEffects is everything an order payment triggers, by item type, in
// one place. PHYSICAL and SERVICE lines only take stock (at checkout).
var orderEffects = map[string]struct{ paid, refunded []orderEffect }{
	ItemDigital:      {paid: []orderEffect{grantDownload}, refunded: []orderEffect{revokeDownload}},
	ItemEventTicket:  {paid: []orderEffect{grantAttendance}, refunded: []orderEffect{revokeAttendance}},
	ItemSubscription: {paid: []orderEffect{grantMembership, startCardRenewal}, refunded: []orderEffect{revokeMembership}},
}

type orderEvent int

const (
	orderWasPaid orderEvent = iota
	orderWasRefunded
)

func runOrderEffects(ctx context.Context, tx bun.Tx, o *Order, ev orderEvent) error {
	var items []OrderItem
	if err := tx.NewSelect().Model(&items).Where("order_id = ?", o.ID).Scan(ctx); err != nil {
		return fmt.Errorf("load order items: %w", err)
	}
	for i := range items {
		it := &items[i]
		effects := orderEffects[it.Type].paid
		if ev == orderWasRefunded {
			effects = orderEffects[it.Type].refunded
		}
		for _, effect := range effects {
			if err := effect(ctx, tx, o, it); err != nil {
				return fmt.Errorf("order %s effect for %s: %w", o.Status, it.Type, err)
			}
		}
	}
	return nil
}

// JobStartCardRenewal is the job (server/jobs) that makes the Stripe Billing
// subscription renewing a membership bought by card.
const JobStartCardRenewal = "start_card_renewal"

// startCardRenewal: a plan paid by card renews through Stripe Billing,
// whether it was bought with the Subscribe button or through the cart. The
// job is written in the transaction that marks the order PAID, so it cannot
// be lost.
func startCardRenewal(ctx context.Context, tx bun.Tx, o *Order, _ *OrderItem) error {
	if o.PaymentMethod != "stripe" {
		return nil
	}
	args, err := json.Marshal(map[string]string{"orderId": o.ID})
	if err != nil {
		return fmt.Errorf("encode card renewal job: %w", err)
	}
	row := &JobOutbox{Kind: JobStartCardRenewal, Args: string(args), CreatedAt: time.Now().UTC()}
	if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
		return fmt.Errorf("enqueue card renewal job: %w", err)
	}
	return nil
}

func grantDownload(ctx context.Context, tx bun.Tx, o *Order, it *OrderItem) error {
	e := &Entitlement{ID: NewID(), AppID: o.AppID, UserID: o.UserID, OrderID: o.ID, StoreItemID: it.StoreItemID,
		Kind: EntitlementDownload, CreatedAt: time.Now().UTC()}
	if _, err := tx.NewInsert().Model(e).On("CONFLICT (order_id, store_item_id, kind) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("grant download: %w", err)
	}
	return nil
}

func revokeDownload(ctx context.Context, tx bun.Tx, o *Order, it *OrderItem) error {
	if _, err := tx.NewUpdate().Model((*Entitlement)(nil)).Set("revoked_at = ?", time.Now().UTC()).
		Where("order_id = ? AND store_item_id = ? AND kind = ? AND revoked_at IS NULL", o.ID, it.StoreItemID, EntitlementDownload).
		Exec(ctx); err != nil {
		return fmt.Errorf("revoke download: %w", err)
	}
	return nil
}

// HasDownload reports whether the member bought the item (DIGITAL) and the
// grant stands.
func (s *Storage) HasDownload(ctx context.Context, appID, userID, itemID string) (bool, error) {
	n, err := s.db.NewSelect().Model((*Entitlement)(nil)).
		Where("app_id = ? AND user_id = ? AND store_item_id = ? AND kind = ? AND revoked_at IS NULL", appID, userID, itemID, EntitlementDownload).
		Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check download: %w", err)
	}
	return n > 0, nil
}
