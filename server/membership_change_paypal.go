package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/server/payments/paypal"
	"marquee/store"
)

// Moving a PayPal membership between tiers (issue 40 item 4). PayPal's
// revise needs the member's approval on PayPal's page and prorates
// nothing, so the change form (and the change call) answers PayPal's
// approval link; PayPal sends the member back to
// /apps/{app}/membership/paypal/{changeId}, which takes the move on: a
// downgrade is then scheduled for the period end, and an upgrade sends the
// member on to pay the prorated difference as a one-off PayPal payment,
// whose capture starts the new tier at once (paypal/tier_change.go). The
// same link, from the membership page, finishes a move left half-way.

// payPalReviser is the PayPal provider's side of a tier change.
type payPalReviser interface {
	ReviseTier(ctx context.Context, appID, userID string, q *store.TierChange, urls paypal.TierChangeURLs) (*store.PayPalTierChange, error)
	ResumeTierChange(ctx context.Context, id string, urls paypal.TierChangeURLs) (*store.PayPalTierChange, string, error)
}

// PayPalChange is a PayPal tier change waiting for the member: approved
// on PayPal (REVISED) with the upgrade's difference still to pay, or not
// approved yet (PENDING).
type PayPalChange struct {
	ID        string `json:"id"`
	Direction string `json:"direction" tstype:"'UPGRADE' | 'DOWNGRADE' | 'KEEP'"`
	Status    string `json:"status" tstype:"'PENDING' | 'REVISED' | 'DONE' | 'VOID'"`
	// ToName is the tier it moves to, Charge the upgrade's difference.
	ToName   string `json:"toName"`
	Charge   int64  `json:"charge"`
	Currency string `json:"currency"`
	// Href continues it (to PayPal's approval, or back here when done).
	Href string `json:"href"`
}

func (s *Server) payPalReviser() (payPalReviser, error) {
	p, err := s.payments.Get(payments.PayPal)
	if err != nil {
		return nil, moneyError(err)
	}
	r, ok := p.(payPalReviser)
	if !ok {
		return nil, &store.ErrTierChange{Msg: "PayPal cannot change tiers here: cancel and join the tier you want"}
	}
	return r, nil
}

func payPalChangePath(appName, id string) string {
	return membershipPath(appName) + "/paypal/" + url.PathEscape(id)
}

// payPalChangeURLs: PayPal sends the member back to the change's page, or
// to the membership page when they cancel on PayPal.
func (s *Server) payPalChangeURLs(sc *Scope) paypal.TierChangeURLs {
	return func(id string) (string, string) {
		return s.appURL(sc, "/membership/paypal/"+url.PathEscape(id), nil),
			s.appURL(sc, "/membership", url.Values{"error": {"The change of tier was not approved on PayPal: your tier is unchanged."}})
	}
}

// changePayPalTier asks PayPal to revise the membership's subscription to
// the quoted tier and answers the move with where the member approves it.
// An upgrade's offer code was checked by the quote (unknown, expired, used
// up or already redeemed codes never reach PayPal); it discounts the
// difference and the renewals it covers (paypal.ReviseTier), and is
// redeemed once the member approved the move on PayPal.
func (s *Server) changePayPalTier(ctx context.Context, sc *Scope, q *store.TierChange) (*PayPalChange, string, error) {
	if q.Direction == store.TierKeep {
		// The own tier with no downgrade waiting: nothing to revise.
		next, err := s.store.NextTierOf(ctx, sc.App.ID, sc.User.ID)
		if err != nil || next == nil {
			return nil, "", err
		}
	}
	r, err := s.payPalReviser()
	if err != nil {
		return nil, "", err
	}
	row, err := r.ReviseTier(ctx, sc.App.ID, sc.User.ID, q, s.payPalChangeURLs(sc))
	if err != nil {
		return nil, "", moneyError(err)
	}
	next := row.ApprovalURL
	if row.Status != store.PayPalChangePending {
		// Approved already (a repeated request): the change's page goes on.
		next = s.appURL(sc, "/membership/paypal/"+url.PathEscape(row.ID), nil)
	}
	return payPalChangeOf(sc, row, q.To.Name, next), next, nil
}

func payPalChangeOf(sc *Scope, row *store.PayPalTierChange, toName, href string) *PayPalChange {
	if href == "" {
		href = payPalChangePath(sc.App.Name, row.ID)
	}
	return &PayPalChange{ID: row.ID, Direction: row.Direction, Status: row.Status, ToName: toName, Charge: row.Charge,
		Currency: row.Currency, Href: href}
}

// waitingPayPalChange answers the member's PayPal change that waits for
// them (the membership page's "finish" line), nil when none.
func (s *Server) waitingPayPalChange(ctx context.Context, sc *Scope, sub *store.Subscription) (*PayPalChange, error) {
	open, err := s.store.OpenPayPalTierChanges(ctx, sub.ProviderRef)
	if err != nil || len(open) == 0 {
		return nil, err
	}
	row := open[len(open)-1]
	if row.Status != store.PayPalChangeRevised && time.Since(row.CreatedAt) > 3*time.Hour {
		return nil, nil // PayPal's approval links lapse
	}
	name := ""
	if t, err := s.store.TierByPlan(ctx, sc.App.ID, row.ToPlanID); err == nil {
		name = t.Name
	}
	return payPalChangeOf(sc, &row, name, ""), nil
}

// GET /apps/:app/membership/paypal/:changeId: PayPal's return from an
// approval (and the membership page's link to finish a change): the move
// goes on as far as PayPal lets it, then the member is sent to PayPal's
// next approval or to the membership page with what happened.
func (s *Server) pagePayPalTierChange(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	ctx := c.Request().Context()
	back := membershipPath(sc.App.Name)
	row, err := s.store.PayPalTierChangeByID(ctx, c.Param("changeId"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (row.UserID != sc.User.ID || row.AppID != sc.App.ID)) {
		// Not the viewer's change (or none): nothing of it is shown.
		return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape("This change of tier is not yours, or no longer waits."))
	}
	if err != nil {
		return err
	}
	r, err := s.payPalReviser()
	if err != nil {
		return err
	}
	row, next, err := r.ResumeTierChange(ctx, row.ID, s.payPalChangeURLs(sc))
	if err != nil {
		var e *Error
		if err := moneyError(err); errors.As(err, &e) && e.Status < 500 {
			return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape(e.Message))
		}
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	if next != "" {
		return c.Redirect(http.StatusSeeOther, next)
	}
	switch row.Status {
	case store.PayPalChangeDone:
		return c.Redirect(http.StatusSeeOther, back+"?notice="+strings.ToLower(row.Direction))
	case store.PayPalChangeVoid:
		return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape("Your membership changed meanwhile: this change of tier was not made."))
	}
	// The upgrade's payment is pending at PayPal: its webhook finishes it.
	return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape("PayPal has not completed the upgrade's payment yet: look again in a moment."))
}
