package server

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/server/payments"
	"marquee/store"
)

// SubscribeResult answers a plan purchase: the order, how the payment
// stands, and (once paid) the membership.
type SubscribeResult struct {
	// Order is nil when the join started a free trial (nothing to pay).
	Order *store.Order `json:"order"`
	// Trial: the join started the tier's free trial (trials.go).
	Trial        bool                      `json:"trial"`
	Payment      *payments.Started         `json:"payment,omitempty"`
	Subscription *store.SubscriptionStatus `json:"subscription"`
}

// subscribe buys one period of the plan itemID: a one-line order paid
// through the payments registry. The wallet pays at once (and the
// SUBSCRIPTION order hook grants the membership in the same transaction);
// a card or PayPal answers what the browser needs to finish, and the order
// becomes PAID when the provider confirms it.
func (s *Server) subscribe(c echo.Context, sc *Scope, itemID, method, cycle, offerCode string) (*SubscribeResult, error) {
	if err := s.checkJoin(c, sc, itemID, cycle); err != nil {
		return nil, err
	}
	if method == "" {
		method = payments.Wallet
	}
	provider, err := s.payments.Get(method)
	if err != nil {
		return nil, moneyError(err)
	}
	ctx := c.Request().Context()
	// A trial only a card starts (card_trial.go): the card goes to Stripe
	// Checkout; the wallet is refused, naming the card.
	if method == payments.Wallet || method == payments.Stripe {
		tj, err := s.trialJoinOf(ctx, sc, itemID)
		if err != nil {
			return nil, err
		}
		if tj.card && method == payments.Stripe {
			return s.startCardTrial(c, sc, itemID, cycle, offerCode)
		}
		if tj.card {
			return nil, &Error{Status: http.StatusConflict, Message: msgTrialNeedsCard}
		}
	}
	// A tier with a free trial, joined by a member who never had one in
	// the app, starts the trial: nothing is charged now.
	if method == payments.Wallet {
		trial, err := s.store.TrialEligible(ctx, sc.App.ID, sc.User.ID, itemID, method, time.Now())
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		if trial {
			if _, err := s.store.StartTrial(ctx, store.TrialStart{AppID: sc.App.ID, UserID: sc.User.ID, ItemID: itemID, Cycle: cycle,
				OfferCode: offerCode, Method: method}, time.Now()); err != nil {
				return nil, answer(err, wording{store.ErrNotFound: "Subscription plan not found"})
			}
			out := &SubscribeResult{Trial: true}
			if out.Subscription, err = s.store.SubscriptionStatusOf(ctx, sc.App.ID, sc.User.ID, time.Now()); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	// Only a tier on sale is found (a draft or archived one is not).
	order, err := s.store.CreateTierOrderWithOffer(ctx, sc.App.ID, sc.User.ID, itemID, cycle, method, offerCode)
	if isNotFound(err) {
		return nil, notFound("Subscription plan not found")
	}
	if err != nil {
		return nil, answer(err, nil)
	}
	payer := payments.Payer{UserID: sc.User.ID, Email: sc.User.Email}
	// As the checkout's PayPal flow: PayPal adds its ids to the return
	// address, the page needs the method and the order.
	started, err := provider.Start(ctx, payments.StartRequest{Order: order, Payer: payer,
		ReturnURL: s.appURL(sc, "/payment-success", url.Values{"processor": {method}, "orderId": {order.ID}}),
		CancelURL: s.appURL(sc, "/cancel_order", url.Values{"orderId": {order.ID}}),
		Metadata:  map[string]string{"kind": "subscription", "appId": sc.App.ID}})
	if err != nil {
		return nil, moneyError(err)
	}
	out := &SubscribeResult{Order: order, Payment: started}
	if method == payments.Wallet {
		res, err := provider.Confirm(ctx, payments.ConfirmRequest{Order: order, Payer: payer, Ref: started.Ref})
		if err != nil {
			return nil, moneyError(err)
		}
		out.Order, out.Payment = res.Order, nil
	}
	if out.Subscription, err = s.store.SubscriptionStatusOf(ctx, sc.App.ID, sc.User.ID, time.Now()); err != nil {
		return nil, err
	}
	return out, nil
}

// checkJoin is what every way of joining a tier asks first: a signed-in
// viewer who may subscribe, a tier, a known cycle, and no membership a card
// already renews.
func (s *Server) checkJoin(c echo.Context, sc *Scope, itemID, cycle string) error {
	if sc.User == nil {
		return unauthorized("Authentication required")
	}
	if !access.CanSubscribe(sc.Role) {
		return forbidden("You cannot subscribe to this app")
	}
	if itemID == "" {
		return badRequest("itemId is required")
	}
	if cycle != "" && cycle != store.CycleMonthly && cycle != store.CycleYearly {
		return badRequest("cycle must be MONTHLY or YEARLY")
	}
	return s.refuseWhileRenewedByCard(c.Request().Context(), sc)
}

// tierOrder makes (or finds the unpaid) order for one period of the tier,
// with the offer code, to be paid on the checkout's payment step by any
// method.
func (s *Server) tierOrder(c echo.Context, sc *Scope, itemID, cycle, code string) (*store.Order, error) {
	if err := s.checkJoin(c, sc, itemID, cycle); err != nil {
		return nil, err
	}
	order, err := s.store.CreateTierOrderWithOffer(c.Request().Context(), sc.App.ID, sc.User.ID, itemID, cycle, "", code)
	if isNotFound(err) {
		return nil, notFound("Subscription plan not found")
	}
	if err != nil {
		return nil, answer(err, nil)
	}
	return order, nil
}

// refuseWhileRenewedByCard: a membership a provider renews (a Stripe
// subscription) is changed by cancelling it first. Buying a plan again (with
// Subscribe or through the cart) would orphan the provider's subscription,
// which would go on charging the card.
func (s *Server) refuseWhileRenewedByCard(ctx context.Context, sc *Scope) error {
	cur, err := s.store.SubscriptionOf(ctx, sc.App.ID, sc.User.ID)
	if err != nil {
		return err
	}
	if cur != nil && cur.Provider != payments.Wallet && cur.ProviderRef != "" && !cur.CancelAtPeriodEnd &&
		(cur.Status == store.SubActive || cur.Status == store.SubPastDue) {
		if cur.Provider == payments.PayPal {
			return &Error{Status: http.StatusConflict, Message: msgRenewsByPayPal}
		}
		return &Error{Status: http.StatusConflict, Message: msgRenewsByCard}
	}
	return nil
}

const (
	msgRenewsByCard   = "Your membership already renews by card; cancel it first to change plans"
	msgRenewsByPayPal = "Your membership renews through PayPal: change its tier from the membership page (approved on PayPal), or cancel it and join again when it ends"
	msgPayPalResume   = "A membership cancelled in PayPal cannot be resumed: join again when it ends"
)

type subscribeRequest struct {
	ItemID        string `json:"itemId"`
	PaymentMethod string `json:"paymentMethod"`
	// Cycle is MONTHLY or YEARLY for a tier with both prices; empty takes
	// the tier's default cycle.
	Cycle string `json:"cycle"`
	// OfferCode is an offer's code (offers.go); a code that does not
	// apply is refused with its reason.
	OfferCode string `json:"offerCode"`
}

// POST /api/subscriptions/apps/:appId/subscribe {itemId, paymentMethod, cycle, offerCode}
func (s *Server) apiSubscribe(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	var req subscribeRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	res, err := s.subscribe(c, sc, req.ItemID, req.PaymentMethod, req.Cycle, req.OfferCode)
	if err != nil {
		return err
	}
	msg := "Payment started"
	switch {
	case res.Trial && res.Payment != nil:
		msg = "Save your card on Stripe's page to start your free trial"
	case res.Trial:
		msg = "Welcome! Your free trial has started"
	case res.Subscription.HasValidSubscription && res.Order.Status != store.OrderPending:
		msg = "Welcome! Your membership is active"
	}
	return respondMessage(c, http.StatusOK, res, msg)
}

type cancelRequest struct {
	// Cancel false resumes renewing a membership cancelled at period end.
	Cancel *bool `json:"cancel"`
}

// POST /api/subscriptions/apps/:appId/cancel {cancel}: stop (or resume)
// renewing at the end of the paid period; access lasts until then.
func (s *Server) apiSubscriptionCancel(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	var req cancelRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	cancel := req.Cancel == nil || *req.Cancel
	st, err := s.setCancel(c, sc, cancel)
	if err != nil {
		return err
	}
	msg := "Your membership will end at the end of the current period"
	if !cancel {
		msg = "Your membership will renew"
	}
	return respondMessage(c, http.StatusOK, st, msg)
}

// renewalCanceler is a provider that renews memberships on its side (a
// Stripe subscription) and must hear about cancel at period end.
type renewalCanceler interface {
	SetCancelAtPeriodEnd(ctx context.Context, ref string, cancel bool) error
}

func (s *Server) setCancel(c echo.Context, sc *Scope, cancel bool) (*store.SubscriptionStatus, error) {
	ctx := c.Request().Context()
	if sc.User == nil {
		return nil, unauthorized("Authentication required")
	}
	// The provider hears first: if it cannot be told, the member is not
	// shown a cancellation that would still be charged.
	cur, err := s.store.SubscriptionOf(ctx, sc.App.ID, sc.User.ID)
	if err != nil {
		return nil, err
	}
	if cur != nil && cur.ProviderRef != "" && cur.Provider == payments.PayPal && !cancel && cur.CancelAtPeriodEnd {
		// PayPal has no undo for a cancelled subscription.
		return nil, &Error{Status: http.StatusConflict, Message: msgPayPalResume}
	}
	if cur != nil && cur.ProviderRef != "" && cur.Provider == payments.PayPal && cancel && cur.CancelAtPeriodEnd {
		// Cancelled already (here or in PayPal): nothing to tell PayPal.
		return s.store.SubscriptionStatusOf(ctx, sc.App.ID, sc.User.ID, time.Now())
	}
	if cur != nil && cur.ProviderRef != "" && cur.Provider != payments.Wallet &&
		(cur.Status == store.SubActive || cur.Status == store.SubPastDue) {
		if p, err := s.payments.Get(cur.Provider); err == nil {
			if rc, ok := p.(renewalCanceler); ok {
				if err := rc.SetCancelAtPeriodEnd(ctx, cur.ProviderRef, cancel); err != nil {
					return nil, &Error{Status: http.StatusBadGateway, Message: "The payment provider could not be reached. Please try again.", Err: err}
				}
			}
		}
	}
	if _, err := s.store.SetCancelAtPeriodEnd(ctx, sc.App.ID, sc.User.ID, cancel); err != nil {
		return nil, answer(err, nil)
	}
	return s.store.SubscriptionStatusOf(ctx, sc.App.ID, sc.User.ID, time.Now())
}

// stopProviderRenewal tells the card provider renewing the member's
// membership of the app (if any) not to renew it again.
func (s *Server) stopProviderRenewal(c echo.Context, appID, userID string) error {
	ctx := c.Request().Context()
	cur, err := s.store.SubscriptionOf(ctx, appID, userID)
	if err != nil || cur == nil || cur.ProviderRef == "" || cur.Provider == payments.Wallet ||
		(cur.Status != store.SubActive && cur.Status != store.SubPastDue) {
		return err
	}
	p, err := s.payments.Get(cur.Provider)
	if err != nil {
		return nil // a provider no longer configured renews nothing here
	}
	if rc, ok := p.(renewalCanceler); ok {
		if err := rc.SetCancelAtPeriodEnd(ctx, cur.ProviderRef, true); err != nil {
			return &Error{Status: http.StatusBadGateway, Message: "The payment provider could not be reached. Please try again.", Err: err}
		}
	}
	return nil
}

// POST /apps/:app/profile/membership (cancel=1 or 0): the profile's Cancel
// membership / Keep membership button without JavaScript.
func (s *Server) formMembership(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	if _, err := s.setCancel(c, sc, c.FormValue("cancel") != "0"); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/profile")
}

// PlanCheckoutData is the plan checkout page: the plan, the wallet balance
// and, after a refused post, why.
type PlanCheckoutData struct {
	Plan *store.ItemView `json:"plan"`
	// Cycle and Price are the billing cycle chosen on the membership page
	// and its price; Current is the member's tier when they hold one
	// (then this is an upgrade or a downgrade).
	Cycle   string                    `json:"cycle" tstype:"'MONTHLY' | 'YEARLY'"`
	Price   int64                     `json:"price"`
	Saving  int64                     `json:"saving"`
	Current *store.Tier               `json:"current"`
	Balance int64                     `json:"balance"`
	Status  *store.SubscriptionStatus `json:"status"`
	Error   string                    `json:"error"`
	// Code is the offer code carried from the membership page (or typed
	// here), Quote its price for this tier and cycle, CodeError why it
	// does not apply.
	Code      string            `json:"code"`
	Quote     *store.OfferQuote `json:"quote"`
	CodeError string            `json:"codeError"`
	// TrialDays is the free trial this join starts (0: none; the member
	// had one, or the tier has none).
	TrialDays int `json:"trialDays"`
	// CardTrial: the trial needs a card (card_trial.go): it starts with
	// the card through Stripe Checkout, the wallet cannot start it, and
	// the card is charged Price on TrialChargeOn unless the member
	// cancels. TrialUsed: the tier has a trial the member cannot have
	// (they had this app's trial), so this join pays now.
	CardTrial     bool       `json:"cardTrial"`
	TrialChargeOn *time.Time `json:"trialChargeOn"`
	TrialUsed     bool       `json:"trialUsed"`
	// OtherMethods are the ways to pay besides the wallet (card, PayPal)
	// the deployment offers in this app; they pay on the checkout's
	// payment step.
	OtherMethods []string `json:"otherMethods"`
	// Follows: the viewer follows the app (or more). The wallet and the
	// payment step are the store's pages, open to followers, so a fan who
	// does not follow yet adds funds through a form that follows first.
	Follows bool `json:"follows"`
}

// GET /apps/:app/checkout/plan/:itemId: the Subscribe button of the gated
// screen lands here (a checkout path, so the gate lets it through).
func (s *Server) pagePlanCheckout(c echo.Context) error {
	return s.renderPlanCheckout(c, "", http.StatusOK)
}

func (s *Server) renderPlanCheckout(c echo.Context, errMsg string, status int) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusFound, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	ctx := c.Request().Context()
	plans, err := s.store.SubscriptionItems(ctx, sc.App.ID)
	if err != nil {
		return err
	}
	data := PlanCheckoutData{Error: errMsg}
	for i := range plans {
		if plans[i].ID == c.Param("itemId") {
			data.Plan = &plans[i]
		}
	}
	if data.Plan == nil {
		return notFound("Subscription plan not found")
	}
	tiers, err := s.tiersOf(c, sc)
	if err != nil {
		return err
	}
	data.Current = tiers.Current
	for _, t := range tiers.Tiers {
		if t.ItemID != data.Plan.ID {
			continue
		}
		data.Cycle = c.QueryParam("cycle")
		if data.Cycle == "" {
			data.Cycle = c.FormValue("cycle")
		}
		switch {
		case data.Cycle == store.CycleYearly && t.YearlyPrice != nil:
			data.Price, data.Saving = *t.YearlyPrice, t.YearlySaving
		case data.Cycle == store.CycleMonthly && t.MonthlyPrice != nil:
			data.Price = *t.MonthlyPrice
		default:
			data.Cycle, data.Price = data.Plan.SubscriptionPlan.BillingCycle, data.Plan.Price
		}
	}
	if data.Balance, err = s.store.WalletBalance(ctx, sc.App.ID, sc.User.ID); err != nil {
		return err
	}
	data.Follows = sc.Can.CanAccessStore
	data.Code = store.NormalizeOfferCode(c.QueryParam("code"))
	if data.Code == "" {
		data.Code = store.NormalizeOfferCode(c.FormValue("code"))
	}
	if data.Code != "" {
		q, err := s.store.QuoteOffer(ctx, sc.App.ID, sc.User.ID, data.Plan.ID, data.Cycle, data.Code, time.Now())
		switch e := answer(err, nil); {
		case err == nil:
			data.Quote = q
		case isErrStatusBelow500(e):
			data.CodeError = e.(*Error).Message
		default:
			return err
		}
	}
	if err := s.planTrial(ctx, sc, &data, tiers); err != nil {
		return err
	}
	if data.Status, err = s.store.SubscriptionStatusOf(ctx, sc.App.ID, sc.User.ID, time.Now()); err != nil {
		return err
	}
	// The card first, then PayPal: the way most fans pay.
	data.OtherMethods = []string{}
	offered := s.paymentConfig(ctx, sc.App.ID).Methods
	for _, m := range []string{payments.Stripe, payments.PayPal} {
		if slices.Contains(offered, m) {
			data.OtherMethods = append(data.OtherMethods, m)
		}
	}
	props := s.pageProps(c, sc)
	props.Data = data
	props.Status = status
	c.Response().Header().Set("Cache-Control", "no-cache")
	return s.renderPage(c, "PlanCheckout", props)
}

// POST /apps/:app/checkout/plan/:itemId: pay with the wallet, then into the
// profile, which confirms the membership (the gate is open now), or the
// page again with the reason.
func (s *Server) formPlanCheckout(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	// Joining follows the app: the payment step, the wallet and the orders
	// are the store's pages, open to followers; a fan who signed up from
	// the app and joined at once would meet "Follow App to Access Store"
	// on the way to paying.
	if !sc.Can.CanAccessStore && access.CanFollowApp(sc.Role) {
		if _, err := s.store.Follow(c.Request().Context(), sc.App.ID, sc.User.ID); err != nil {
			return err
		}
	}
	if c.FormValue("pay") == "card-trial" {
		return s.formCardTrial(c, sc)
	}
	if c.FormValue("pay") == "other" {
		// Card or PayPal: the membership's order, paid on the checkout's
		// payment step (which the gate lets through), as a cart's is.
		order, err := s.tierOrder(c, sc, c.Param("itemId"), c.FormValue("cycle"), c.FormValue("code"))
		if err != nil {
			if e, ok := err.(*Error); ok && e.Status < 500 && e.Status != http.StatusNotFound {
				return s.renderPlanCheckout(c, e.Message, e.Status)
			}
			return err
		}
		return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/checkout?orderId="+url.QueryEscape(order.ID)+"&step=payment")
	}
	if _, err := s.subscribe(c, sc, c.Param("itemId"), payments.Wallet, c.FormValue("cycle"), c.FormValue("code")); err != nil {
		if e, ok := err.(*Error); ok && e.Status < 500 && e.Status != http.StatusNotFound {
			return s.renderPlanCheckout(c, e.Message, e.Status)
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/profile?joined=1")
}

// isErrStatusBelow500: err is an *Error the member can act on.
func isErrStatusBelow500(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Status < 500
}
