package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MembershipOf returns the user's membership in the app, or nil.
func (s *Storage) MembershipOf(ctx context.Context, appID, userID string) (*Membership, error) {
	m := new(Membership)
	err := s.db.NewSelect().Model(m).Where("app_id = ? AND user_id = ?", appID, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load membership: %w", err)
	}
	return m, nil
}

// StandingOf is MembershipOf and BanOf in one round trip: every signed-in
// request to an app asks both (scopes, access), and on a popular app each
// round trip is a share of what members wait for.
func (s *Storage) StandingOf(ctx context.Context, appID, userID, email string, now time.Time) (*Membership, *Ban, error) {
	var row struct {
		MID        *string    `bun:"m_id"`
		MRole      *string    `bun:"m_role"`
		MCreatedAt *time.Time `bun:"m_created_at"`
		BID        *string    `bun:"b_id"`
		BUserID    *string    `bun:"b_user_id"`
		BEmail     *string    `bun:"b_email"`
		BKind      *string    `bun:"b_kind"`
		BReason    *string    `bun:"b_reason"`
		BEndsAt    *time.Time `bun:"b_ends_at"`
		BCreatedBy *string    `bun:"b_created_by"`
		BCreatedAt *time.Time `bun:"b_created_at"`
	}
	// The ban in force, by account or by normalised e-mail (an empty one
	// matches no ban by e-mail); a ban outweighs a silence.
	if email != "" {
		email = BanEmailKey(email)
	}
	err := s.db.NewRaw(`SELECT m.id AS m_id, m.role AS m_role, m.created_at AS m_created_at,
	b.id AS b_id, b.user_id AS b_user_id, b.email AS b_email, b.kind AS b_kind, b.reason AS b_reason,
	b.ends_at AS b_ends_at, b.created_by AS b_created_by, b.created_at AS b_created_at
FROM (SELECT 1 AS one) AS v
LEFT JOIN memberships AS m ON m.app_id = ? AND m.user_id = ?
LEFT JOIN bans AS b ON b.id = (SELECT id FROM bans WHERE app_id = ? AND (user_id = ? OR (? <> '' AND email = ?))
	AND (ends_at IS NULL OR ends_at > ?) ORDER BY CASE WHEN kind = 'BAN' THEN 0 ELSE 1 END LIMIT 1)`,
		appID, userID, appID, userID, email, email, now.UTC()).Scan(ctx, &row)
	if err != nil {
		return nil, nil, fmt.Errorf("load membership and ban: %w", err)
	}
	var m *Membership
	if row.MID != nil {
		m = &Membership{ID: *row.MID, AppID: appID, UserID: userID, Role: derefOr(row.MRole)}
		if row.MCreatedAt != nil {
			m.CreatedAt = *row.MCreatedAt
		}
	}
	var b *Ban
	if row.BID != nil {
		b = &Ban{ID: *row.BID, AppID: appID, UserID: derefOr(row.BUserID), Email: derefOr(row.BEmail), Kind: derefOr(row.BKind),
			Reason: derefOr(row.BReason), EndsAt: row.BEndsAt, CreatedBy: derefOr(row.BCreatedBy)}
		if row.BCreatedAt != nil {
			b.CreatedAt = *row.BCreatedAt
		}
	}
	return m, b, nil
}
