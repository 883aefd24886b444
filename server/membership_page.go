package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/store"
)

// The membership page (issue 40 item 1): /apps/{app}/membership shows the
// tiers on sale side by side with the member's current one, and Join /
// Upgrade / Downgrade / Cancel as plain forms, so it works without
// JavaScript. Join, Upgrade and Downgrade go into the plan checkout (a GET
// form carrying the cycle); Cancel posts here and uses the existing cancel.

func membershipPath(appName string) string { return "/apps/" + url.PathEscape(appName) + "/membership" }

// TiersData answers GET /api/memberships/apps/{appId}/tiers and is the
// membership page's data: the tiers on sale in rank order, the viewer's
// current tier (nil without a valid membership; it may be archived, and is
// then shown beside the ones on sale) and their membership status.
type TiersData struct {
	Tiers   []store.Tier              `json:"tiers"`
	Current *store.Tier               `json:"current"`
	Status  *store.SubscriptionStatus `json:"status"`
	// Next is the tier a downgrade moves the member to at the period end.
	Next *store.Tier `json:"next"`
	// Changeable: the membership renews, so Upgrade and Downgrade move it
	// (membership_change.go) rather than buy another period.
	Changeable bool `json:"changeable"`
	// ChangeRefused is why the member cannot move between tiers now, for a
	// membership whose other tiers would otherwise offer buttons that
	// answer it (a trial, a card membership that ends).
	ChangeRefused string `json:"changeRefused,omitempty"`
	// CardManaged: a card renews the membership, so the member manages the
	// card and invoices in the provider's portal (membership_portal.go).
	CardManaged bool `json:"cardManaged"`
	// PayPalManaged: a PayPal subscription renews the membership; a change
	// of tier is approved on PayPal, and a cancel cannot be undone.
	PayPalManaged bool `json:"paypalManaged"`
	// PayPalChange is a change of tier approved on PayPal whose upgrade
	// difference is still to pay, or one waiting for PayPal's approval.
	PayPalChange *PayPalChange `json:"paypalChange,omitempty"`
	// Error is why a form post was refused.
	Error string `json:"error,omitempty"`
	// Cycle is the member's billing cycle (empty without a membership).
	Cycle string `json:"cycle,omitempty" tstype:"'MONTHLY' | 'YEARLY'"`
	// Notice is what a form post came back to say (joined, canceled).
	Notice string `json:"notice,omitempty"`
	// TrialAvailable: the viewer has had no free trial in the app, so a
	// tier with one starts with it.
	TrialAvailable bool `json:"trialAvailable"`
	// CardOffered: the app takes cards, so a trial that needs a card can
	// start; TrialEnds is, for each tier with a trial, when a trial
	// started now would end (the day the card is first charged).
	CardOffered bool                 `json:"cardOffered"`
	TrialEnds   map[string]time.Time `json:"trialEnds"`
	// Code is the offer code typed ("Have a code?", ?code=), Quotes what
	// it does to each tier and cycle it applies to, and CodeError why it
	// applies to none.
	Code      string      `json:"code,omitempty"`
	Quotes    []TierQuote `json:"quotes"`
	CodeError string      `json:"codeError,omitempty"`
}

// TierQuote is an offer code's price for one tier and cycle.
type TierQuote struct {
	TierID      string `json:"tierId"`
	Cycle       string `json:"cycle" tstype:"'MONTHLY' | 'YEARLY'"`
	ListPrice   int64  `json:"listPrice"`
	Price       int64  `json:"price"`
	Description string `json:"description"`
}

// quoteTiers fills data's quotes for code: each tier and cycle it takes
// off, or the reason it takes off none.
func (s *Server) quoteTiers(c echo.Context, sc *Scope, data *TiersData, code string) {
	code = store.NormalizeOfferCode(code)
	if code == "" {
		return
	}
	data.Code = code
	userID := ""
	if sc.User != nil {
		userID = sc.User.ID
	}
	var firstErr error
	for _, t := range data.Tiers {
		for _, cy := range []struct {
			cycle string
			price *int64
		}{{store.CycleMonthly, t.MonthlyPrice}, {store.CycleYearly, t.YearlyPrice}} {
			if cy.price == nil {
				continue
			}
			q, err := s.store.QuoteOffer(c.Request().Context(), sc.App.ID, userID, t.ItemID, cy.cycle, code, time.Now())
			if err != nil {
				if firstErr == nil || errors.Is(firstErr, store.ErrOfferNotForTier) {
					firstErr = err
				}
				continue
			}
			data.Quotes = append(data.Quotes, TierQuote{TierID: t.ID, Cycle: cy.cycle, ListPrice: q.ListPrice, Price: q.Price, Description: q.Description})
		}
	}
	if len(data.Quotes) == 0 && firstErr != nil {
		if e, ok := answer(firstErr, nil).(*Error); ok && e.Status < 500 {
			data.CodeError = e.Message
		} else {
			data.CodeError = "This code cannot be used now"
		}
	}
}

// tiersOf is the one loader of the page and the JSON call.
func (s *Server) tiersOf(c echo.Context, sc *Scope) (*TiersData, error) {
	ctx := c.Request().Context()
	tiers, err := s.store.Tiers(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	out := &TiersData{Tiers: tiers, Quotes: []TierQuote{}, TrialAvailable: true}
	s.trialOffer(ctx, sc, out)
	if sc.User == nil {
		return out, nil
	}
	if out.TrialAvailable, err = s.store.TrialAvailable(ctx, sc.App.ID, sc.User.ID); err != nil {
		return nil, err
	}
	if out.Status, err = s.store.SubscriptionStatusOf(ctx, sc.App.ID, sc.User.ID, time.Now()); err != nil {
		return nil, err
	}
	if out.Status.HasValidSubscription && out.Status.PlanID != nil {
		cur, err := s.store.TierByPlan(ctx, sc.App.ID, *out.Status.PlanID)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		out.Current = cur
		if out.Next, err = s.store.NextTierOf(ctx, sc.App.ID, sc.User.ID); err != nil {
			return nil, err
		}
		sub, err := s.store.SubscriptionOf(ctx, sc.App.ID, sc.User.ID)
		if err != nil {
			return nil, err
		}
		if sub != nil {
			out.Cycle = sub.Cycle
			if out.Cycle == "" && out.Status.Plan != nil {
				out.Cycle = out.Status.Plan.BillingCycle
			}
		}
		out.CardManaged = sub != nil && sub.ProviderRef != "" && sub.Provider != store.WalletMethod && sub.Provider != store.CompProvider &&
			(sub.Status == store.SubActive || sub.Status == store.SubPastDue)
		refusal := store.TierChangeRefusal(sub, time.Now())
		out.Changeable = refusal == nil
		var why *store.ErrTierChange
		if sub != nil && (sub.TrialUntil != nil || out.CardManaged) && errors.As(refusal, &why) {
			out.ChangeRefused = why.Msg
		}
		if sub != nil && sub.Provider == payments.PayPal && sub.ProviderRef != "" {
			out.PayPalManaged = sub.Status == store.SubActive || sub.Status == store.SubPastDue
			out.CardManaged = false
			if out.PayPalManaged {
				if out.PayPalChange, err = s.waitingPayPalChange(ctx, sc, sub); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// GET /api/memberships/apps/:appId/tiers
func (s *Server) apiTiers(c echo.Context) error {
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	data, err := s.tiersOf(c, sc)
	if err != nil {
		return err
	}
	s.quoteTiers(c, sc, data, c.QueryParam("code"))
	return respond(c, http.StatusOK, data)
}

// GET /apps/:app/membership
func (s *Server) pageMembership(c echo.Context) error {
	sc := scopeFromPage(c)
	data, err := s.tiersOf(c, sc)
	if err != nil {
		return err
	}
	s.quoteTiers(c, sc, data, c.QueryParam("code"))
	data.Error = notice(c, "error")
	switch c.QueryParam("notice") {
	case "canceled":
		data.Notice = "Your membership will end at the end of the current period."
	case "trial", "trial-pending", "trial-refused":
		data.Notice = cardTrialNotices[c.QueryParam("notice")]
	case "resumed":
		data.Notice = "Your membership will renew."
	case "upgrade", "downgrade", "keep":
		data.Notice = tierChangeMessages[strings.ToUpper(c.QueryParam("notice"))] + "."
	}
	props := s.pageProps(c, sc)
	props.Data = data
	c.Response().Header().Set("Cache-Control", "no-cache, private")
	return s.renderPage(c, "Membership", props)
}

// POST /apps/:app/membership/cancel (cancel=1, or 0 to keep renewing)
func (s *Server) formMembershipCancel(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	cancel := c.FormValue("cancel") != "0"
	if _, err := s.setCancel(c, sc, cancel); err != nil {
		return err
	}
	notice := "canceled"
	if !cancel {
		notice = "resumed"
	}
	return c.Redirect(http.StatusSeeOther, membershipPath(sc.App.Name)+"?notice="+notice)
}
