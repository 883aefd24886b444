package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AccountUser is the signed-in user as GET /api/auth/me returns it (SPEC.md
// section 3): email nested, profilePicture null without a picture.
type AccountUser struct {
	ID             string          `json:"id"`
	Username       string          `json:"username"`
	Email          AccountEmail    `json:"email"`
	EmailVerified  bool            `json:"emailVerified"`
	CreatedAt      time.Time       `json:"createdAt"`
	ProfilePicture *ProfilePicture `json:"profilePicture"`
	Media          *ProfilePicture `json:"media"`
}

type AccountEmail struct {
	Email string `json:"email"`
}

type ProfilePicture struct {
	SignedURL string    `json:"signedUrl"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// AccountUserOf builds the API view of u, signing the profile picture URL.
// A picture that fails to load is left out rather than failing the call.
func (s *Storage) AccountUserOf(ctx context.Context, u *User) AccountUser {
	out := AccountUser{ID: u.ID, Username: u.Username, Email: AccountEmail{Email: u.Email},
		EmailVerified: u.EmailVerified, CreatedAt: u.CreatedAt}
	if u.ProfileMediaID != nil {
		if m, err := s.MediaByID(ctx, *u.ProfileMediaID); err == nil {
			out.ProfilePicture = &ProfilePicture{SignedURL: m.SignedURL, UpdatedAt: m.CreatedAt}
			out.Media = out.ProfilePicture
		} else if !errors.Is(err, ErrNotFound) {
			s.logger.Warn("profile picture", "user", u.ID, "err", err)
		}
	}
	return out
}

// Device is one push subscription of the user; keys stay on the server.
type Device struct {
	ID        string    `json:"id"`
	Endpoint  string    `json:"endpoint"`
	CreatedAt time.Time `json:"createdAt"`
}

// AppMembership is a membership with the app it belongs to.
type AppMembership struct {
	ID        string        `json:"id"`
	Role      string        `json:"role"`
	App       MembershipApp `json:"app"`
	CreatedAt time.Time     `json:"createdAt"`
}

type MembershipApp struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SubscriptionStatus is subscription.status of GET /api/auth/me?appId=.
// Status is NONE without a membership, else the row's status (ACTIVE,
// PAST_DUE, CANCELED, EXPIRED); hasValidSubscription is what the gate uses.
type SubscriptionStatus struct {
	HasValidSubscription bool                  `json:"hasValidSubscription"`
	Status               string                `json:"status" tstype:"'NONE' | 'ACTIVE' | 'PAST_DUE' | 'CANCELED' | 'EXPIRED'"`
	CurrentPeriodEnd     *time.Time            `json:"currentPeriodEnd"`
	CancelAtPeriodEnd    bool                  `json:"cancelAtPeriodEnd"`
	GraceUntil           *time.Time            `json:"graceUntil"`
	PlanID               *string               `json:"planId"`
	Plan                 *SubscriptionPlanView `json:"plan"`
	// TrialUntil is set while the membership is a free trial (trials.go).
	TrialUntil *time.Time `json:"trialUntil"`
	// RenewedBy is what renews the membership: the wallet, a card
	// (stripe) or a PayPal subscription; empty when nothing does.
	RenewedBy string `json:"renewedBy" tstype:"'' | 'musepay' | 'stripe' | 'paypal'"`
}

// AppAccount is the app-scoped part of GET /api/auth/me?appId=.
type AppAccount struct {
	Devices           []Device           `json:"devices"`
	AppMemberships    []AppMembership    `json:"appMemberships"`
	Media             []MediaView        `json:"media"`
	SubscriptionItems []ItemView         `json:"subscriptionItems"`
	Subscription      SubscriptionStatus `json:"subscriptionStatus"`
}

// AppAccountOf loads the user's devices, memberships, media and subscription
// in one app. Memberships list every app, since the browser shows them all;
// everything else is scoped to appID.
func (s *Storage) AppAccountOf(ctx context.Context, appID, userID string, now time.Time) (*AppAccount, error) {
	out := &AppAccount{Devices: []Device{}, AppMemberships: []AppMembership{}, Media: []MediaView{}, SubscriptionItems: []ItemView{}}

	var subs []PushSubscription
	if err := s.db.NewSelect().Model(&subs).Where("app_id = ? AND user_id = ?", appID, userID).
		Order("created_at DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load devices: %w", err)
	}
	for _, p := range subs {
		out.Devices = append(out.Devices, Device{ID: p.ID, Endpoint: p.Endpoint, CreatedAt: p.CreatedAt})
	}

	var rows []struct {
		Membership
		AppName string `bun:"app_name"`
	}
	if err := s.db.NewSelect().TableExpr("memberships AS m").
		ColumnExpr("m.*").ColumnExpr("a.name AS app_name").
		Join("JOIN apps AS a ON a.id = m.app_id").
		Where("m.user_id = ?", userID).Order("m.created_at ASC").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load memberships: %w", err)
	}
	for _, r := range rows {
		out.AppMemberships = append(out.AppMemberships, AppMembership{ID: r.ID, Role: r.Role,
			App: MembershipApp{ID: r.AppID, Name: r.AppName}, CreatedAt: r.CreatedAt})
	}

	var media []Media
	if err := s.db.NewSelect().Model(&media).Where("app_id = ? AND owner_id = ?", appID, userID).
		Order("created_at DESC").Limit(50).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load media of user: %w", err)
	}
	for i := range media {
		v, err := s.mediaView(ctx, &media[i], false, false) // the owner's own list: signed URLs do
		if err != nil {
			return nil, err
		}
		out.Media = append(out.Media, v)
	}

	views, err := s.SubscriptionItems(ctx, appID)
	if err != nil {
		return nil, err
	}
	out.SubscriptionItems = views

	st, err := s.SubscriptionStatusOf(ctx, appID, userID, now)
	if err != nil {
		return nil, err
	}
	out.Subscription = *st
	return out, nil
}

// SubscriptionStatusOf is subscription.status of GET /api/auth/me?appId= and
// the profile's membership block.
func (s *Storage) SubscriptionStatusOf(ctx context.Context, appID, userID string, now time.Time) (*SubscriptionStatus, error) {
	out := &SubscriptionStatus{Status: "NONE"}
	sub, err := s.SubscriptionOf(ctx, appID, userID)
	if err != nil {
		return nil, err
	}
	if sub != nil {
		out.Status, out.CurrentPeriodEnd, out.CancelAtPeriodEnd, out.GraceUntil, out.PlanID =
			sub.Status, &sub.CurrentPeriodEnd, sub.CancelAtPeriodEnd, sub.GraceUntil, &sub.PlanID
		out.TrialUntil = sub.TrialUntil
		if sub.Provider == WalletMethod || (sub.ProviderRef != "" && sub.Provider != CompProvider) {
			out.RenewedBy = sub.Provider
		}
		if out.Plan, err = s.planView(ctx, sub.PlanID); err != nil {
			return nil, err
		}
		if out.Plan != nil && sub.Cycle != "" {
			out.Plan.BillingCycle = sub.Cycle // the cycle the member chose
		}
	}
	// Valid means exactly what the gate uses, whichever row is the latest.
	if out.HasValidSubscription, err = s.HasValidSubscription(ctx, appID, userID, now); err != nil {
		return nil, err
	}
	return out, nil
}

// SubscriptionItems are the app's tiers on sale (SUBSCRIPTION store items
// with their subscriptionPlan), in rank order: subscription.items and the
// gated screen's list. Drafts and archived tiers are never offered.
func (s *Storage) SubscriptionItems(ctx context.Context, appID string) ([]ItemView, error) {
	var items []StoreItem
	if err := s.db.NewSelect().Model(&items).ColumnExpr("i.*").Join("JOIN subscription_plans AS p ON p.store_item_id = i.id").
		ModelTableExpr("store_items AS i").
		Where("i.app_id = ? AND i.type = ?", appID, ItemSubscription).Where(tierOnSaleSQL).
		OrderExpr("p.tier_rank ASC, i.price ASC, i.id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load subscription items: %w", err)
	}
	views, err := s.itemViews(ctx, s.db, items)
	if err != nil {
		return nil, err
	}
	if views == nil {
		views = []ItemView{}
	}
	return views, nil
}
