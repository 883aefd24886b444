package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
)

// Membership plans are SUBSCRIPTION store items with a billing cycle (the
// subscription_plans row). An item without one is a draft: it is not
// offered to members (SubscriptionItems) until the studio gives it a cycle.
// Archiving a plan takes it off sale; members who hold it keep it, and it
// renews, until they cancel or it ends.

// PlanInput is the studio's plan form.
type PlanInput struct {
	Name, Description string
	Benefits          []string
	Price             int64
	Cycle             string
}

// StudioPlan is a plan as the studio lists it.
type StudioPlan struct {
	ItemID      string   `json:"itemId"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Benefits    []string `json:"benefits"`
	Price       int64    `json:"price"`
	Currency    string   `json:"currency"`
	// Cycle is MONTHLY or YEARLY; empty for a draft that cannot be sold.
	Cycle    string `json:"cycle"`
	Archived bool   `json:"archived"`
	// Members is how many members hold the plan now (valid memberships).
	Members int `json:"members"`
}

type planSettings struct {
	Benefits []string `json:"benefits,omitempty"`
}

// CheckPlan validates a plan form. The cycle is what makes a plan sellable:
// without one it cannot be published.
func CheckPlan(in PlanInput) error {
	n := utf8.RuneCountInString(strings.TrimSpace(in.Name))
	switch {
	case n < 1 || n > 80:
		return &ErrInvalid{Msg: "A plan name of 1 to 80 characters is required", Field: "name"}
	case in.Price <= 0 || in.Price > 100_000_00:
		return &ErrInvalid{Msg: "Price must be between $0.01 and $100,000", Field: "price"}
	case in.Cycle != CycleMonthly && in.Cycle != CycleYearly:
		return &ErrInvalid{Msg: "Choose a billing cycle (monthly or yearly): a plan without one cannot be published", Field: "billingCycle"}
	case utf8.RuneCountInString(in.Description) > 2000:
		return &ErrInvalid{Msg: "Description must be at most 2,000 characters", Field: "description"}
	case len(in.Benefits) > 20:
		return &ErrInvalid{Msg: "At most 20 benefits", Field: "benefits"}
	}
	for _, b := range in.Benefits {
		if utf8.RuneCountInString(b) > 200 {
			return &ErrInvalid{Msg: "Each benefit must be at most 200 characters", Field: "benefits"}
		}
	}
	return nil
}

// StudioPlans lists every plan of the app, archived ones last.
func (s *Storage) StudioPlans(ctx context.Context, appID string) ([]StudioPlan, error) {
	var rows []struct {
		ID          string     `bun:"id"`
		Name        string     `bun:"name"`
		Description string     `bun:"description"`
		Price       int64      `bun:"price"`
		Currency    string     `bun:"currency"`
		Settings    string     `bun:"settings"`
		DeletedAt   *time.Time `bun:"deleted_at"`
		Cycle       *string    `bun:"billing_cycle"`
		Members     int        `bun:"members"`
	}
	now := time.Now().UTC()
	err := s.DB.NewSelect().TableExpr("store_items AS i").
		Join("LEFT JOIN subscription_plans AS p ON p.store_item_id = i.id").
		ColumnExpr("i.id, i.name, i.description, i.price, i.currency, i.settings, i.deleted_at, p.billing_cycle").
		ColumnExpr(`(SELECT COUNT(*) FROM subscriptions AS s WHERE s.plan_id = p.id AND (
			(s.status = ? AND s.current_period_end > ?) OR (s.status = ? AND s.grace_until > ?))) AS members`,
			SubActive, now, SubPastDue, now).
		Where("i.app_id = ? AND i.type = ?", appID, ItemSubscription).
		OrderExpr("i.deleted_at IS NOT NULL, i.price ASC, i.id ASC").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load plans: %w", err)
	}
	out := make([]StudioPlan, 0, len(rows))
	for _, r := range rows {
		var ps planSettings
		_ = json.Unmarshal([]byte(r.Settings), &ps)
		if ps.Benefits == nil {
			ps.Benefits = []string{}
		}
		p := StudioPlan{ItemID: r.ID, Name: r.Name, Description: r.Description, Benefits: ps.Benefits, Price: r.Price,
			Currency: r.Currency, Archived: r.DeletedAt != nil, Members: r.Members}
		if r.Cycle != nil {
			p.Cycle = *r.Cycle
		}
		out = append(out, p)
	}
	return out, nil
}

// SavePlan creates (itemID empty) or edits a plan: its item and billing
// cycle in one transaction. A draft item (no cycle yet) becomes a plan.
func (s *Storage) SavePlan(ctx context.Context, shop *Shop, actorID, itemID string, in PlanInput) (*StoreItem, error) {
	in.Name = strings.TrimSpace(in.Name)
	benefits := []string{}
	for _, b := range in.Benefits {
		if b = strings.TrimSpace(b); b != "" {
			benefits = append(benefits, b)
		}
	}
	in.Benefits = benefits
	if err := CheckPlan(in); err != nil {
		return nil, err
	}
	settings, _ := json.Marshal(planSettings{Benefits: in.Benefits})
	now := time.Now().UTC()
	it := &StoreItem{ID: itemID, AppID: shop.AppID, StoreID: shop.ID}
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		action := "plan.update"
		if itemID == "" {
			action = "plan.create"
			it.ID, it.Type, it.Currency, it.CreatedAt, it.UpdatedAt = NewID(), ItemSubscription, shop.Currency, now, now
			it.Name, it.Description, it.Price, it.Settings = in.Name, in.Description, in.Price, string(settings)
			if _, err := tx.NewInsert().Model(it).Exec(ctx); err != nil {
				return fmt.Errorf("insert plan item: %w", err)
			}
		} else {
			if err := selectOne(ctx, tx.NewSelect().Model(it).
				Where("id = ? AND app_id = ? AND type = ? AND deleted_at IS NULL", itemID, shop.AppID, ItemSubscription), "plan"); err != nil {
				return err
			}
			it.Name, it.Description, it.Price, it.Settings, it.UpdatedAt = in.Name, in.Description, in.Price, string(settings), now
			if _, err := tx.NewUpdate().Model(it).Column("name", "description", "price", "settings", "updated_at").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("update plan item: %w", err)
			}
		}
		plan := &SubscriptionPlan{ID: NewID(), AppID: shop.AppID, StoreItemID: it.ID, BillingCycle: in.Cycle}
		if _, err := tx.NewInsert().Model(plan).On("CONFLICT (store_item_id) DO UPDATE").Set("billing_cycle = EXCLUDED.billing_cycle").Exec(ctx); err != nil {
			return fmt.Errorf("save billing cycle: %w", err)
		}
		return writeAudit(ctx, tx, shop.AppID, actorID, action, "", fmt.Sprintf("%s: $%d.%02d %s", in.Name, in.Price/100, in.Price%100, strings.ToLower(in.Cycle)))
	})
	if err != nil {
		return nil, err
	}
	s.InvalidateLanding(ctx, shop.AppID)
	return it, nil
}

// ArchivePlan takes a plan off sale. Existing members keep it.
func (s *Storage) ArchivePlan(ctx context.Context, appID, actorID, itemID string) error {
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		it := new(StoreItem)
		if err := selectOne(ctx, tx.NewSelect().Model(it).Where("id = ? AND app_id = ? AND type = ?", itemID, appID, ItemSubscription), "plan"); err != nil {
			return err
		}
		if it.DeletedAt != nil {
			return nil
		}
		now := time.Now().UTC()
		if _, err := tx.NewUpdate().Model((*StoreItem)(nil)).Set("deleted_at = ?", now).Set("updated_at = ?", now).
			Where("id = ? AND deleted_at IS NULL", itemID).Exec(ctx); err != nil {
			return fmt.Errorf("archive plan: %w", err)
		}
		return writeAudit(ctx, tx, appID, actorID, "plan.archive", "", it.Name)
	})
	if err != nil {
		return err
	}
	s.InvalidateLanding(ctx, appID)
	return nil
}
