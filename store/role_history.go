package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// RoleChange is one line of an app's role history: the member's role after
// the change (empty when they left, were removed or banned) and before it
// (empty when they joined). Every write to memberships records its change
// here, in its own transaction, through recordRole.
type RoleChange struct {
	bun.BaseModel `bun:"table:role_changes"`

	ID       string `bun:",pk"`
	AppID    string `bun:",notnull"`
	UserID   string `bun:",notnull"`
	Role     string `bun:",notnull,default:''"`
	Previous string `bun:",notnull,default:''"`
	// TierID is the tier the member pays for after the change ('' when
	// not paying: no paid membership, a gift or a free trial).
	TierID    string    `bun:",notnull,default:''"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
}

// paidTierSQL is the tier member ?1 of app ?0 pays for now (NULL when
// none): a paid membership (active or in its grace), not a gift, not in a
// free trial.
const paidTierSQL = `(SELECT s.plan_id FROM subscriptions AS s WHERE s.app_id = ?0 AND s.user_id = ?1
	AND s.status IN ('ACTIVE', 'PAST_DUE') AND s.amount > 0 AND s.provider <> 'COMP' AND s.trial_until IS NULL LIMIT 1)`

// recordRole writes the member's role change, if any, to the history: it
// compares the membership (and the tier paid for) as the transaction now
// sees it with the last recorded line and adds a line when they differ. Called after every write
// to memberships, in that write's transaction (which holds the membership's
// row, so changes of one member are recorded in their order). Repeating it
// records nothing.
func recordRole(ctx context.Context, tx bun.IDB, appID, userID string) error {
	memberChanged(ctx, appID, userID)
	// One statement, so one snapshot: the membership and the last line as
	// of the same moment (a change that committed in between would otherwise
	// be seen on one side only).
	var now struct {
		Role     string  `bun:"role"`
		Tier     string  `bun:"tier"`
		LastID   *string `bun:"last_id"`
		LastRole string  `bun:"last_role"`
		LastTier string  `bun:"last_tier"`
	}
	last := "(SELECT %s FROM role_changes AS c WHERE c.app_id = ?0 AND c.user_id = ?1 ORDER BY c.created_at DESC LIMIT 1)"
	if err := tx.NewRaw("SELECT COALESCE((SELECT m.role FROM memberships AS m WHERE m.app_id = ?0 AND m.user_id = ?1), '') AS role, "+
		"COALESCE("+paidTierSQL+", '') AS tier, "+
		fmt.Sprintf(last, "c.id")+" AS last_id, COALESCE("+fmt.Sprintf(last, "c.role")+", '') AS last_role, "+
		"COALESCE("+fmt.Sprintf(last, "c.tier_id")+", '') AS last_tier", appID, userID).
		Scan(ctx, &now); err != nil {
		return fmt.Errorf("role history: load role: %w", err)
	}
	if now.Role == "" {
		now.Tier = "" // gone from the app: paying for nothing here
	}
	if now.Role == now.LastRole && now.Tier == now.LastTier {
		return nil
	}
	// Changes of one member keep their order even within a clock tick.
	at := time.Now().UTC().Truncate(time.Microsecond)
	if now.LastID != nil {
		prev := new(RoleChange)
		if err := tx.NewSelect().Model(prev).Where("id = ?", *now.LastID).Scan(ctx); err != nil {
			return fmt.Errorf("role history: load last change: %w", err)
		}
		if !at.After(prev.CreatedAt) {
			at = prev.CreatedAt.Add(time.Microsecond)
		}
	}
	ch := &RoleChange{ID: NewID(), AppID: appID, UserID: userID, Role: now.Role, Previous: now.LastRole, TierID: now.Tier, CreatedAt: at}
	if _, err := tx.NewInsert().Model(ch).Exec(ctx); err != nil {
		return fmt.Errorf("role history: record: %w", err)
	}
	return nil
}

// RecordJoins adds a join at its created_at for every membership of the app
// that has no history yet (the seeders, which write memberships directly,
// call it).
func RecordJoins(ctx context.Context, db bun.IDB, appID string) error {
	var ms []Membership
	if err := db.NewSelect().Model(&ms).Where("app_id = ?", appID).
		Where("NOT EXISTS (SELECT 1 FROM role_changes AS c WHERE c.app_id = membership.app_id AND c.user_id = membership.user_id)").
		Scan(ctx); err != nil {
		return fmt.Errorf("record joins: %w", err)
	}
	for _, m := range ms {
		var tier string
		if err := db.NewRaw("SELECT COALESCE("+paidTierSQL+", '')", m.AppID, m.UserID).Scan(ctx, &tier); err != nil {
			return fmt.Errorf("record join: load tier: %w", err)
		}
		ch := &RoleChange{ID: NewID(), AppID: m.AppID, UserID: m.UserID, Role: m.Role, TierID: tier, CreatedAt: m.CreatedAt}
		if _, err := db.NewInsert().Model(ch).Exec(ctx); err != nil {
			return fmt.Errorf("record join: %w", err)
		}
	}
	return nil
}

// RoleHistory lists the app's role changes, oldest first (tests and the
// analytics read it).
func (s *Storage) RoleHistory(ctx context.Context, appID string) ([]RoleChange, error) {
	var out []RoleChange
	if err := s.db.NewSelect().Model(&out).Where("app_id = ?", appID).OrderExpr("created_at ASC, id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("role history: %w", err)
	}
	return out, nil
}
