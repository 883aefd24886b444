package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Entitlement is something a paid order grants its buyer. DIGITAL items
// grant their download; other issues may add kinds (a ticket, a
// subscription period) through the order hooks below.
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
}

const EntitlementDownload = "DOWNLOAD"

// OrderHook runs inside the transaction that moves an order to PAID (or
// REFUNDED), once for every line whose item type it was registered for. An
// error rolls the whole transition back: the order is not PAID unless every
// hook did its part.
type OrderHook func(ctx context.Context, tx bun.Tx, order *Order, item *OrderItem) error

type hookEvent int

const (
	hookPaid hookEvent = iota
	hookRefunded
)

// OrderHooks is the registry of what paying for (and refunding) each item
// type does. DIGITAL is built in (the download); EVENT_TICKET and
// SUBSCRIPTION are registered by the events and memberships code with
// OnOrderPaid / OnOrderRefunded.
type OrderHooks struct {
	mu       sync.RWMutex
	paid     map[string][]OrderHook
	refunded map[string][]OrderHook
}

var builtinHooks = struct {
	paid, refunded map[string][]OrderHook
}{
	paid:     map[string][]OrderHook{ItemDigital: {grantDownload}},
	refunded: map[string][]OrderHook{ItemDigital: {revokeDownload}},
}

// OnOrderPaid registers hook for lines of itemType (ItemEventTicket,
// ItemSubscription, ...) when their order becomes PAID.
func (s *Storage) OnOrderPaid(itemType string, hook OrderHook) {
	s.Hooks.mu.Lock()
	defer s.Hooks.mu.Unlock()
	if s.Hooks.paid == nil {
		s.Hooks.paid = map[string][]OrderHook{}
	}
	s.Hooks.paid[itemType] = append(s.Hooks.paid[itemType], hook)
}

// OnOrderRefunded registers hook for lines of itemType when their order is
// REFUNDED (take back what OnOrderPaid gave).
func (s *Storage) OnOrderRefunded(itemType string, hook OrderHook) {
	s.Hooks.mu.Lock()
	defer s.Hooks.mu.Unlock()
	if s.Hooks.refunded == nil {
		s.Hooks.refunded = map[string][]OrderHook{}
	}
	s.Hooks.refunded[itemType] = append(s.Hooks.refunded[itemType], hook)
}

func (s *Storage) runHooks(ctx context.Context, tx bun.Tx, o *Order, ev hookEvent) error {
	var items []OrderItem
	if err := tx.NewSelect().Model(&items).Where("order_id = ?", o.ID).Scan(ctx); err != nil {
		return fmt.Errorf("load order items: %w", err)
	}
	s.Hooks.mu.RLock()
	registered, builtin := s.Hooks.paid, builtinHooks.paid
	if ev == hookRefunded {
		registered, builtin = s.Hooks.refunded, builtinHooks.refunded
	}
	s.Hooks.mu.RUnlock()
	for i := range items {
		it := &items[i]
		for _, h := range append(append([]OrderHook{}, builtin[it.Type]...), registered[it.Type]...) {
			if err := h(ctx, tx, o, it); err != nil {
				return fmt.Errorf("order %s hook for %s: %w", o.Status, it.Type, err)
			}
		}
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
	n, err := s.DB.NewSelect().Model((*Entitlement)(nil)).
		Where("app_id = ? AND user_id = ? AND store_item_id = ? AND kind = ? AND revoked_at IS NULL", appID, userID, itemID, EntitlementDownload).
		Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check download: %w", err)
	}
	return n > 0, nil
}
