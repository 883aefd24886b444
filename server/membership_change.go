package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/store"
)

// Moving between tiers (issue 40 item 4): the membership page's Upgrade and
// Downgrade lead a member with a membership that renews to a confirmation
// (what it costs now, what it costs from the next period, when it takes
// effect), and its form makes the change. The wallet pays an upgrade's
// prorated difference at once; a card membership's Stripe subscription is
// moved to the new price, which invoices the difference itself; a PayPal
// membership's subscription is revised on PayPal with the member's
// approval (membership_change_paypal.go). Page and JSON share tierChange.

// TierChangeData is the confirmation page and the answer of the change
// calls: what the move does (or did) and, after a refused post, why.
type TierChangeData struct {
	Change  *store.TierChange `json:"change"`
	Balance int64             `json:"balance"`
	Error   string            `json:"error,omitempty"`
	// Code is the offer code typed for an upgrade (the page keeps it),
	// CodeError why it does not apply.
	Code      string `json:"code,omitempty"`
	CodeError string `json:"codeError,omitempty"`
	// PayPal is the move of a PayPal membership (membership_change_paypal.go):
	// nothing changes until the member approves it on PayPal at
	// PayPal.Href (and, for an upgrade, pays the prorated difference there).
	PayPal *PayPalChange `json:"paypal,omitempty"`
}

// tierChanger is a card provider that renews memberships on its side and
// moves its subscription between tiers.
type tierChanger interface {
	ChangeTier(ctx context.Context, q *store.TierChange) error
}

// tierChange quotes (apply false) or makes the move of the viewer's
// membership to the tier of itemID, with an offer code for an upgrade.
func (s *Server) tierChange(c echo.Context, sc *Scope, itemID, code string, apply bool) (*TierChangeData, error) {
	if sc.User == nil {
		return nil, unauthorized("Authentication required")
	}
	if itemID == "" {
		return nil, badRequest("itemId is required")
	}
	ctx := c.Request().Context()
	now := time.Now()
	q, err := s.store.QuoteTierChange(ctx, sc.App.ID, sc.User.ID, itemID, code, now)
	if isNotFound(err) {
		return nil, notFound("Subscription plan not found")
	}
	if err != nil {
		return nil, answer(err, nil)
	}
	var pp *PayPalChange
	if apply && q.RenewedBy == payments.PayPal {
		// PayPal's revise waits for the member's approval on PayPal.
		if pp, _, err = s.changePayPalTier(ctx, sc, q); err != nil {
			return nil, answer(err, nil)
		}
	} else if apply {
		if q.RenewedBy == store.WalletMethod {
			q, err = s.store.ChangeTier(ctx, sc.App.ID, sc.User.ID, itemID, code, now)
		} else {
			q, err = s.changeCardTier(ctx, sc, q, now)
		}
		if isNotFound(err) {
			return nil, notFound("Subscription plan not found")
		}
		if err != nil {
			return nil, answer(err, nil)
		}
	}
	out := &TierChangeData{Change: q, Code: store.NormalizeOfferCode(code), PayPal: pp}
	if out.Balance, err = s.store.WalletBalance(ctx, sc.App.ID, sc.User.ID); err != nil {
		return nil, err
	}
	return out, nil
}

// changeCardTier asks the card provider renewing the membership to move it,
// then records the move (conditional on the membership as quoted).
func (s *Server) changeCardTier(ctx context.Context, sc *Scope, q *store.TierChange, now time.Time) (*store.TierChange, error) {
	provider, err := s.payments.Get(q.RenewedBy)
	if err != nil {
		return nil, moneyError(err)
	}
	changer, ok := provider.(tierChanger)
	if !ok {
		return nil, &store.ErrTierChange{Msg: "Your membership's payment method cannot change tiers: cancel and join the tier you want"}
	}
	// An upgrade's code is redeemed first (exactly once however many
	// requests race), and given back if the provider refuses the move.
	if err := s.store.ReserveUpgradeOffer(ctx, q, sc.App.ID, sc.User.ID, now); err != nil {
		return nil, err
	}
	if q.Direction != store.TierKeep || q.From.ID != q.To.ID {
		if err := changer.ChangeTier(ctx, q); err != nil {
			if rerr := s.store.ReleaseUpgradeOffer(ctx, q, sc.User.ID); rerr != nil {
				s.logger.Error("give back an upgrade's offer code", "user", sc.User.ID, "err", rerr)
			}
			return nil, moneyError(err)
		}
	}
	if err := s.store.ApplyCardTierChange(ctx, q, now); err != nil {
		return nil, err
	}
	return q, nil
}

type tierChangeRequest struct {
	ItemID string `json:"itemId"`
	// Code is an offer code for an upgrade (offers.go).
	Code string `json:"code"`
}

// GET /api/memberships/apps/:appId/change/:itemId: what moving there does.
func (s *Server) apiTierChangeQuote(c echo.Context) error {
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	data, err := s.tierChange(c, sc, c.Param("itemId"), c.QueryParam("code"), false)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, data)
}

// POST /api/memberships/apps/:appId/change {itemId}
func (s *Server) apiTierChange(c echo.Context) error {
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	var req tierChangeRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	data, err := s.tierChange(c, sc, req.ItemID, req.Code, true)
	if err != nil {
		return err
	}
	if data.PayPal != nil {
		return respondMessage(c, http.StatusOK, data, "Approve the change on PayPal")
	}
	return respondMessage(c, http.StatusOK, data, tierChangeMessages[data.Change.Direction])
}

// GET /apps/:app/membership/change/:itemId: the confirmation.
func (s *Server) pageTierChange(c echo.Context) error {
	return s.renderTierChange(c, "", http.StatusOK)
}

func (s *Server) renderTierChange(c echo.Context, errMsg string, status int) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	code := c.QueryParam("code")
	if code == "" {
		code = c.FormValue("code")
	}
	data, err := s.tierChange(c, sc, c.Param("itemId"), code, false)
	codeErr := ""
	if err != nil && code != "" {
		// A code that does not apply: the quote without it, and why.
		if e, ok := err.(*Error); ok && e.Status < 500 {
			codeErr = e.Message
			data, err = s.tierChange(c, sc, c.Param("itemId"), "", false)
		}
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Status >= 500 {
			return err
		}
		// Nothing to confirm: the page says why and leads back.
		data, errMsg, status = &TierChangeData{}, e.Message, e.Status
	}
	data.Error = errMsg
	if codeErr != "" {
		data.Code, data.CodeError = store.NormalizeOfferCode(code), codeErr
		if status == http.StatusOK {
			status = http.StatusBadRequest
		}
	}
	props := s.pageProps(c, sc)
	props.Data = data
	props.Status = status
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.renderPage(c, "TierChange", props)
}

// POST /apps/:app/membership/change/:itemId: make the move, then the
// membership page with what happened, or the confirmation with why not.
func (s *Server) formTierChange(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	data, err := s.tierChange(c, sc, c.Param("itemId"), c.FormValue("code"), true)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 && e.Status != http.StatusNotFound {
			return s.renderTierChange(c, e.Message, e.Status)
		}
		return err
	}
	if data.PayPal != nil {
		return c.Redirect(http.StatusSeeOther, data.PayPal.Href)
	}
	return c.Redirect(http.StatusSeeOther, membershipPath(sc.App.Name)+"?notice="+strings.ToLower(data.Change.Direction))
}

// tierChangeMessages say what a move did, in the JSON answer's message and
// on the membership page after the form.
var tierChangeMessages = map[string]string{
	store.TierUpgrade:   "Your new tier is active",
	store.TierDowngrade: "Your tier changes at the end of the current period",
	store.TierKeep:      "You keep your tier",
}
