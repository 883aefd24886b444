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
	err := s.DB.NewSelect().Model(m).Where("app_id = ? AND user_id = ?", appID, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load membership: %w", err)
	}
	return m, nil
}

// HasValidSubscription reports whether the user has an active, unexpired
// subscription in the app.
func (s *Storage) HasValidSubscription(ctx context.Context, appID, userID string, now time.Time) (bool, error) {
	n, err := s.DB.NewSelect().Model((*Subscription)(nil)).
		Where("app_id = ? AND user_id = ? AND status = ? AND current_period_end > ?", appID, userID, "ACTIVE", now).
		Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check subscription: %w", err)
	}
	return n > 0, nil
}
