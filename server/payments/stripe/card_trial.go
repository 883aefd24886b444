package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sg "github.com/stripe/stripe-go/v85"

	"marquee/server/payments"
	"marquee/store"
)

// Card trials (issue 40 item 5): a tier whose free trial needs a card
// starts it through Stripe Checkout in subscription mode. The member's
// plain form (no JavaScript needed on our page) makes a Checkout Session
// for the tier's price with subscription_data.trial_period_days; Stripe's
// hosted page saves the card and makes the subscription, trialing, on the
// creator's connected account (transfer_data, on_behalf_of and the
// platform's application_fee_percent, as card memberships are). Nothing is
// charged until the trial ends; then Stripe charges the card (invoice.paid
// converts the trial; invoice.payment_failed, or the subscription deleted,
// returns the member to follower: provider.go's renewal events). A trial
// whose card never came is cancelled by Stripe at its end
// (trial_settings.end_behavior.missing_payment_method).
//
// The trial starts when the card is saved, as soon as any of these says
// so, once: checkout.session.completed, customer.subscription.created or
// .updated (trialing, with a default payment method), or the member's
// return from Checkout (ConfirmCardTrial). store.StartCardTrial is
// idempotent and keeps one trial per member per app; a subscription it
// refuses (the member had a trial meanwhile) is cancelled at once.

// Metadata names on a card trial's session and subscription.
const (
	metaKind      = "kind"
	kindCardTrial = "card_trial"
	metaTrialID   = "cardTrialId"
)

// TrialCheckout asks for a Checkout Session that saves a card and starts a
// subscription of Amount every Interval after TrialDays free days.
type TrialCheckout struct {
	Email     string
	Name      string
	Amount    int64
	Currency  string
	Interval  string
	TrialDays int
	// Metadata goes on the session and on its subscription.
	Metadata   map[string]string
	SuccessURL string
	CancelURL  string
	// Destination and FeePercent: the subscription's invoices go to the
	// app's connected account, less FeePercent for the platform.
	Destination string
	FeePercent  float64
	// Coupon discounts the charges an offer code covers.
	Coupon         *Coupon
	IdempotencyKey string
}

// CreateTrialCheckout makes the price (named by its tier, as renewals'
// are) and the Checkout Session; both calls carry keys derived from
// IdempotencyKey, so concurrent joins answer one session.
func (c *Client) CreateTrialCheckout(ctx context.Context, in TrialCheckout) (*CheckoutSession, error) {
	pp := &sg.PriceCreateParams{
		Currency:    sg.String(strings.ToLower(in.Currency)),
		UnitAmount:  sg.Int64(in.Amount),
		Recurring:   &sg.PriceCreateRecurringParams{Interval: sg.String(in.Interval)},
		ProductData: &sg.PriceCreateProductDataParams{Name: sg.String(in.Name)},
	}
	if in.Metadata["planId"] != "" {
		pp.AddMetadata("planId", in.Metadata["planId"])
	}
	pp.SetIdempotencyKey(in.IdempotencyKey + "-price")
	price, err := c.sc.V1Prices.Create(ctx, pp)
	if err != nil {
		return nil, fmt.Errorf("create price: %w", err)
	}
	sd := &sg.CheckoutSessionCreateSubscriptionDataParams{
		TrialPeriodDays: sg.Int64(int64(in.TrialDays)),
		TrialSettings: &sg.CheckoutSessionCreateSubscriptionDataTrialSettingsParams{
			EndBehavior: &sg.CheckoutSessionCreateSubscriptionDataTrialSettingsEndBehaviorParams{MissingPaymentMethod: sg.String("cancel")}},
	}
	if in.Destination != "" {
		sd.OnBehalfOf = sg.String(in.Destination)
		sd.TransferData = &sg.CheckoutSessionCreateSubscriptionDataTransferDataParams{Destination: sg.String(in.Destination)}
		if in.FeePercent > 0 {
			sd.ApplicationFeePercent = sg.Float64(in.FeePercent)
		}
	}
	p := &sg.CheckoutSessionCreateParams{
		Mode:       sg.String(string(sg.CheckoutSessionModeSubscription)),
		SuccessURL: sg.String(in.SuccessURL),
		CancelURL:  sg.String(in.CancelURL),
		LineItems:  []*sg.CheckoutSessionCreateLineItemParams{{Price: sg.String(price.ID), Quantity: sg.Int64(1)}},
		// The card is what the trial is for: collect it though nothing
		// is due today.
		PaymentMethodCollection: sg.String(string(sg.CheckoutSessionPaymentMethodCollectionAlways)),
		SubscriptionData:        sd,
	}
	if in.Email != "" {
		p.CustomerEmail = sg.String(in.Email)
	}
	if off := in.Coupon; off != nil {
		coupon, err := c.ensureCoupon(ctx, off, in.Currency)
		if err != nil {
			return nil, err
		}
		p.Discounts = []*sg.CheckoutSessionCreateDiscountParams{{Coupon: sg.String(coupon)}}
	}
	for k, v := range in.Metadata {
		p.AddMetadata(k, v)
		sd.AddMetadata(k, v)
	}
	p.SetIdempotencyKey(in.IdempotencyKey + "-session")
	cs, err := c.sc.V1CheckoutSessions.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("create checkout session: %w", err)
	}
	return sessionOf(cs), nil
}

// TrialSubscription is the part of a subscription a card trial reads.
type TrialSubscription struct {
	ID            string
	Status        string
	TrialEnd      time.Time
	PaymentMethod string
	Metadata      map[string]string
}

func trialSubscriptionOf(sub *sg.Subscription) *TrialSubscription {
	out := &TrialSubscription{ID: sub.ID, Status: string(sub.Status), Metadata: sub.Metadata}
	if sub.TrialEnd > 0 {
		out.TrialEnd = time.Unix(sub.TrialEnd, 0).UTC()
	}
	if sub.DefaultPaymentMethod != nil {
		out.PaymentMethod = sub.DefaultPaymentMethod.ID
	}
	return out
}

// RetrieveSubscription asks Stripe how a subscription stands.
func (c *Client) RetrieveSubscription(ctx context.Context, id string) (*TrialSubscription, error) {
	sub, err := c.sc.V1Subscriptions.Retrieve(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("retrieve subscription: %w", err)
	}
	return trialSubscriptionOf(sub), nil
}

// CancelSubscription ends a subscription now (one that ended already is
// no failure).
func (c *Client) CancelSubscription(ctx context.Context, id string) error {
	_, err := c.sc.V1Subscriptions.Cancel(ctx, id, nil)
	var se *sg.Error
	if errors.As(err, &se) && se.Code == sg.ErrorCodeResourceMissing && se.HTTPStatusCode == 400 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cancel subscription: %w", err)
	}
	return nil
}

// CardTrialRequest is a member's join of a tier whose trial needs a card.
type CardTrialRequest struct {
	AppID, UserID, Email, ItemID, Cycle, OfferCode string
	// SuccessURL is where Stripe sends the member back ({CHECKOUT_SESSION_ID}
	// is filled in); CancelURL where they go if they leave.
	SuccessURL, CancelURL string
}

// CardTrialStarted answers a card trial join: the Checkout Session to
// send the member to, or Started when the trial runs already.
type CardTrialStarted struct {
	SessionID string
	URL       string
	Started   bool
}

// CardTrialKey is the idempotency key of card trial id's Stripe calls.
func CardTrialKey(id string) string { return "marquee-card-trial-" + id }

// StartCardTrial answers the Checkout Session that starts the member's card
// trial of the tier: the one made already for the same join, else a new one
// (a replaced join's session is expired, so it cannot start a second
// trial). store.ErrTrialTaken when the member had a trial or is a member.
func (p *Provider) StartCardTrial(ctx context.Context, req CardTrialRequest) (*CardTrialStarted, error) {
	for try := 0; try < 2; try++ {
		plan, stale, err := p.Store.ReserveCardTrial(ctx, req.AppID, req.UserID, req.ItemID, req.Cycle, req.OfferCode, time.Now())
		if err != nil {
			return nil, err
		}
		if stale != nil && stale.SessionRef != "" {
			if err := p.Client.ExpireCheckout(ctx, stale.SessionRef); err != nil && !errors.Is(err, ErrIntentNotOpen) {
				p.log().Warn("stripe card trial: a replaced session was not expired", "session", stale.SessionRef, "err", err)
			}
		}
		t := plan.Trial
		if t.SessionRef != "" {
			cs, err := p.Client.RetrieveCheckout(ctx, t.SessionRef)
			if err != nil {
				return nil, payments.ProviderError("stripe", err)
			}
			switch cs.Status {
			case "open":
				return &CardTrialStarted{SessionID: cs.ID, URL: cs.URL}, nil
			case "complete":
				// The card is saved; its report may not have come yet.
				if _, err := p.activateFromSession(ctx, cs); err != nil {
					return nil, err
				}
				return &CardTrialStarted{SessionID: cs.ID, Started: true}, nil
			}
			// Expired: a new join (the row's age makes it new).
			if err := p.Store.CancelPendingCardTrial(ctx, t.ID); err != nil {
				return nil, err
			}
			continue
		}
		cs, err := p.newTrialCheckout(ctx, req, plan)
		if err != nil {
			return nil, err
		}
		stuck, err := p.Store.SetCardTrialSession(ctx, t.ID, cs.ID)
		if err != nil {
			return nil, err
		}
		if stuck != cs.ID {
			// Cannot be (one key, one session), but the recorded one wins.
			cs, err = p.Client.RetrieveCheckout(ctx, stuck)
			if err != nil {
				return nil, payments.ProviderError("stripe", err)
			}
		}
		return &CardTrialStarted{SessionID: cs.ID, URL: cs.URL}, nil
	}
	return nil, payments.ProviderError("stripe", errors.New("the card trial's checkout session expired"))
}

func (p *Provider) newTrialCheckout(ctx context.Context, req CardTrialRequest, plan *store.CardTrialPlan) (*CheckoutSession, error) {
	t := plan.Trial
	dest, _, err := p.Destination(ctx, req.AppID, plan.ListAmount)
	if err != nil {
		return nil, err
	}
	var feePercent float64
	if dest != "" {
		bp, err := p.Store.AppFeeBP(ctx, req.AppID)
		if err != nil {
			return nil, err
		}
		feePercent = float64(bp) / 100
	}
	interval := "month"
	if plan.Cycle == store.CycleYearly {
		interval = "year"
	}
	in := TrialCheckout{Email: req.Email, Name: plan.Name, Amount: plan.ListAmount, Currency: plan.Currency, Interval: interval,
		TrialDays: plan.TrialDays, SuccessURL: req.SuccessURL, CancelURL: req.CancelURL, Destination: dest, FeePercent: feePercent,
		Metadata: map[string]string{metaKind: kindCardTrial, metaTrialID: t.ID, "appId": req.AppID, "userId": req.UserID,
			"planId": t.PlanID, "cycle": plan.Cycle},
		IdempotencyKey: CardTrialKey(t.ID)}
	if o := plan.Offer; o != nil {
		// The code discounts the first charge (at the trial's end) and as
		// many after it as it covers: its months count from the
		// subscription's start, a trial's length before the first charge.
		c := &Coupon{PercentOff: o.PercentOff, AmountOff: o.AmountOff, Duration: "forever", Code: o.Code, OfferID: o.ID}
		if plan.DiscountLeft >= 0 {
			perCycle := int64(1)
			if interval == "year" {
				perCycle = 12
			}
			c.Duration, c.Months = "repeating", (plan.DiscountLeft+1)*perCycle
		}
		in.Coupon = c
	}
	cs, err := p.Client.CreateTrialCheckout(ctx, in)
	if err != nil {
		return nil, payments.ProviderError("stripe", storedFailure(err))
	}
	return cs, nil
}

// ConfirmCardTrial is the member's return from Checkout: Stripe is asked
// how the session stands and, once the card is saved, the trial starts
// (if no webhook started it first). Answers the membership, nil while the
// session is not complete.
func (p *Provider) ConfirmCardTrial(ctx context.Context, userID, sessionID string) (*store.Subscription, error) {
	cs, err := p.Client.RetrieveCheckout(ctx, sessionID)
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if cs.Metadata[metaKind] != kindCardTrial || cs.Metadata["userId"] != userID {
		return nil, payments.ErrNotThisOrder
	}
	if cs.Status != "complete" {
		return nil, nil
	}
	return p.activateFromSession(ctx, cs)
}

func (p *Provider) activateFromSession(ctx context.Context, cs *CheckoutSession) (*store.Subscription, error) {
	if cs.Subscription == "" {
		return nil, nil
	}
	sub, err := p.Client.RetrieveSubscription(ctx, cs.Subscription)
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if sub.Metadata[metaTrialID] == "" {
		sub.Metadata = cs.Metadata
	}
	m, err := p.activateTrial(ctx, sub)
	if err != nil || m != nil {
		return m, err
	}
	// Not trialing any more (cancelled because the trial was refused, or
	// over): the card trial says how it stands.
	t, err := p.Store.CardTrialByID(ctx, sub.Metadata[metaTrialID])
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && t.Status == store.CardTrialCanceled:
		return nil, store.ErrTrialTaken
	case err != nil:
		return nil, err
	case t.Status == store.CardTrialStarted && t.ProviderRef == sub.ID:
		return p.Store.SubscriptionOf(ctx, t.AppID, t.UserID)
	}
	return nil, nil
}

// activateTrial starts the card trial a trialing subscription with a saved
// card is for; a subscription the trial cannot start with is cancelled.
func (p *Provider) activateTrial(ctx context.Context, sub *TrialSubscription) (*store.Subscription, error) {
	id := sub.Metadata[metaTrialID]
	if id == "" || sub.Status != string(sg.SubscriptionStatusTrialing) || sub.PaymentMethod == "" || sub.TrialEnd.IsZero() {
		return nil, nil
	}
	m, fresh, err := p.Store.StartCardTrial(ctx, id, sub.ID, sub.TrialEnd, time.Now())
	if store.CardTrialRefused(err) {
		p.log().Warn("stripe card trial refused: its subscription is cancelled", "cardTrial", id, "subscription", sub.ID, "err", err)
		if cerr := p.Client.CancelSubscription(ctx, sub.ID); cerr != nil {
			return nil, payments.ProviderError("stripe", cerr)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if fresh {
		p.log().Info("stripe card trial started", "cardTrial", id, "subscription", sub.ID, "ends", sub.TrialEnd)
	}
	return m, nil
}

// webhookTrialSubscription applies customer.subscription.created and
// .updated to a card trial: a trialing subscription with its card saved
// starts the trial. It answers nil for any other subscription.
func (p *Provider) webhookTrialSubscription(ctx context.Context, ev sg.Event) (*payments.Result, error) {
	var raw sg.Subscription
	if err := json.Unmarshal(ev.Data.Raw, &raw); err != nil || raw.ID == "" {
		return nil, fmt.Errorf("%w: subscription: %v", payments.ErrInvalidWebhook, err)
	}
	sub := trialSubscriptionOf(&raw)
	if sub.Metadata[metaKind] != kindCardTrial {
		return nil, nil
	}
	if _, err := p.activateTrial(ctx, sub); err != nil && !store.CardTrialRefused(err) {
		return nil, err
	}
	return &payments.Result{Ref: sub.ID, Status: "CARD_TRIAL"}, nil
}

// webhookTrialCheckout applies checkout.session.completed of a card trial.
func (p *Provider) webhookTrialCheckout(ctx context.Context, cs *CheckoutSession) (*payments.Result, error) {
	if cs.Status != "complete" {
		return &payments.Result{Ref: cs.ID, Status: store.OutcomeIgnored}, nil
	}
	if _, err := p.activateFromSession(ctx, cs); err != nil && !store.CardTrialRefused(err) {
		return nil, err
	}
	return &payments.Result{Ref: cs.ID, Status: "CARD_TRIAL"}, nil
}
