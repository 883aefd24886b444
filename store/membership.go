package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
