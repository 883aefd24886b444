package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// MemberFilter is the studio's member list query.
type MemberFilter struct {
	Query, Role string
	// Tier keeps the members holding that tier (a membership active or
	// in its grace, paid or given).
	Tier        string
	Page, Limit int
}

// StudioMember is one member as the studio lists them.
type StudioMember struct {
	UserID   string    `json:"userId"`
	Username string    `json:"username"`
	Email    string    `json:"email"`
	Role     string    `json:"role" tstype:"Role"`
	JoinedAt time.Time `json:"joinedAt"`
	// Plan is the name of the member's membership plan and PlanStatus its
	// status (ACTIVE, PAST_DUE, CANCELED, EXPIRED); empty without one.
	Plan       string `json:"plan"`
	PlanStatus string `json:"planStatus"`
	// Gift: the membership is complimentary (GiveComplimentary).
	Gift bool `json:"gift"`
	// DonorTier is the achievement tier their paid donations reach.
	DonorTier string `json:"donorTier"`
	Donated   int64  `json:"donated"`
}

// StudioMembers lists the app's members, newest first, filtered by a
// search of username or email and by role.
func (s *Storage) StudioMembers(ctx context.Context, appID string, f MemberFilter) ([]StudioMember, Pagination, error) {
	page, limit := ClampPage(f.Page, f.Limit)
	q := s.db.NewSelect().TableExpr("memberships AS m").Join("JOIN users AS u ON u.id = m.user_id").
		Where("m.app_id = ?", appID)
	if f.Role != "" {
		q = q.Where("m.role = ?", f.Role)
	}
	if f.Tier != "" {
		q = q.Where("EXISTS (SELECT 1 FROM subscriptions AS ts WHERE ts.app_id = m.app_id AND ts.user_id = m.user_id AND ts.plan_id = ? AND ts.status IN (?))",
			f.Tier, bun.List([]string{SubActive, SubPastDue}))
	}
	if t := strings.ToLower(strings.TrimSpace(f.Query)); t != "" {
		like := "%" + escapeLike(t) + "%"
		q = q.Where("(LOWER(u.username) LIKE ? ESCAPE '\\' OR LOWER(u.email) LIKE ? ESCAPE '\\')", like, like)
	}
	total, err := q.Count(ctx)
	if err != nil {
		return nil, Pagination{}, fmt.Errorf("count members: %w", err)
	}
	out := []StudioMember{}
	err = q.ColumnExpr("u.id AS user_id, u.username, u.email, m.role, m.created_at AS joined_at").
		OrderExpr("m.created_at DESC, u.id ASC").Limit(int64(limit)).Offset(int64((page-1)*limit)).Scan(ctx, &out)
	if err != nil {
		return nil, Pagination{}, fmt.Errorf("list members: %w", err)
	}
	ids := make([]string, 0, len(out))
	for _, m := range out {
		ids = append(ids, m.UserID)
	}
	if len(ids) > 0 {
		var subs []struct {
			UserID   string `bun:"user_id"`
			Status   string `bun:"status"`
			Name     string `bun:"name"`
			Provider string `bun:"provider"`
		}
		if err := s.db.NewSelect().TableExpr("subscriptions AS s").
			Join("JOIN subscription_plans AS p ON p.id = s.plan_id").Join("JOIN store_items AS i ON i.id = p.store_item_id").
			ColumnExpr("s.user_id, s.status, i.name, s.provider").Where("s.app_id = ? AND s.user_id IN (?)", appID, bun.List(ids)).
			Scan(ctx, &subs); err != nil {
			return nil, Pagination{}, fmt.Errorf("load memberships: %w", err)
		}
		badges, totals, err := s.DonorBadges(ctx, appID, ids)
		if err != nil {
			return nil, Pagination{}, err
		}
		for i := range out {
			m := &out[i]
			for _, sub := range subs {
				if sub.UserID == m.UserID {
					m.Plan, m.PlanStatus, m.Gift = sub.Name, sub.Status, sub.Provider == CompProvider
				}
			}
			if t := badges[m.UserID]; t != nil {
				m.DonorTier = t.Name
			}
			m.Donated = totals[m.UserID]
		}
	}
	return out, NewPagination(page, limit, int(total)), nil
}

// ChangeMemberRole moves a member from the role the change was decided on
// to another (NONE removes them). The update is conditional on that role:
// of concurrent changes only those that find it happen, and each writes one
// audit line.
func (s *Storage) ChangeMemberRole(ctx context.Context, appID, actorID, userID, from, to string) error {
	if to != "NONE" && !IsMembershipRole(to) {
		return &ErrInvalid{Msg: "Unknown role " + to, Field: "role"}
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID) // the landing counts members
		var n int64
		action, detail := "member.role", from+" → "+to
		if to == "NONE" {
			res, err := tx.NewDelete().Model((*Membership)(nil)).Where("app_id = ? AND user_id = ? AND role = ?", appID, userID, from).Exec(ctx)
			if err != nil {
				return fmt.Errorf("remove member: %w", err)
			}
			n, _ = res.RowsAffected()
			action, detail = "member.remove", "Removed ("+from+")"
			if n == 1 {
				if err := endMembershipOfRemoved(ctx, tx, appID, userID); err != nil {
					return err
				}
			}
		} else {
			res, err := tx.NewUpdate().Model((*Membership)(nil)).Set("role = ?", to).
				Where("app_id = ? AND user_id = ? AND role = ?", appID, userID, from).Exec(ctx)
			if err != nil {
				return fmt.Errorf("change role: %w", err)
			}
			n, _ = res.RowsAffected()
		}
		if n != 1 {
			return ErrRoleChanged
		}
		if err := recordRole(ctx, tx, appID, userID); err != nil {
			return err
		}
		return writeAudit(ctx, tx, appID, actorID, action, userID, detail)
	})
	if err != nil {
		return err
	}
	return nil
}

// endMembershipOfRemoved ends, now, the paid membership of a member removed
// from the app: their access ends with their place, nothing renews it (the
// renewal job and the gate only look at ACTIVE and PAST_DUE memberships),
// and they are told.
func endMembershipOfRemoved(ctx context.Context, tx bun.Tx, appID, userID string) error {
	if err := lockSubscriptions(ctx, tx); err != nil {
		return err
	}
	cur, err := subscriptionForUpdate(ctx, tx, "app_id = ? AND user_id = ? AND status IN (?)", appID, userID,
		bun.List([]string{SubActive, SubPastDue}))
	if err != nil || cur == nil {
		return err
	}
	now := time.Now().UTC()
	cur.Status, cur.EndedAt, cur.CancelAtPeriodEnd = SubCanceled, &now, true
	if _, err := tx.NewUpdate().Model(cur).WherePK().Column("status", "ended_at", "cancel_at_period_end").Exec(ctx); err != nil {
		return fmt.Errorf("end removed member's membership: %w", err)
	}
	return membershipMessages(ctx, tx, membershipNote{Event: MembershipEnded, Sub: cur, Reason: "You are no longer a member of this app."})
}
