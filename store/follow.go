package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Follow makes the user a FOLLOWER of the app unless they already hold a
// membership (a higher role is never lowered). It returns the role the user
// holds afterwards; repeating it changes nothing.
func (s *Storage) Follow(ctx context.Context, appID, userID string) (string, error) {
	app := new(App)
	if err := selectOne(ctx, s.db.NewSelect().Model(app).Column("settings").Where("id = ?", appID), "app"); err != nil {
		return "", fmt.Errorf("follow app %s: %w", appID, err)
	}
	welcome := app.Settings.Wallet.WelcomeCredit
	m := &Membership{ID: NewID(), AppID: appID, UserID: userID, Role: RoleFollower}
	var n int64
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewInsert().Model(m).On("CONFLICT (app_id, user_id) DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("follow app %s: %w", appID, err)
		}
		n, _ = res.RowsAffected()
		if err := recordRole(ctx, tx, appID, userID); err != nil {
			return err
		}
		if n == 0 || welcome <= 0 {
			return nil
		}
		// A new member's welcome credit, in the transaction that makes
		// them a member: once per member and app (the reference).
		_, _, err = TransferTx(ctx, tx, TransferInput{AppID: appID, Reference: "welcome:" + userID, Kind: TransferCredit,
			From: OutsideMoney, To: Member(userID), Amount: welcome, Memo: "Welcome credit"})
		return err
	})
	if err != nil {
		return "", err
	}
	cur, err := s.MembershipOf(ctx, appID, userID)
	if err != nil {
		return "", err
	}
	if cur == nil {
		return "", fmt.Errorf("follow app %s: membership missing after insert", appID)
	}
	return cur.Role, nil
}

// Unfollow removes a FOLLOWER membership and the user's push subscriptions in
// the app (SPEC.md section 4: unfollowing drops push). Only FOLLOWER rows are
// deleted, so a concurrent promotion is never undone; the caller checks
// access.CanUnfollow first to answer higher roles with a clear refusal.
func (s *Storage) Unfollow(ctx context.Context, appID, userID string) error {
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Model((*Membership)(nil)).
			Where("app_id = ? AND user_id = ? AND role = ?", appID, userID, RoleFollower).Exec(ctx); err != nil {
			return fmt.Errorf("unfollow app %s: %w", appID, err)
		}
		if err := recordRole(ctx, tx, appID, userID); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*PushSubscription)(nil)).
			Where("app_id = ? AND user_id = ?", appID, userID).Exec(ctx); err != nil {
			return fmt.Errorf("drop push subscriptions of app %s: %w", appID, err)
		}
		return nil
	})
	return err
}
