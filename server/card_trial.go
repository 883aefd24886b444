package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/server/payments/stripe"
	"marquee/store"
)

// A free trial that needs a card (issue 40 item 5; the card side is
// server/payments/stripe/card_trial.go). A member who never had a trial in
// the app joins such a tier by card: the plan checkout's plain form (or
// POST /api/subscriptions/apps/{appId}/subscribe with paymentMethod
// "stripe") sends them to Stripe Checkout, which saves the card and starts
// the Stripe subscription with the trial; nothing is charged now. The
// trial starts here when the card is saved, reported by Stripe's webhook or
// by the member's return (/membership/card-trial), whichever comes first.
// The wallet cannot start such a trial and says so, naming the card.

// cardTrialer is the card provider of trials that need a card.
type cardTrialer interface {
	StartCardTrial(ctx context.Context, req stripe.CardTrialRequest) (*stripe.CardTrialStarted, error)
	ConfirmCardTrial(ctx context.Context, userID, sessionID string) (*store.Subscription, error)
}

// trialJoin says what a join of the tier of itemID by the viewer does
// about the free trial: wallet (a trial the wallet starts), card (a trial
// only a card starts, and the app takes cards), or neither (no trial: the
// tier has none, the member had one, or holds a membership).
type trialJoin struct{ wallet, card bool }

func (s *Server) trialJoinOf(ctx context.Context, sc *Scope, itemID string) (trialJoin, error) {
	var tj trialJoin
	if sc.User == nil {
		return tj, nil
	}
	var err error
	if tj.wallet, err = s.store.TrialEligible(ctx, sc.App.ID, sc.User.ID, itemID, payments.Wallet, time.Now()); err != nil && !isNotFound(err) {
		return tj, err
	}
	if tj.wallet {
		return tj, nil
	}
	byCard, err := s.store.TrialEligible(ctx, sc.App.ID, sc.User.ID, itemID, payments.Stripe, time.Now())
	if err != nil && !isNotFound(err) {
		return tj, err
	}
	tj.card = byCard && s.cardTrials() != nil && s.cardOffered(ctx, sc.App.ID)
	return tj, nil
}

// cardTrials answers the provider of card trials, nil when cards are not
// configured.
func (s *Server) cardTrials() cardTrialer {
	p, err := s.payments.Get(payments.Stripe)
	if err != nil {
		return nil
	}
	ct, _ := p.(cardTrialer)
	return ct
}

// msgTrialNeedsCard: the wallet (or a form without the card) asked to start
// a trial only a card starts.
const msgTrialNeedsCard = "This tier's free trial starts with a card: join by card to start it (nothing is charged until the trial ends)"

// startCardTrial answers the Checkout Session that starts the viewer's
// card trial of the tier (the join's answer: trial, and where to go).
func (s *Server) startCardTrial(c echo.Context, sc *Scope, itemID, cycle, offerCode string) (*SubscribeResult, error) {
	ct := s.cardTrials()
	if ct == nil {
		return nil, moneyError(payments.ErrDisabled)
	}
	ctx := c.Request().Context()
	back := s.appURL(sc, "/membership/card-trial", nil)
	checkout := s.appURL(sc, "/checkout/plan/"+url.PathEscape(itemID), url.Values{"cycle": {cycle}})
	started, err := ct.StartCardTrial(ctx, stripe.CardTrialRequest{AppID: sc.App.ID, UserID: sc.User.ID, Email: sc.User.Email,
		ItemID: itemID, Cycle: cycle, OfferCode: offerCode,
		// Stripe fills the session in; it is not escaped.
		SuccessURL: back + "?session_id={CHECKOUT_SESSION_ID}", CancelURL: checkout})
	if err != nil {
		if isNotFound(err) {
			return nil, notFound("Subscription plan not found")
		}
		return nil, moneyError(err)
	}
	out := &SubscribeResult{Trial: true}
	if !started.Started {
		out.Payment = &payments.Started{Ref: started.SessionID, ApprovalURL: started.URL, Status: "open"}
	}
	if out.Subscription, err = s.store.SubscriptionStatusOf(ctx, sc.App.ID, sc.User.ID, time.Now()); err != nil {
		return nil, err
	}
	return out, nil
}

// formCardTrial is the plan checkout's "Start free trial with card": to
// Stripe Checkout, or the page again with why not.
func (s *Server) formCardTrial(c echo.Context, sc *Scope) error {
	itemID, cycle, code := c.Param("itemId"), c.FormValue("cycle"), c.FormValue("code")
	if err := s.checkJoin(c, sc, itemID, cycle); err != nil {
		return s.planCheckoutRefused(c, err)
	}
	tj, err := s.trialJoinOf(c.Request().Context(), sc, itemID)
	if err != nil {
		return err
	}
	if !tj.card {
		// The trial is not (or no longer) the member's: the page says
		// what a join does now.
		return s.renderPlanCheckout(c, "This join has no free trial: you have had this app's trial, or are a member already", http.StatusConflict)
	}
	res, err := s.startCardTrial(c, sc, itemID, cycle, code)
	if err != nil {
		return s.planCheckoutRefused(c, err)
	}
	if res.Payment == nil {
		return c.Redirect(http.StatusSeeOther, membershipPath(sc.App.Name)+"?notice=trial")
	}
	return c.Redirect(http.StatusSeeOther, res.Payment.ApprovalURL)
}

// planCheckoutRefused shows the plan checkout again with an error the
// member can act on; others go to the error handler.
func (s *Server) planCheckoutRefused(c echo.Context, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Status < 500 && e.Status != http.StatusNotFound {
		return s.renderPlanCheckout(c, e.Message, e.Status)
	}
	return err
}

// GET /apps/:app/membership/card-trial?session_id=: back from Stripe
// Checkout. Stripe is asked how the session stands; a saved card starts
// the trial (if the webhook has not), and the membership page says so.
func (s *Server) pageCardTrialReturn(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	ct := s.cardTrials()
	session := c.QueryParam("session_id")
	if ct == nil || session == "" {
		return c.Redirect(http.StatusSeeOther, membershipPath(sc.App.Name))
	}
	sub, err := ct.ConfirmCardTrial(c.Request().Context(), sc.User.ID, session)
	switch {
	case errors.Is(err, payments.ErrNotThisOrder):
		return notFound("Checkout session not found")
	case err != nil && store.CardTrialRefused(err):
		return c.Redirect(http.StatusSeeOther, membershipPath(sc.App.Name)+"?notice=trial-refused")
	case err != nil:
		return moneyError(err)
	case sub == nil:
		return c.Redirect(http.StatusSeeOther, membershipPath(sc.App.Name)+"?notice=trial-pending")
	}
	return c.Redirect(http.StatusSeeOther, membershipPath(sc.App.Name)+"?notice=trial")
}

// cardTrialNotices say how a card trial stands after the member's return
// from Stripe Checkout, on the membership page.
var cardTrialNotices = map[string]string{
	"trial":         "Your free trial has started. Nothing is charged until it ends.",
	"trial-pending": "Stripe has not confirmed your card yet: your free trial starts as soon as it does.",
	"trial-refused": "Your free trial could not start (you have had this app's trial, or are a member already): nothing was charged and the card subscription was cancelled.",
}

// trialOffer fills the membership page's card and trial dates.
func (s *Server) trialOffer(ctx context.Context, sc *Scope, data *TiersData) {
	data.CardOffered = s.cardTrials() != nil && s.cardOffered(ctx, sc.App.ID)
	data.TrialEnds = map[string]time.Time{}
	now := time.Now().UTC()
	for _, t := range data.Tiers {
		if t.TrialDays > 0 {
			data.TrialEnds[t.ID] = now.AddDate(0, 0, t.TrialDays)
		}
	}
}

// planTrial fills the plan checkout's trial: the days a join starts, and
// whether only a card starts them, or why there are none.
func (s *Server) planTrial(ctx context.Context, sc *Scope, data *PlanCheckoutData, tiers *TiersData) error {
	tj, err := s.trialJoinOf(ctx, sc, data.Plan.ID)
	if err != nil {
		return err
	}
	for _, t := range tiers.Tiers {
		if t.ItemID != data.Plan.ID || t.TrialDays <= 0 {
			continue
		}
		switch {
		case tj.wallet || tj.card:
			data.TrialDays, data.CardTrial = t.TrialDays, tj.card
			on := time.Now().UTC().AddDate(0, 0, t.TrialDays)
			data.TrialChargeOn = &on
		case !tiers.TrialAvailable:
			data.TrialUsed = true
		}
	}
	return nil
}
