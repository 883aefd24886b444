package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Launch (issue 43 item 1). An app a creator makes starts unpublished: its
// pages and calls answer to its staff only (server/http_scope.go), it is in
// no sitemap, feed or search, and the studio's launch checklist shows what
// is left before the creator publishes it. It can be unpublished again.

// Launch steps, in the checklist's order.
const (
	StepProfile   = "profile"
	StepEarn      = "earn"
	StepPayouts   = "payouts"
	StepPost      = "post"
	StepPreview   = "preview"
	StepsOfLaunch = 5
)

// Launch is the checklist as the data says it: each step done or not and
// why, and whether the app is published.
type Launch struct {
	Published bool         `json:"published"`
	Steps     []LaunchStep `json:"steps"`
	Done      int          `json:"done"`
}

// LaunchStep is one line of the checklist. Detail says what makes it done
// or what is missing, in the creator's words.
type LaunchStep struct {
	Key    string `json:"key" tstype:"'profile' | 'earn' | 'payouts' | 'post' | 'preview'"`
	Title  string `json:"title"`
	Done   bool   `json:"done"`
	Detail string `json:"detail"`
}

// LaunchOf computes the checklist of an app from its data.
func (s *Storage) LaunchOf(ctx context.Context, appID string) (*Launch, error) {
	app := new(App)
	if err := selectOne(ctx, s.db.NewSelect().Model(app).Where("id = ?", appID), "app"); err != nil {
		return nil, err
	}
	st := app.Settings
	l := &Launch{Published: !app.Unpublished}

	// Profile and look: words about the app, and a look of its own (an
	// image or a theme).
	described := app.Bio != "" || st.Basic.MetaDescription != "" || app.Description != ""
	looks := app.TitleMediaID != nil || app.BannerMediaID != nil || app.LogoMediaID != nil || st.Theme != (ThemeSettings{})
	profile := LaunchStep{Key: StepProfile, Title: "Profile and look", Done: described && looks}
	switch {
	case profile.Done:
		profile.Detail = "Your app has a bio and a look of its own."
	case !described && !looks:
		profile.Detail = "Write a bio, and add a title image, a banner, an icon or a theme."
	case !described:
		profile.Detail = "Write a bio or a description."
	default:
		profile.Detail = "Add a title image, a banner, an icon or a theme."
	}

	// A way for fans to pay: a tier on sale, or donations on.
	tiers, err := s.db.NewSelect().TableExpr("subscription_plans AS p").Join("JOIN store_items AS i ON i.id = p.store_item_id").
		Where("i.app_id = ? AND "+tierOnSaleSQL, appID).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("count tiers on sale: %w", err)
	}
	earn := LaunchStep{Key: StepEarn, Title: "A tier or donations", Done: tiers > 0 || st.Features.Donations.Enabled}
	switch {
	case tiers > 0:
		earn.Detail = plural(int(tiers), "tier is", "tiers are") + " on sale."
	case earn.Done:
		earn.Detail = "Donations are on."
	default:
		earn.Detail = "Put a membership tier on sale, or turn donations on."
	}

	// Payouts: a Stripe account that takes charges, or a PayPal account.
	acct, err := s.PayoutAccountOf(ctx, appID)
	if err != nil {
		return nil, err
	}
	payee, err := s.PayPalPayeeOf(ctx, appID)
	if err != nil {
		return nil, err
	}
	stripeOK := acct.ChargesReady()
	payouts := LaunchStep{Key: StepPayouts, Title: "Payouts connected", Done: stripeOK || payee.Set()}
	switch {
	case stripeOK:
		payouts.Detail = "Card payments go to your Stripe account."
	case payee.Set():
		payouts.Detail = "PayPal payments go to your PayPal account."
	case acct != nil && acct.StripeAccountID != "":
		payouts.Detail = "Stripe is still checking your details."
	default:
		payouts.Detail = "Connect a Stripe account or your PayPal account, so the money reaches you."
	}

	// A first post the members will find.
	posts, err := s.db.NewSelect().Model((*Message)(nil)).
		Where("app_id = ? AND type = ? AND parent_message_id IS NULL AND hidden = ''", appID, MessagePost).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("count posts: %w", err)
	}
	post := LaunchStep{Key: StepPost, Title: "A first post", Done: posts > 0}
	if post.Done {
		post.Detail = plural(int(posts), "post is", "posts are") + " published."
	} else {
		post.Detail = "Write a first post, so that the first fans find something."
	}

	// Seen as a visitor and as a member would see it.
	preview := LaunchStep{Key: StepPreview, Title: "Preview as a visitor and as a member",
		Done: app.PreviewedVisitorAt != nil && app.PreviewedMemberAt != nil}
	switch {
	case preview.Done:
		preview.Detail = "You have seen your app as a visitor and as a member."
	case app.PreviewedVisitorAt != nil:
		preview.Detail = "Seen as a visitor; now look at it as a member."
	case app.PreviewedMemberAt != nil:
		preview.Detail = "Seen as a member; now look at it as a visitor."
	default:
		preview.Detail = "Look at your pages as a visitor and as a member would see them."
	}

	l.Steps = []LaunchStep{profile, earn, payouts, post, preview}
	for _, st := range l.Steps {
		if st.Done {
			l.Done++
		}
	}
	return l, nil
}

// Preview modes: how staff look at their app (server/launch_preview.go).
const (
	PreviewVisitor = "visitor"
	PreviewMember  = "member"
)

// NotePreview records that staff looked at the app as a visitor or as a
// member (the checklist's preview step).
func (s *Storage) NotePreview(ctx context.Context, appID, mode string) error {
	column := map[string]string{PreviewVisitor: "previewed_visitor_at", PreviewMember: "previewed_member_at"}[mode]
	if column == "" {
		return &ErrInvalid{Msg: "Preview as a visitor or as a member", Field: "mode"}
	}
	if _, err := s.db.NewUpdate().Model((*App)(nil)).Set("? = ?", bun.Ident(column), time.Now().UTC()).
		Where("id = ?", appID).Exec(ctx); err != nil {
		return fmt.Errorf("note preview: %w", err)
	}
	return nil
}

// SetAppPublished publishes an app (everyone may open it) or unpublishes
// it (its staff only), audited as the studio's other changes. Publishing
// a published app changes nothing and writes no audit line: of two
// concurrent clicks one publishes, the other finds it done. changed says
// whether this call changed it.
func (s *Storage) SetAppPublished(ctx context.Context, appID, actorID string, published bool) (changed bool, err error) {
	err = s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		app, err := lockApp(ctx, tx, appID)
		if err != nil {
			return err
		}
		if app.Unpublished != published {
			return nil
		}
		action, detail := "app.publish", "Published: everyone may open the app"
		if !published {
			action, detail = "app.unpublish", "Unpublished: only the app's staff may open it"
		}
		if _, err := tx.NewUpdate().Model((*App)(nil)).Set("unpublished = ?", !published).Set("updated_at = ?", time.Now().UTC()).
			Where("id = ?", appID).Exec(ctx); err != nil {
			return fmt.Errorf("set app published: %w", err)
		}
		changed = true
		changePages(ctx, appID)
		return writeAudit(ctx, tx, appID, actorID, action, "", detail)
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// reachesWhileUnpublished is the condition on a membership row (alias) for
// what an app sends its members (notices, its newsletter): while the app
// is unpublished only its staff hear from it, as only they may open it.
func reachesWhileUnpublished(alias string) string {
	return "(" + alias + ".role IN ('" + RoleCreator + "', '" + RoleAdmin + "', '" + RoleModerator + "') OR NOT EXISTS " +
		"(SELECT 1 FROM apps AS up WHERE up.id = " + alias + ".app_id AND up.unpublished))"
}
