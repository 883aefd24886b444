package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	sg "github.com/stripe/stripe-go/v85"
	"github.com/uptrace/bun"

	"marquee/server/payments"
	"marquee/store"
)

// Provider is the card method: a PaymentIntent per order, the browser's
// Payment Element collects the card, and the order becomes PAID when Stripe
// says so (a retrieve after the browser's confirm, or a signed webhook).
type Provider struct {
	Client         *Client
	Store          *store.Storage
	PublishableKey string
	Logger         *slog.Logger
	// Grace is how long a membership whose renewal failed keeps access;
	// 0 is store.DefaultGracePeriod.
	Grace time.Duration
	// PayoutsRequired (PAYOUTS_REQUIRED) refuses card payments of an app
	// whose connected account cannot take charges yet; without it they go
	// to the platform's own account.
	PayoutsRequired bool
	// ConnectWebhookSecret signs the Connect endpoint's events
	// (STRIPE_CONNECT_WEBHOOK_SECRET).
	ConnectWebhookSecret string
}

var (
	_ payments.Provider = (*Provider)(nil)
	_ payments.Webhooks = (*Provider)(nil)
)

func (p *Provider) Name() string { return payments.Stripe }

func (p *Provider) log() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

// Start answers the order's PaymentIntent, creating it at most once: the
// idempotency key is derived from the order, so fifty concurrent Pay clicks
// get the same PaymentIntent from Stripe.
func (p *Provider) Start(ctx context.Context, req payments.StartRequest) (*payments.Started, error) {
	o := req.Order
	if o.Status != store.OrderPending {
		return nil, store.ErrIllegalTransition
	}
	// A later click reuses the intent already attached, without asking
	// Stripe to create anything.
	if o.PaymentMethod == payments.Stripe && strings.HasPrefix(o.PaymentRef, "pi_") {
		in, err := p.Client.Retrieve(ctx, o.PaymentRef)
		if err == nil && in.OrderID == o.ID && in.Amount == o.Total && in.Status != string(sg.PaymentIntentStatusCanceled) {
			return &payments.Started{Ref: in.ID, ClientSecret: in.ClientSecret, Status: in.Status}, nil
		}
	}
	meta := map[string]string{"orderNumber": o.OrderNumber, "appId": o.AppID, "userId": o.UserID}
	for k, v := range req.Metadata {
		if _, taken := meta[k]; !taken && k != "orderId" {
			meta[k] = v
		}
	}
	dest, fee, err := p.Destination(ctx, o.AppID, o.Total)
	if err != nil {
		return nil, err
	}
	ci := CreateIntent{OrderID: o.ID, Amount: o.Total, Currency: o.Currency, Email: req.Payer.Email, Metadata: meta,
		IdempotencyKey: ConnectKey(IntentKey(o.ID, o.Total, o.Currency), dest, fee), Destination: dest, ApplicationFee: fee}
	membership, err := p.Store.OrderBuysMembership(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	if membership {
		// A membership renews off-session with this card, however it was
		// bought (the Subscribe button or a cart holding a plan): the
		// intent saves it on a customer of its own (one per order, by key).
		meta["kind"] = "subscription"
		cu, err := p.Client.CreateCustomer(ctx, req.Payer.Email, map[string]string{"appId": o.AppID, "userId": o.UserID},
			"marquee-order-"+o.ID+"-customer")
		if err != nil {
			return nil, payments.ProviderError("stripe", err)
		}
		ci.Customer = cu
	}
	in, err := p.Client.CreateIntent(ctx, ci)
	// Back from another method: the intent this key made was cancelled
	// when the buyer switched (store.AttachPayment), and Stripe answers a
	// key with its first answer, so ask how it stands now and make a fresh
	// one keyed by the cancelled one (concurrent clicks still make one).
	for try := 0; err == nil && o.PaymentRef != "" && try < 5; try++ {
		cur, rerr := p.Client.Retrieve(ctx, in.ID)
		if rerr != nil {
			err = rerr
			break
		}
		if cur.Status != string(sg.PaymentIntentStatusCanceled) {
			break
		}
		ci.IdempotencyKey += "-after-" + in.ID
		in, err = p.Client.CreateIntent(ctx, ci)
	}
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if in.OrderID != o.ID || in.Amount != o.Total {
		return nil, payments.ErrNotThisOrder
	}
	if err := p.Store.AttachPayment(ctx, o.ID, payments.Stripe, in.ID); err != nil {
		return nil, err
	}
	return &payments.Started{Ref: in.ID, ClientSecret: in.ClientSecret, Status: in.Status}, nil
}

// Confirm asks Stripe about req.Ref (confirming it first when the browser
// sent a payment method) and marks the order PAID only if Stripe says the
// whole amount was received. A declined card leaves the order PENDING with
// Stripe's reason.
func (p *Provider) Confirm(ctx context.Context, req payments.ConfirmRequest) (*payments.Result, error) {
	o := req.Order
	if req.Ref == "" || req.Ref != o.PaymentRef {
		return nil, payments.ErrNotThisOrder
	}
	if o.Status != store.OrderPending {
		if o.PaidAt != nil && o.PaymentMethod == payments.Stripe && o.PaymentRef == req.Ref {
			// A second click after the first paid: the same success.
			return &payments.Result{Order: o, Ref: req.Ref, Status: string(sg.PaymentIntentStatusSucceeded)}, nil
		}
		// Cancelled, expired or paid another way: nothing is confirmed.
		// If the intent was paid all the same, recording it gives the
		// money back (store.PayOrderTx writes the refund job).
		if in, err := p.Client.Retrieve(ctx, req.Ref); err == nil && in.OrderID == o.ID &&
			sg.PaymentIntentStatus(in.Status) == sg.PaymentIntentStatusSucceeded {
			if _, err := p.paid(ctx, "intent:"+in.ID+":succeeded", "payment_intent.retrieved", o, in); err != nil &&
				!errors.Is(err, store.ErrIllegalTransition) && !errors.Is(err, payments.ErrNotThisOrder) {
				return nil, err
			}
		}
		return nil, store.ErrIllegalTransition
	}
	var in *Intent
	var err error
	if req.PaymentMethodID != "" {
		in, err = p.Client.Confirm(ctx, req.Ref, req.PaymentMethodID, "")
		var ce *CardError
		if err != nil && !errors.As(err, &ce) {
			// A double click: the other click's confirm went through
			// first, and Stripe refuses to confirm a succeeded intent.
			// What the intent says now is the answer to both.
			in, err = p.Client.Retrieve(ctx, req.Ref)
		}
	} else {
		in, err = p.Client.Retrieve(ctx, req.Ref)
	}
	var ce *CardError
	if errors.As(err, &ce) {
		p.recordFailure(ctx, o, req.Ref, "confirm:"+req.Ref+":"+store.NewID(), ce.Message)
		return nil, payments.Declined(ce.Message)
	}
	if err != nil {
		return nil, payments.ProviderError("stripe", err)
	}
	if in.OrderID != o.ID {
		return nil, payments.ErrNotThisOrder
	}
	switch sg.PaymentIntentStatus(in.Status) {
	case sg.PaymentIntentStatusSucceeded:
		return p.paid(ctx, "intent:"+in.ID+":succeeded", "payment_intent.retrieved", o, in)
	case sg.PaymentIntentStatusRequiresPaymentMethod:
		if in.FailureMessage != "" {
			return nil, payments.Declined(in.FailureMessage)
		}
	}
	// processing, requires_action, requires_confirmation: not paid yet; the
	// webhook or a later confirm finishes it.
	return &payments.Result{Order: o, Ref: in.ID, Status: in.Status}, nil
}

func (p *Provider) paid(ctx context.Context, eventID, typ string, order *store.Order, in *Intent) (*payments.Result, error) {
	orderID := order.ID
	ev := &store.PaymentEvent{Provider: payments.Stripe, EventID: eventID, Type: typ, AppID: &order.AppID, OrderID: &orderID,
		PaymentRef: in.ID, Amount: in.AmountReceived, Currency: in.Currency}
	o, _, err := p.Store.ApplyPaymentEvent(ctx, ev, func(ctx context.Context, tx bun.Tx, o *store.Order) (string, error) {
		return p.Store.PayOrderTx(ctx, tx, o, payments.Stripe, in.ID, in.AmountReceived, in.Currency)
	})
	if err != nil {
		return nil, err
	}
	switch ev.Outcome {
	case store.OutcomeMismatch, store.OutcomeNotPayable:
		p.log().Warn("stripe payment not applied: it is being refunded", "order", orderID, "intent", in.ID, "outcome", ev.Outcome,
			"amount", in.AmountReceived, "currency", in.Currency)
	}
	if o.Status == store.OrderPending {
		return nil, payments.ErrNotThisOrder
	}
	if o.PaidAt == nil || o.PaymentMethod != payments.Stripe || o.PaymentRef != in.ID {
		// Cancelled, or paid another way: this payment is refunded.
		return nil, store.ErrIllegalTransition
	}
	p.bookProcessorFee(ctx, o.AppID, "order:"+o.ID, &o.ID, in, "Order "+o.OrderNumber)
	return &payments.Result{Order: o, Ref: in.ID, Status: in.Status}, nil
}

func (p *Provider) recordFailure(ctx context.Context, o *store.Order, ref, eventID, message string) {
	ev := &store.PaymentEvent{Provider: payments.Stripe, EventID: eventID, Type: "payment_intent.payment_failed",
		AppID: &o.AppID, OrderID: &o.ID, PaymentRef: ref, Message: message}
	if _, _, err := p.Store.ApplyPaymentEvent(ctx, ev, func(context.Context, bun.Tx, *store.Order) (string, error) {
		return store.OutcomeFailed, nil
	}); err != nil {
		p.log().Warn("record failed card payment", "order", o.ID, "err", err)
	}
}

// Refund gives back req.Amount (0: all that is left) at Stripe. The amount
// is set aside on the order first (store.BeginRefund, under the order's row
// lock), so concurrent refunds never ask Stripe for more than was paid, and
// each refund has its own idempotency key: a retry of one refund is one
// refund, two refunds are two. A refund reaching the total makes the order
// REFUNDED; a smaller one records refundedAmount.
func (p *Provider) Refund(ctx context.Context, req payments.RefundRequest) (*store.Order, error) {
	o := req.Order
	amount, err := payments.RefundAmount(req, payments.Stripe)
	if err != nil {
		return nil, err
	}
	pr, err := p.Store.BeginRefund(ctx, o.AppID, o.ID, payments.Stripe, amount, req.Reason)
	if err != nil {
		return nil, err
	}
	var r *Refund
	in, err := p.Client.Retrieve(ctx, pr.Ref)
	if err == nil {
		// A destination charge takes the refund back from the creator's
		// account and gives the platform's fee back in proportion.
		r, err = p.Client.CreateRefund(ctx, pr.Ref, pr.Amount, RefundKey(pr.ID), in.Destination != "")
	}
	if err != nil {
		if _, ferr := p.Store.FinishRefund(ctx, pr, "", err); ferr != nil {
			p.log().Error("stripe refund failed and could not be given back", "order", o.ID, "err", ferr)
		}
		return nil, payments.ProviderError("stripe refund", err)
	}
	return p.Store.FinishRefund(ctx, pr, r.ID, nil)
}

// HandleWebhook verifies a delivery's Stripe-Signature and applies it. Each
// event id is applied once (payment_events); a repeat answers the order as
// it stands with status "duplicate".
func (p *Provider) HandleWebhook(ctx context.Context, body []byte, header http.Header) (*payments.Result, error) {
	ev, err := p.Client.VerifyEvent(body, header.Get("Stripe-Signature"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", payments.ErrInvalidWebhook, err)
	}
	switch ev.Type {
	case "payment_intent.succeeded", "payment_intent.payment_failed":
		var pi sg.PaymentIntent
		if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
			return nil, fmt.Errorf("%w: payment intent: %v", payments.ErrInvalidWebhook, err)
		}
		in := intentOf(&pi)
		if in.DonationID != "" && in.OrderID == "" {
			return p.webhookDonation(ctx, ev, in)
		}
		if in.TopupID != "" && in.OrderID == "" {
			return p.webhookTopup(ctx, ev, in)
		}
		o, err := p.Store.OrderByID(ctx, in.OrderID)
		if errors.Is(err, store.ErrNotFound) {
			// Not ours (another integration on the same account): nothing to do.
			return &payments.Result{Ref: in.ID, Status: store.OutcomeIgnored}, nil
		}
		if err != nil {
			return nil, err
		}
		if ev.Type == "payment_intent.succeeded" {
			return p.webhookPaid(ctx, ev, o, in)
		}
		rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), AppID: &o.AppID,
			OrderID: &o.ID, PaymentRef: in.ID, Amount: in.Amount, Currency: in.Currency, Message: in.FailureMessage}
		o, fresh, err := p.Store.ApplyPaymentEvent(ctx, rec, func(context.Context, bun.Tx, *store.Order) (string, error) {
			return store.OutcomeFailed, nil
		})
		if err != nil {
			return nil, err
		}
		return &payments.Result{Order: o, Ref: in.ID, Status: statusOf(rec, fresh)}, nil
	case "checkout.session.completed":
		return p.webhookCheckout(ctx, ev)
	case "invoice.paid", "invoice.payment_failed":
		var inv sg.Invoice
		if err := json.Unmarshal(ev.Data.Raw, &inv); err != nil {
			return nil, fmt.Errorf("%w: invoice: %v", payments.ErrInvalidWebhook, err)
		}
		ref, periodEnd := invoiceRenewal(&inv)
		if ref == "" {
			return &payments.Result{Status: store.OutcomeIgnored}, nil // a one-off invoice
		}
		if inv.BillingReason == sg.InvoiceBillingReasonSubscriptionUpdate {
			// An upgrade's prorated difference: the period stays.
			if ev.Type != "invoice.paid" {
				return &payments.Result{Ref: ref, Status: store.OutcomeIgnored}, nil
			}
			rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), PaymentRef: ref,
				Amount: inv.AmountPaid, Currency: strings.ToUpper(string(inv.Currency))}
			fresh, err := p.Store.ApplyProviderUpgradeInvoice(ctx, rec, ref, inv.ID)
			if err != nil {
				return nil, err
			}
			return &payments.Result{Ref: ref, Status: statusOf(rec, fresh)}, nil
		}
		if ev.Type == "invoice.paid" {
			return p.renewal(ctx, ev, ref, "paid", periodEnd, inv.AmountPaid, string(inv.Currency))
		}
		return p.renewal(ctx, ev, ref, "failed", time.Time{}, inv.AmountDue, string(inv.Currency))
	case "customer.subscription.created":
		// A card trial's subscription (card_trial.go); any other was
		// made by StartRenewals, which links it itself.
		res, err := p.webhookTrialSubscription(ctx, ev)
		if err != nil || res != nil {
			return res, err
		}
		return &payments.Result{Status: store.OutcomeIgnored}, nil
	case "customer.subscription.updated":
		// A card trial's subscription whose card was just saved starts
		// the trial; then, as for any membership, the change is applied.
		if _, err := p.webhookTrialSubscription(ctx, ev); err != nil {
			return nil, err
		}
		var sent sg.Subscription
		if err := json.Unmarshal(ev.Data.Raw, &sent); err != nil || sent.ID == "" {
			return nil, fmt.Errorf("%w: subscription: %v", payments.ErrInvalidWebhook, err)
		}
		// The event's copy may be older than a change made since (an
		// upgrade's echo delivered after the downgrade that followed it
		// would call the downgrade off): what Stripe bills now is read.
		sub, err := p.Client.Subscription(ctx, sent.ID)
		if err != nil {
			return nil, payments.ProviderError("stripe", err)
		}
		planID, amount, currency := "", int64(0), sub.Currency
		if sub.Items != nil && len(sub.Items.Data) == 1 && sub.Items.Data[0].Price != nil {
			pr := sub.Items.Data[0].Price
			planID, amount, currency = pr.Metadata["planId"], pr.UnitAmount, pr.Currency
		}
		rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), PaymentRef: sub.ID,
			Amount: amount, Currency: strings.ToUpper(string(currency))}
		fresh, err := p.Store.ApplyProviderPlanChange(ctx, rec, sub.ID, planID, amount, sub.CancelAtPeriodEnd)
		if err != nil {
			return nil, err
		}
		return &payments.Result{Ref: sub.ID, Status: statusOf(rec, fresh)}, nil
	case "customer.subscription.deleted":
		var sub sg.Subscription
		if err := json.Unmarshal(ev.Data.Raw, &sub); err != nil || sub.ID == "" {
			return nil, fmt.Errorf("%w: subscription: %v", payments.ErrInvalidWebhook, err)
		}
		return p.renewal(ctx, ev, sub.ID, "ended", time.Time{}, 0, "")
	case "charge.refunded":
		var ch sg.Charge
		if err := json.Unmarshal(ev.Data.Raw, &ch); err != nil {
			return nil, fmt.Errorf("%w: charge: %v", payments.ErrInvalidWebhook, err)
		}
		if ch.PaymentIntent == nil {
			return &payments.Result{Status: store.OutcomeIgnored}, nil
		}
		o, err := p.Store.OrderByProviderRef(ctx, payments.Stripe, ch.PaymentIntent.ID)
		if errors.Is(err, store.ErrNotFound) {
			return &payments.Result{Ref: ch.PaymentIntent.ID, Status: store.OutcomeIgnored}, nil
		}
		if err != nil {
			return nil, err
		}
		// Stripe sends charge.refunded for partial refunds too: the
		// charge's amount_refunded is all refunded so far, which only
		// reaching the total makes the order REFUNDED.
		rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), AppID: &o.AppID,
			OrderID: &o.ID, PaymentRef: ch.PaymentIntent.ID, Amount: ch.AmountRefunded, Currency: strings.ToUpper(string(ch.Currency))}
		o, fresh, err := p.Store.ApplyPaymentEvent(ctx, rec, func(ctx context.Context, tx bun.Tx, o *store.Order) (string, error) {
			return p.Store.RefundTotalTx(ctx, tx, o, ch.AmountRefunded, "Refunded in Stripe")
		})
		if err != nil {
			return nil, err
		}
		return &payments.Result{Order: o, Ref: ch.PaymentIntent.ID, Status: statusOf(rec, fresh)}, nil
	}
	return &payments.Result{Status: store.OutcomeIgnored}, nil
}

func (p *Provider) webhookPaid(ctx context.Context, ev sg.Event, o *store.Order, in *Intent) (*payments.Result, error) {
	rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), AppID: &o.AppID,
		OrderID: &o.ID, PaymentRef: in.ID, Amount: in.AmountReceived, Currency: in.Currency}
	o, fresh, err := p.Store.ApplyPaymentEvent(ctx, rec, func(ctx context.Context, tx bun.Tx, o *store.Order) (string, error) {
		return p.Store.PayOrderTx(ctx, tx, o, payments.Stripe, in.ID, in.AmountReceived, in.Currency)
	})
	if err != nil {
		return nil, err
	}
	if rec.Outcome == store.OutcomeMismatch || rec.Outcome == store.OutcomeNotPayable {
		p.log().Warn("stripe payment not applied: it is being refunded", "order", o.ID, "intent", in.ID, "outcome", rec.Outcome)
	}
	if o.PaidAt != nil && o.PaymentMethod == payments.Stripe && o.PaymentRef == in.ID {
		p.bookProcessorFee(ctx, o.AppID, "order:"+o.ID, &o.ID, in, "Order "+o.OrderNumber)
	}
	return &payments.Result{Order: o, Ref: in.ID, Status: statusOf(rec, fresh)}, nil
}

// statusOf names what a delivery did: the outcome, or "duplicate" for an
// event seen before.
func statusOf(ev *store.PaymentEvent, fresh bool) string {
	if !fresh {
		return "duplicate"
	}
	return ev.Outcome
}

// RenewalKey is the idempotency key of the Stripe subscription (and its
// price) that renews membership subID as bought by orderID: a retry after a
// lost answer asks Stripe with the same key and so gets the same
// subscription. The order is part of it because a membership row is reused
// when its member buys again later, and that purchase needs a subscription
// of its own. Stripe replays a failure it answered (a 500 too) to its key
// forever, so refused is how many tries Stripe answered with a failure: each
// moves the key on.
func RenewalKey(subID, orderID string, refused int) string {
	key := "marquee-subscription-" + subID + "-order-" + orderID + "-renewal"
	if refused > 0 {
		key += fmt.Sprintf("-retry-%d", refused)
	}
	return key
}

// storedFailure marks err as an answer Stripe keeps for the request's
// idempotency key (any error status but 409, which means "in flight").
func storedFailure(err error) error {
	var se *sg.Error
	if errors.As(err, &se) && se.HTTPStatusCode != 0 && se.HTTPStatusCode != http.StatusConflict {
		return fmt.Errorf("%w: %w", payments.ErrStoredFailure, err)
	}
	return err
}

// StartRenewals makes the Stripe subscription that renews the membership a
// paid card order bought, starting when the paid period ends (trial_end),
// so the first period is charged once. It is the start_card_renewal job's
// work (enqueued in the transaction that marked the order PAID): an error
// means "try again later" and river retries; nil means done or nothing to
// do (the order did not buy a membership, a later purchase or a refund
// superseded it, or it is linked already). The idempotency key and the
// conditional SetProviderRef make any number of runs one subscription;
// refused is how many earlier runs Stripe answered with a failure
// (payments.ErrStoredFailure), which moves the key on (RenewalKey).
func (p *Provider) StartRenewals(ctx context.Context, orderID string, refused int) error {
	o, err := p.Store.OrderByID(ctx, orderID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.PaymentMethod != payments.Stripe || o.PaymentRef == "" || o.PaidAt == nil ||
		o.Status == store.OrderRefunded || o.Status == store.OrderCancelled {
		return nil
	}
	sub, err := p.Store.SubscriptionOf(ctx, o.AppID, o.UserID)
	if err != nil {
		return err
	}
	if sub == nil || sub.Provider != payments.Stripe || sub.OrderID == nil || *sub.OrderID != o.ID ||
		sub.ProviderRef != "" || sub.Status != store.SubActive || sub.CancelAtPeriodEnd {
		return nil
	}
	if !sub.CurrentPeriodEnd.After(time.Now().Add(time.Minute)) {
		// Stripe wants a trial_end in the future; a membership this close
		// to its end is left to end (or be bought again).
		p.log().Warn("stripe renewals: period already over", "order", o.ID, "subscription", sub.ID)
		return nil
	}
	plan, err := p.Store.PlanOf(ctx, sub.PlanID)
	if err != nil {
		return err
	}
	if plan == nil {
		p.log().Error("stripe renewals: plan is gone", "order", o.ID, "plan", sub.PlanID)
		return nil
	}
	in, err := p.Client.Retrieve(ctx, o.PaymentRef)
	if err != nil {
		return payments.ProviderError("stripe", err)
	}
	if in.Customer == "" {
		// Paid before cards were saved for memberships: there is no card
		// to renew with, so the membership ends with its paid period.
		p.log().Warn("stripe renewals: the card was not saved", "order", o.ID, "intent", in.ID)
		return nil
	}
	interval := "month"
	if sub.Cycle == store.CycleYearly || (sub.Cycle == "" && plan.BillingCycle == store.CycleYearly) {
		interval = "year"
	}
	var feePercent float64
	if in.Destination != "" {
		bp, err := p.Store.AppFeeBP(ctx, o.AppID)
		if err != nil {
			return err
		}
		feePercent = float64(bp) / 100
	}
	// A membership bought with an offer code renews at its list price,
	// with a coupon for the payments the code still discounts (the first
	// one was the order's).
	amount, coupon, err := p.renewalOffer(ctx, sub, interval)
	if err != nil {
		return err
	}
	id, err := p.Client.CreateSubscription(ctx, Renewal{Customer: in.Customer, PaymentMethod: in.PaymentMethod,
		Destination: in.Destination, FeePercent: feePercent, Coupon: coupon,
		Name: plan.Name, Amount: amount, Currency: sub.Currency, Interval: interval, TrialEnd: sub.CurrentPeriodEnd,
		Metadata:       map[string]string{"appId": o.AppID, "userId": o.UserID, "planId": plan.ID, "orderId": o.ID, "subscriptionId": sub.ID},
		IdempotencyKey: RenewalKey(sub.ID, o.ID, refused)})
	if err != nil {
		return payments.ProviderError("stripe", storedFailure(err))
	}
	linked, err := p.Store.SetProviderRef(ctx, sub.ID, o.ID, id)
	if err != nil {
		return err
	}
	if !linked {
		if cur, err := p.Store.SubscriptionOf(ctx, o.AppID, o.UserID); err == nil && cur != nil && cur.ProviderRef != id {
			p.log().Error("stripe renewals: membership moved on before its subscription was linked; cancel it in Stripe",
				"order", o.ID, "stripeSubscription", id)
		}
	}
	return nil
}

// renewalOffer answers what a card membership renews at and the coupon for
// its offer code, if the code discounts any renewal: none for a code used
// once, for ever for FOREVER, and for the first months as many months as
// renewals it still discounts: the coupon's months count from the
// subscription's creation (now, a little after the paid period began), so
// they end just after the last discounted renewal's invoice.
func (p *Provider) renewalOffer(ctx context.Context, sub *store.Subscription, interval string) (int64, *Coupon, error) {
	if sub.OfferID == nil || sub.ListAmount <= 0 {
		return sub.Amount, nil, nil
	}
	if sub.DiscountLeft == 0 {
		return sub.ListAmount, nil, nil
	}
	o, err := p.Store.OfferByID(ctx, *sub.OfferID)
	if errors.Is(err, store.ErrNotFound) {
		return sub.ListAmount, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	c := &Coupon{PercentOff: o.PercentOff, AmountOff: o.AmountOff, Duration: "forever", Code: o.Code, OfferID: o.ID}
	if sub.DiscountLeft > 0 {
		perCycle := int64(1)
		if interval == "year" {
			perCycle = 12
		}
		c.Duration, c.Months = "repeating", sub.DiscountLeft*perCycle
	}
	return sub.ListAmount, c, nil
}

// invoiceRenewal answers the subscription an invoice bills and the end of
// the period it pays for (the latest end among its lines).
func invoiceRenewal(inv *sg.Invoice) (string, time.Time) {
	ref := ""
	if inv.Parent != nil && inv.Parent.SubscriptionDetails != nil && inv.Parent.SubscriptionDetails.Subscription != nil {
		ref = inv.Parent.SubscriptionDetails.Subscription.ID
	}
	var end int64
	if inv.Lines != nil {
		for _, l := range inv.Lines.Data {
			if ref == "" && l.Subscription != nil {
				ref = l.Subscription.ID
			}
			if l.Period != nil && l.Period.End > end {
				end = l.Period.End
			}
		}
	}
	if end == 0 {
		end = inv.PeriodEnd
	}
	return ref, time.Unix(end, 0).UTC()
}

// renewal applies what Stripe says about a membership's subscription ref,
// once per event id.
func (p *Provider) renewal(ctx context.Context, ev sg.Event, ref, event string, periodEnd time.Time, amount int64, currency string) (*payments.Result, error) {
	rec := &store.PaymentEvent{Provider: payments.Stripe, EventID: ev.ID, Type: string(ev.Type), PaymentRef: ref,
		Amount: amount, Currency: strings.ToUpper(currency)}
	_, fresh, err := p.Store.ApplyProviderRenewalEvent(ctx, rec, ref, event, periodEnd, p.Grace)
	if err != nil {
		return nil, err
	}
	return &payments.Result{Ref: ref, Status: statusOf(rec, fresh)}, nil
}

// ChangeTier moves the Stripe subscription renewing a membership to the
// quoted tier: an upgrade is invoiced for its prorated difference at once,
// a downgrade (or calling one off) bills the new price from the next
// invoice. An upgrade's key names the membership, both tiers and the
// period, so a repeated request invoices once; the others only set a
// price, which repeating does not change.
func (p *Provider) ChangeTier(ctx context.Context, q *store.TierChange) error {
	interval := "month"
	if q.Cycle == store.CycleYearly {
		interval = "year"
	}
	key := "tier-" + q.SubscriptionID + "-" + q.From.ID + "-" + q.To.ID + "-" + strconv.FormatInt(q.PeriodEnd.Unix(), 10)
	if q.Direction != store.TierUpgrade {
		key += "-" + store.NewID()
	}
	r := Renewal{Name: q.To.Name, Amount: q.Price, Currency: q.Currency,
		Interval: interval, Metadata: map[string]string{"planId": q.To.ID}, IdempotencyKey: key}
	if o := q.Offer; o != nil && o.Offer != nil && q.Direction == store.TierUpgrade {
		// The upgrade's code, as the offer's coupon (Stripe's own
		// durations: once is the upgrade's invoice).
		r.Coupon = &Coupon{PercentOff: o.Offer.PercentOff, AmountOff: o.Offer.AmountOff, Code: o.Offer.Code, OfferID: o.Offer.ID}
		switch o.Offer.Duration {
		case store.OfferOnce:
			r.Coupon.Duration = "once"
		case store.OfferRepeating:
			r.Coupon.Duration, r.Coupon.Months = "repeating", o.Offer.DurationMonths
		default:
			r.Coupon.Duration = "forever"
		}
		key += "-offer-" + o.Offer.ID
	}
	err := p.Client.ChangePrice(ctx, q.ProviderRef, r, q.Direction == store.TierUpgrade)
	if err != nil {
		return payments.ProviderError("stripe", err)
	}
	return nil
}

// PortalURL answers a Stripe Billing Portal session for the customer whose
// subscription ref renews a membership.
func (p *Provider) PortalURL(ctx context.Context, ref, returnURL string) (string, error) {
	u, err := p.Client.PortalURL(ctx, ref, returnURL)
	if err != nil {
		return "", payments.ProviderError("stripe", err)
	}
	return u, nil
}

// SetCancelAtPeriodEnd tells Stripe to stop (or resume) renewing the
// membership subscription ref at the end of its period.
func (p *Provider) SetCancelAtPeriodEnd(ctx context.Context, ref string, cancel bool) error {
	if err := p.Client.SetCancelAtPeriodEnd(ctx, ref, cancel); err != nil {
		return payments.ProviderError("stripe", err)
	}
	return nil
}

// RefundStray gives back amount of PaymentIntent ref, a payment its order
// could not take (the refund_stray_payment job). The key is the payment's,
// so the job's retries refund once; refused moves it on past failures
// Stripe keeps for a key. A payment refunded already is done.
func (p *Provider) RefundStray(ctx context.Context, ref string, amount int64, refused int) error {
	key := "marquee-stray-" + ref
	if refused > 0 {
		key += fmt.Sprintf("-retry-%d", refused)
	}
	if strings.HasPrefix(ref, "cs_") {
		// A Checkout Session's payment is its PaymentIntent's.
		cs, err := p.Client.RetrieveCheckout(ctx, ref)
		if err != nil {
			return payments.ProviderError("stripe stray refund", err)
		}
		if cs.PaymentIntent == "" {
			return nil // never paid
		}
		ref = cs.PaymentIntent
	}
	in, err := p.Client.Retrieve(ctx, ref)
	if err != nil {
		return payments.ProviderError("stripe stray refund", err)
	}
	if _, err := p.Client.CreateRefund(ctx, ref, amount, key, in.Destination != ""); err != nil {
		var se *sg.Error
		if errors.As(err, &se) && se.Code == sg.ErrorCodeChargeAlreadyRefunded {
			return nil
		}
		return payments.ProviderError("stripe stray refund", storedFailure(err))
	}
	p.log().Info("stripe payment refunded: its order could not take it", "intent", ref, "amount", amount)
	return nil
}

// CancelPayment cancels PaymentIntent ref of a cancelled or expired order
// (the cancel_payment job). An intent that succeeded meanwhile is left: its
// payment was recorded NOT_PAYABLE and is refunded by its own job.
func (p *Provider) CancelPayment(ctx context.Context, ref string) error {
	if strings.HasPrefix(ref, "cs_") {
		// An expired top-up's Checkout Session.
		if err := p.Client.ExpireCheckout(ctx, ref); err != nil && !errors.Is(err, ErrIntentNotOpen) {
			return payments.ProviderError("stripe expire checkout", err)
		}
		return nil
	}
	if err := p.Client.Cancel(ctx, ref); err != nil && !errors.Is(err, ErrIntentNotOpen) {
		return payments.ProviderError("stripe cancel", err)
	}
	return nil
}

// Destination answers where a card payment of amount for the app goes: its
// connected account and the platform's fee when the account can take
// charges; the platform's own account ("", 0) otherwise, unless payouts
// are required, which refuses the payment (payments.ErrDisabled).
func (p *Provider) Destination(ctx context.Context, appID string, amount int64) (string, int64, error) {
	pa, err := p.Store.PayoutAccountOf(ctx, appID)
	if err != nil {
		return "", 0, err
	}
	if !pa.ChargesReady() {
		if p.PayoutsRequired {
			return "", 0, payments.ErrDisabled
		}
		return "", 0, nil
	}
	fee, err := p.Store.PlatformFee(ctx, appID, amount)
	if err != nil {
		return "", 0, err
	}
	return pa.StripeAccountID, fee, nil
}

// CardOffered reports whether the app's members may pay by card.
func (p *Provider) CardOffered(ctx context.Context, appID string) bool {
	if !p.PayoutsRequired {
		return true
	}
	pa, err := p.Store.PayoutAccountOf(ctx, appID)
	return err == nil && pa.ChargesReady()
}

// bookProcessorFee books what Stripe kept of a payment in the app's ledger,
// read from the charge's balance transaction: the platform's cost for a
// destination charge, the creator's for a charge on the platform's own
// account. ref is the payment's ledger reference ("order:ID",
// "donation:ID"); it books once however often the payment is reported. A
// fee Stripe cannot tell yet is left (the next report of the payment books
// it), never guessed.
func (p *Provider) bookProcessorFee(ctx context.Context, appID, ref string, orderID *string, in *Intent, memo string) {
	fee, currency, found, err := p.Client.ChargeFee(ctx, in.ID)
	if err != nil || !found {
		if err != nil {
			p.log().Warn("stripe fee not read", "intent", in.ID, "err", err)
		}
		return
	}
	if err := p.Store.BookProcessorFee(ctx, store.ProcessorFee{AppID: appID, Ref: ref, OrderID: orderID, Amount: fee, Currency: currency,
		ByPlatform: in.Destination != "", Memo: memo}); err != nil {
		p.log().Error("stripe fee not booked", "intent", in.ID, "err", err)
	}
}
