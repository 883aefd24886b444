package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Tiers (issue 40 item 1). An app's membership plans are ordered tiers: a
// SUBSCRIPTION store item (name, description, benefits in its settings, the
// default cycle's price) and its subscription_plans row (rank, state, the
// monthly and yearly prices, trial days). Following is the level below the
// first tier. Only an ON_SALE tier is offered or sold, by any path: the
// membership page, the plan checkout, the JSON API, a cart, a provider's
// late confirmation (ReadyToPay -> plansOnSale all use tierOnSaleSQL). A
// DRAFT is the creator's alone; an ARCHIVED tier is off sale (its item is
// soft-deleted so no store path shows it) and its members keep it, and it
// renews, until they leave. A member holds at most one tier per app: one
// subscriptions row per member and app (unique), whose plan_id is the tier.

// Tier states.
const (
	TierDraft    = "DRAFT"
	TierOnSale   = "ON_SALE"
	TierArchived = "ARCHIVED"
)

// tierOnSaleSQL is the one definition of "this tier can be bought", for a
// query joining its plan as p and its item as i.
const tierOnSaleSQL = "(p.state = 'ON_SALE' AND i.deleted_at IS NULL AND (p.monthly_price IS NOT NULL OR p.yearly_price IS NOT NULL))"

// PlanInput is the studio's tier form.
type PlanInput struct {
	Name, Description string
	Benefits          []string
	// MonthlyPrice and YearlyPrice in cents; nil when the tier has no
	// such cycle. At least one is needed to be on sale.
	MonthlyPrice, YearlyPrice *int64
	TrialDays                 int
	// TrialCardRequired: the trial needs a card (else any method, or none).
	TrialCardRequired bool
	// State is DRAFT, ON_SALE or ARCHIVED; empty keeps the tier's state
	// (a new tier, or a draft without prices until now, goes on sale).
	State string
}

// StudioPlan is a tier as the studio lists it.
type StudioPlan struct {
	// ID is the plan (tier) id; empty for an item-editor draft that has
	// no plan row yet.
	ID          string   `json:"id"`
	ItemID      string   `json:"itemId"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Benefits    []string `json:"benefits"`
	// Price is the default cycle's price (the item's).
	Price    int64  `json:"price"`
	Currency string `json:"currency"`
	// Cycle is the default cycle, MONTHLY or YEARLY; empty for a draft
	// without prices.
	Cycle             string `json:"cycle"`
	Archived          bool   `json:"archived"`
	Rank              int    `json:"rank"`
	State             string `json:"state" tstype:"'DRAFT' | 'ON_SALE' | 'ARCHIVED'"`
	MonthlyPrice      *int64 `json:"monthlyPrice"`
	YearlyPrice       *int64 `json:"yearlyPrice"`
	TrialDays         int    `json:"trialDays"`
	TrialCardRequired bool   `json:"trialCardRequired"`
	// Members is how many members hold the tier now (valid memberships).
	Members int `json:"members"`
}

type planSettings struct {
	Benefits []string `json:"benefits,omitempty"`
}

const maxPrice = 100_000_00

// CheckPlan validates a tier form. A price is what makes a tier sellable:
// an ON_SALE tier needs a monthly or a yearly one.
func CheckPlan(in PlanInput) error {
	n := utf8.RuneCountInString(strings.TrimSpace(in.Name))
	badPrice := func(p *int64) bool { return p != nil && (*p <= 0 || *p > maxPrice) }
	switch {
	case n < 1 || n > 80:
		return &ErrInvalid{Msg: "A plan name of 1 to 80 characters is required", Field: "name"}
	case badPrice(in.MonthlyPrice):
		return &ErrInvalid{Msg: "Price must be between $0.01 and $100,000", Field: "monthlyPrice"}
	case badPrice(in.YearlyPrice):
		return &ErrInvalid{Msg: "Price must be between $0.01 and $100,000", Field: "yearlyPrice"}
	case in.State != TierDraft && in.State != TierArchived && in.MonthlyPrice == nil && in.YearlyPrice == nil:
		return &ErrInvalid{Msg: "Choose a billing cycle: give a monthly or a yearly price (a tier without one cannot be published)", Field: "monthlyPrice"}
	case in.State != "" && in.State != TierDraft && in.State != TierOnSale && in.State != TierArchived:
		return &ErrInvalid{Msg: "State must be DRAFT, ON_SALE or ARCHIVED", Field: "state"}
	case in.TrialDays < 0 || in.TrialDays > 365:
		return &ErrInvalid{Msg: "A free trial lasts 0 to 365 days", Field: "trialDays"}
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

// defaultCycle is the cycle whose price is the item's: monthly when the
// tier has one.
func defaultCycle(monthly, yearly *int64) (string, int64) {
	switch {
	case monthly != nil:
		return CycleMonthly, *monthly
	case yearly != nil:
		return CycleYearly, *yearly
	}
	return "", 0
}

// StudioPlans lists every tier of the app in rank order, archived ones last
// (an item-editor draft without a plan row after the ranked ones).
func (s *Storage) StudioPlans(ctx context.Context, appID string) ([]StudioPlan, error) {
	var rows []struct {
		ID          string     `bun:"id"`
		PlanID      *string    `bun:"plan_id"`
		Name        string     `bun:"name"`
		Description string     `bun:"description"`
		Price       int64      `bun:"price"`
		Currency    string     `bun:"currency"`
		Settings    string     `bun:"settings"`
		DeletedAt   *time.Time `bun:"deleted_at"`
		Cycle       *string    `bun:"billing_cycle"`
		Rank        *int       `bun:"tier_rank"`
		State       *string    `bun:"state"`
		Monthly     *int64     `bun:"monthly_price"`
		Yearly      *int64     `bun:"yearly_price"`
		TrialDays   *int       `bun:"trial_days"`
		CardNeeded  *bool      `bun:"trial_card_required"`
		Members     int        `bun:"members"`
	}
	now := time.Now().UTC()
	err := s.db.NewSelect().TableExpr("store_items AS i").
		Join("LEFT JOIN subscription_plans AS p ON p.store_item_id = i.id").
		ColumnExpr("i.id, p.id AS plan_id, i.name, i.description, i.price, i.currency, i.settings, i.deleted_at").
		ColumnExpr("p.billing_cycle, p.tier_rank, p.state, p.monthly_price, p.yearly_price, p.trial_days, p.trial_card_required").
		ColumnExpr(`(SELECT COUNT(*) FROM subscriptions AS s WHERE s.plan_id = p.id AND (
			(s.status = ? AND s.current_period_end > ?) OR (s.status = ? AND s.grace_until > ?))) AS members`,
			SubActive, now, SubPastDue, now).
		Where("i.app_id = ? AND i.type = ?", appID, ItemSubscription).
		OrderExpr("i.deleted_at IS NOT NULL, p.id IS NULL, p.tier_rank ASC, i.price ASC, i.id ASC").Scan(ctx, &rows)
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
			Currency: r.Currency, Archived: r.DeletedAt != nil, Members: r.Members, State: TierDraft,
			MonthlyPrice: r.Monthly, YearlyPrice: r.Yearly}
		if r.PlanID != nil {
			p.ID, p.Cycle, p.Rank, p.State, p.TrialDays = *r.PlanID, derefOr(r.Cycle), *r.Rank, *r.State, *r.TrialDays
			p.TrialCardRequired = r.CardNeeded != nil && *r.CardNeeded
		}
		if p.Archived {
			p.State = TierArchived
		}
		out = append(out, p)
	}
	return out, nil
}

// lockTiers makes SQLite writers of one app's tiers queue up front, so two
// rank changes never read the same order.
func lockTiers(ctx context.Context, tx bun.Tx) error {
	if tx.Dialect().Name() == dialect.SQLite {
		if _, err := tx.ExecContext(ctx, "UPDATE subscription_plans SET tier_rank = tier_rank WHERE 0"); err != nil {
			return fmt.Errorf("lock tiers: %w", err)
		}
	}
	return nil
}

// SavePlan creates (itemID empty) or edits a tier: its item and plan row in
// one transaction. A new tier goes last in rank order. An item-editor draft
// (no plan row yet) becomes a tier.
func (s *Storage) SavePlan(ctx context.Context, shop *Shop, actorID, itemID string, in PlanInput) (*StoreItem, error) {
	in.Name = strings.TrimSpace(in.Name)
	benefits := []string{}
	for _, b := range in.Benefits {
		if b = strings.TrimSpace(b); b != "" {
			benefits = append(benefits, b)
		}
	}
	in.Benefits = benefits
	settings, _ := json.Marshal(planSettings{Benefits: in.Benefits})
	now := time.Now().UTC()
	it := &StoreItem{ID: itemID, AppID: shop.AppID, StoreID: shop.ID}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, shop.AppID)
		if err := lockTiers(ctx, tx); err != nil {
			return err
		}
		var cur *SubscriptionPlan
		if itemID != "" {
			if err := selectOne(ctx, tx.NewSelect().Model(it).
				Where("id = ? AND app_id = ? AND type = ?", itemID, shop.AppID, ItemSubscription), "plan"); err != nil {
				return err
			}
			if p, err := planOfItem(ctx, tx, it.ID); err == nil {
				cur = p
			}
			if in.State == "" {
				in.State = TierOnSale
				if cur != nil && (cur.MonthlyPrice != nil || cur.YearlyPrice != nil) {
					in.State = cur.State
				}
				if it.DeletedAt != nil {
					in.State = TierArchived
				}
			}
		} else if in.State == "" {
			in.State = TierOnSale
		}
		if err := CheckPlan(in); err != nil {
			return err
		}
		cycle, price := defaultCycle(in.MonthlyPrice, in.YearlyPrice)
		if cycle == "" && cur != nil {
			cycle, price = cur.BillingCycle, it.Price
		}
		action := "plan.update"
		var deletedAt *time.Time
		if in.State == TierArchived {
			deletedAt = &now
			if it.DeletedAt != nil {
				deletedAt = it.DeletedAt
			}
		}
		if itemID == "" {
			action = "plan.create"
			it.ID, it.Type, it.Currency, it.CreatedAt, it.UpdatedAt = NewID(), ItemSubscription, shop.Currency, now, now
			it.Name, it.Description, it.Price, it.Settings, it.DeletedAt = in.Name, in.Description, price, string(settings), deletedAt
			if _, err := tx.NewInsert().Model(it).Exec(ctx); err != nil {
				return fmt.Errorf("insert plan item: %w", err)
			}
		} else {
			it.Name, it.Description, it.Price, it.Settings, it.UpdatedAt, it.DeletedAt = in.Name, in.Description, price, string(settings), now, deletedAt
			if _, err := tx.NewUpdate().Model(it).Column("name", "description", "price", "settings", "updated_at", "deleted_at").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("update plan item: %w", err)
			}
		}
		plan := &SubscriptionPlan{ID: NewID(), AppID: shop.AppID, StoreItemID: it.ID, BillingCycle: cycle, State: in.State,
			MonthlyPrice: in.MonthlyPrice, YearlyPrice: in.YearlyPrice, TrialDays: in.TrialDays,
			TrialCardRequired: in.TrialCardRequired}
		if cur != nil {
			plan.ID, plan.Rank = cur.ID, cur.Rank
			if _, err := tx.NewUpdate().Model(plan).Column("billing_cycle", "state", "monthly_price", "yearly_price", "trial_days", "trial_card_required").
				WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("save tier: %w", err)
			}
		} else {
			var top int
			if err := tx.NewSelect().Model((*SubscriptionPlan)(nil)).ColumnExpr("COALESCE(MAX(tier_rank), 0)").
				Where("app_id = ?", shop.AppID).Scan(ctx, &top); err != nil {
				return fmt.Errorf("last tier: %w", err)
			}
			plan.Rank = top + 1
			if _, err := tx.NewInsert().Model(plan).Exec(ctx); err != nil {
				return fmt.Errorf("insert tier: %w", err)
			}
		}
		return writeAudit(ctx, tx, shop.AppID, actorID, action, "", fmt.Sprintf("%s: %s %s", in.Name, strings.ToLower(in.State), tierPrices(in.MonthlyPrice, in.YearlyPrice)))
	})
	if err != nil {
		return nil, err
	}
	return it, nil
}

func tierPrices(monthly, yearly *int64) string {
	var parts []string
	if monthly != nil {
		parts = append(parts, fmt.Sprintf("$%d.%02d monthly", *monthly/100, *monthly%100))
	}
	if yearly != nil {
		parts = append(parts, fmt.Sprintf("$%d.%02d yearly", *yearly/100, *yearly%100))
	}
	return strings.Join(parts, ", ")
}

// SetTierState moves a tier between DRAFT, ON_SALE and ARCHIVED. Archiving
// takes it off sale (its item leaves every store path); its members keep
// it. Going on sale needs a price.
func (s *Storage) SetTierState(ctx context.Context, appID, actorID, itemID, state string) error {
	if state != TierDraft && state != TierOnSale && state != TierArchived {
		return &ErrInvalid{Msg: "State must be DRAFT, ON_SALE or ARCHIVED", Field: "state"}
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID)
		it := new(StoreItem)
		if err := selectOne(ctx, tx.NewSelect().Model(it).Where("id = ? AND app_id = ? AND type = ?", itemID, appID, ItemSubscription), "plan"); err != nil {
			return err
		}
		plan, err := planOfItem(ctx, tx, itemID)
		if err != nil {
			if state == TierArchived && it.DeletedAt == nil {
				plan = nil // an item-editor draft is archived as an item
			} else if state != TierArchived {
				return &ErrInvalid{Msg: "Choose a billing cycle: give a monthly or a yearly price (a tier without one cannot be published)", Field: "monthlyPrice"}
			} else {
				return nil
			}
		}
		if plan != nil && plan.State == state && (state == TierArchived) == (it.DeletedAt != nil) {
			return nil
		}
		if state == TierOnSale && plan.MonthlyPrice == nil && plan.YearlyPrice == nil {
			return &ErrInvalid{Msg: "Choose a billing cycle: give a monthly or a yearly price (a tier without one cannot be published)", Field: "monthlyPrice"}
		}
		now := time.Now().UTC()
		var deletedAt *time.Time
		if state == TierArchived {
			deletedAt = &now
		}
		if _, err := tx.NewUpdate().Model((*StoreItem)(nil)).Set("deleted_at = ?", deletedAt).Set("updated_at = ?", now).
			Where("id = ?", itemID).Exec(ctx); err != nil {
			return fmt.Errorf("set tier item state: %w", err)
		}
		if plan != nil {
			if _, err := tx.NewUpdate().Model((*SubscriptionPlan)(nil)).Set("state = ?", state).Where("id = ?", plan.ID).Exec(ctx); err != nil {
				return fmt.Errorf("set tier state: %w", err)
			}
		}
		action := "plan.state"
		if state == TierArchived {
			action = "plan.archive"
		}
		return writeAudit(ctx, tx, appID, actorID, action, "", it.Name+": "+strings.ToLower(state))
	})
	if err != nil {
		return err
	}
	return nil
}

// ArchivePlan takes a tier off sale. Existing members keep it.
func (s *Storage) ArchivePlan(ctx context.Context, appID, actorID, itemID string) error {
	return s.SetTierState(ctx, appID, actorID, itemID, TierArchived)
}

// MoveTier swaps a tier with its neighbour in rank order (up: towards the
// first tier). Ranks are renumbered 1..n first, so gaps and ties from older
// data sort out.
func (s *Storage) MoveTier(ctx context.Context, appID, actorID, itemID string, up bool) error {
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID)
		if err := lockTiers(ctx, tx); err != nil {
			return err
		}
		var plans []SubscriptionPlan
		q := tx.NewSelect().Model(&plans).Where("app_id = ?", appID).OrderExpr("tier_rank ASC, id ASC")
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return fmt.Errorf("load tiers: %w", err)
		}
		at := -1
		for i := range plans {
			if plans[i].StoreItemID == itemID {
				at = i
			}
		}
		if at < 0 {
			return ErrNotFound
		}
		to := at + 1
		if up {
			to = at - 1
		}
		if to >= 0 && to < len(plans) {
			plans[at], plans[to] = plans[to], plans[at]
		}
		for i := range plans {
			if plans[i].Rank == i+1 {
				continue
			}
			if _, err := tx.NewUpdate().Model((*SubscriptionPlan)(nil)).Set("tier_rank = ?", i+1).Where("id = ?", plans[i].ID).Exec(ctx); err != nil {
				return fmt.Errorf("rank tier: %w", err)
			}
		}
		return writeAudit(ctx, tx, appID, actorID, "plan.rank", "", itemID)
	})
	if err != nil {
		return err
	}
	return nil
}

// Tier is a tier as members see it (the membership page, GET
// /api/memberships/apps/{appId}/tiers).
type Tier struct {
	ID           string   `json:"id"`
	ItemID       string   `json:"itemId"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Benefits     []string `json:"benefits"`
	Rank         int      `json:"rank"`
	State        string   `json:"state" tstype:"'DRAFT' | 'ON_SALE' | 'ARCHIVED'"`
	Currency     string   `json:"currency"`
	MonthlyPrice *int64   `json:"monthlyPrice"`
	YearlyPrice  *int64   `json:"yearlyPrice"`
	// YearlySaving is what paying yearly saves against twelve months, in
	// cents (0 unless both prices are set and yearly is cheaper), and
	// YearlySavingPercent the same rounded to a whole percent.
	YearlySaving        int64 `json:"yearlySaving"`
	YearlySavingPercent int   `json:"yearlySavingPercent"`
	TrialDays           int   `json:"trialDays"`
	// TrialCardRequired: the trial starts only with a card.
	TrialCardRequired bool `json:"trialCardRequired"`
}

func yearlySaving(monthly, yearly *int64) (int64, int) {
	if monthly == nil || yearly == nil || *monthly <= 0 {
		return 0, 0
	}
	twelve := *monthly * 12
	if *yearly >= twelve {
		return 0, 0
	}
	save := twelve - *yearly
	return save, int((save*100 + twelve/2) / twelve)
}

// tierRow scans a tier joined from subscription_plans p and store_items i.
type tierRow struct {
	ID          string `bun:"id"`
	ItemID      string `bun:"item_id"`
	Name        string `bun:"name"`
	Description string `bun:"description"`
	Settings    string `bun:"settings"`
	Rank        int    `bun:"tier_rank"`
	State       string `bun:"state"`
	Currency    string `bun:"currency"`
	Monthly     *int64 `bun:"monthly_price"`
	Yearly      *int64 `bun:"yearly_price"`
	TrialDays   int    `bun:"trial_days"`
	CardNeeded  bool   `bun:"trial_card_required"`
	Deleted     bool   `bun:"deleted"`
}

func (r tierRow) tier() Tier {
	var ps planSettings
	_ = json.Unmarshal([]byte(r.Settings), &ps)
	if ps.Benefits == nil {
		ps.Benefits = []string{}
	}
	t := Tier{ID: r.ID, ItemID: r.ItemID, Name: r.Name, Description: r.Description, Benefits: ps.Benefits, Rank: r.Rank,
		State: r.State, Currency: r.Currency, MonthlyPrice: r.Monthly, YearlyPrice: r.Yearly, TrialDays: r.TrialDays,
		TrialCardRequired: r.CardNeeded}
	if r.Deleted {
		t.State = TierArchived
	}
	t.YearlySaving, t.YearlySavingPercent = yearlySaving(r.Monthly, r.Yearly)
	return t
}

func tierQuery(db bun.IDB) *bun.SelectQuery {
	return db.NewSelect().TableExpr("subscription_plans AS p").Join("JOIN store_items AS i ON i.id = p.store_item_id").
		ColumnExpr("p.id, i.id AS item_id, i.name, i.description, i.settings, p.tier_rank, p.state, i.currency").
		ColumnExpr("p.monthly_price, p.yearly_price, p.trial_days, p.trial_card_required, i.deleted_at IS NOT NULL AS deleted")
}

// Tiers lists the app's tiers on sale, in rank order: what anyone may see
// and buy.
func (s *Storage) Tiers(ctx context.Context, appID string) ([]Tier, error) {
	var rows []tierRow
	if err := tierQuery(s.db).Where("p.app_id = ?", appID).Where(tierOnSaleSQL).
		OrderExpr("p.tier_rank ASC, i.price ASC, p.id ASC").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load tiers: %w", err)
	}
	out := make([]Tier, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.tier())
	}
	return out, nil
}

// TierByPlan answers one tier whatever its state (a member's own tier may
// be archived), or ErrNotFound.
func (s *Storage) TierByPlan(ctx context.Context, appID, planID string) (*Tier, error) {
	var rows []tierRow
	if err := tierQuery(s.db).Where("p.app_id = ? AND p.id = ?", appID, planID).Limit(1).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load tier: %w", err)
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	t := rows[0].tier()
	return &t, nil
}

// tierOnSale answers the tier of itemID if it can be bought now, else
// ErrNotFound: drafts and archived tiers are never found by a buyer.
func tierOnSale(ctx context.Context, db bun.IDB, appID, itemID string) (*tierRow, error) {
	var rows []tierRow
	if err := tierQuery(db).Where("p.app_id = ? AND i.id = ? AND i.type = ?", appID, itemID, ItemSubscription).
		Where(tierOnSaleSQL).Limit(1).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load tier: %w", err)
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

// price answers what one period of the tier costs in cycle (empty: the
// tier's default cycle) and the cycle, or an error when the tier has no
// such cycle.
func (r *tierRow) price(cycle string) (string, int64, error) {
	switch cycle {
	case "":
		c, p := defaultCycle(r.Monthly, r.Yearly)
		return c, p, nil
	case CycleMonthly:
		if r.Monthly != nil {
			return cycle, *r.Monthly, nil
		}
	case CycleYearly:
		if r.Yearly != nil {
			return cycle, *r.Yearly, nil
		}
	}
	return "", 0, &ErrInvalid{Msg: "This tier has no " + strings.ToLower(cycle) + " price", Field: "cycle"}
}
