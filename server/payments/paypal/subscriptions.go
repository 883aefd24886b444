package paypal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/payments"
	"marquee/store"
)

// Memberships by PayPal (issue 40 item 3) renew through PayPal's
// Subscriptions API. Joining a tier makes (once) the app's catalog product
// and the tier's billing plan for the cycle and price, then a subscription
// to it whose custom_id is the membership's order; the member approves it
// on PayPal, which takes the first payment at once. The order is paid from
// the subscription as PayPal reports it (the return visit and
// BILLING.SUBSCRIPTION.ACTIVATED share Confirm), which starts the
// membership the way every method does (the order's paid effect) and, in
// the same transaction, links it to the subscription. Later cycles arrive
// as PAYMENT.SALE.COMPLETED (a renewal, booked like a card's invoice.paid),
// failures as BILLING.SUBSCRIPTION.PAYMENT.FAILED, and the end as
// BILLING.SUBSCRIPTION.CANCELLED, SUSPENDED or EXPIRED.
//
// Subscriptions are made on the operator's PayPal account, whatever payee
// the app names for its one-off orders: a plan cannot pay another account
// (that needs PayPal's partner onboarding and PayPal-Auth-Assertion), so
// the money is booked in the app's ledger as card money on the platform's
// account is, and paid out with it.

// IsSubscriptionRef reports whether ref is a PayPal subscription id (PayPal
// gives them the prefix I-); an order's PayPal ref is either that or an
// Orders v2 id.
func IsSubscriptionRef(ref string) bool { return strings.HasPrefix(ref, "I-") }

// interval is PayPal's interval unit for a membership cycle.
func interval(cycle string) string {
	if cycle == store.CycleYearly {
		return "YEAR"
	}
	return "MONTH"
}

// catalogID answers the PayPal id kept under key, making it with create
// when there is none. create's PayPal-Request-Id is derived from key, so
// concurrent makers get PayPal's one answer, and the first kept wins.
func (p *Provider) catalogID(ctx context.Context, appID, key string, create func(requestID string) (string, error)) (string, error) {
	id, err := p.Store.PayPalCatalogID(ctx, key)
	if err != nil || id != "" {
		return id, err
	}
	id, err = create("marquee-" + key)
	if err != nil {
		return "", payments.ProviderError("paypal", err)
	}
	return p.Store.SavePayPalCatalogID(ctx, appID, key, id)
}

// planFor answers the PayPal billing plan that bills line: the tier's
// price every cycle, or, with an offer code, the discounted price for the
// payments it discounts (a TRIAL cycle: PayPal's way to price the first
// cycles apart) and the list price after. A plan is keyed by all of that:
// PayPal never changes a plan's price, so a new price makes a new plan and
// members of the old one keep what they agreed to.
func (p *Provider) planFor(ctx context.Context, o *store.Order, line *store.MembershipLine) (string, error) {
	productID, err := p.catalogID(ctx, o.AppID, "product:"+o.AppID, func(key string) (string, error) {
		name := "Memberships"
		if app, err := p.Store.AppByIDOrName(ctx, o.AppID); err == nil && app.Name != "" {
			name = app.Name + " memberships"
		}
		return p.Client.CreateProduct(ctx, name, "Membership tiers of app "+o.AppID, key)
	})
	if err != nil {
		return "", err
	}
	spec := PlanSpec{ProductID: productID, Name: line.Name + " (" + strings.ToLower(line.Cycle) + ")", Currency: line.Currency,
		Interval: interval(line.Cycle), Price: line.Price}
	key := fmt.Sprintf("plan:%s:%s:%s:%d", line.PlanID, line.Cycle, strings.ToUpper(line.Currency), line.Price)
	switch {
	case line.List > 0 && line.DiscountLeft >= 0:
		spec.Price, spec.IntroPrice, spec.IntroCycles = line.List, line.Price, int(line.DiscountLeft)+1
		key = fmt.Sprintf("plan:%s:%s:%s:%d:intro:%d:%d", line.PlanID, line.Cycle, strings.ToUpper(line.Currency), line.List, line.Price, spec.IntroCycles)
	case line.List > 0:
		key += ":offer-forever"
	}
	return p.catalogID(ctx, o.AppID, key, func(requestID string) (string, error) {
		spec.RequestID = requestID
		return p.Client.CreatePlan(ctx, spec)
	})
}

// startSubscription makes (or reuses) the PayPal subscription paying
// membership order o and answers where the member approves it.
func (p *Provider) startSubscription(ctx context.Context, req payments.StartRequest, line *store.MembershipLine) (*payments.Started, error) {
	o := req.Order
	if o.PaymentMethod == payments.PayPal && IsSubscriptionRef(o.PaymentRef) {
		if s, err := p.Client.GetSubscription(ctx, o.PaymentRef); err == nil && s.CustomID == o.ID && s.Status == "APPROVAL_PENDING" && s.ApprovalURL() != "" {
			return &payments.Started{Ref: s.ID, ApprovalURL: s.ApprovalURL(), Status: s.Status}, nil
		}
	}
	planID, err := p.planFor(ctx, o, line)
	if err != nil {
		return nil, err
	}
	s, err := p.Client.CreateSubscription(ctx, CreateSubscription{PlanID: planID, CustomID: o.ID, Email: req.Payer.Email,
		ReturnURL: req.ReturnURL, CancelURL: req.CancelURL,
		RequestID: "marquee-order-" + o.ID + "-paypal-subscription-" + planID})
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	if s.ID == "" {
		return nil, payments.ProviderError("paypal", errors.New("subscription without id"))
	}
	if err := p.Store.AttachPayment(ctx, o.ID, payments.PayPal, s.ID); err != nil {
		return nil, err
	}
	if s.ApprovalURL() == "" {
		return nil, payments.ErrNoApprovalURL
	}
	return &payments.Started{Ref: s.ID, ApprovalURL: s.ApprovalURL(), Status: s.Status}, nil
}

// confirmSubscription pays membership order o from its PayPal subscription
// once PayPal says it is active and took the first payment. Any number of
// confirms (the return visit, its reloads, the webhooks) pay once: the
// payment's event id is the subscription's.
func (p *Provider) confirmSubscription(ctx context.Context, o *store.Order, ref string) (*payments.Result, error) {
	s, err := p.Client.GetSubscription(ctx, ref)
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	if s.CustomID != o.ID {
		return nil, payments.ErrNotThisOrder
	}
	switch s.Status {
	case "APPROVAL_PENDING":
		return nil, payments.Declined("The subscription was not approved on PayPal.")
	case "CANCELLED", "EXPIRED", "SUSPENDED":
		if o.PaidAt == nil {
			return nil, payments.Declined("PayPal ended the subscription before its first payment.")
		}
	}
	paid, ok := s.Paid()
	if !ok || (s.Status != "ACTIVE" && o.PaidAt == nil) {
		// APPROVED, or active with the first payment still on its way:
		// BILLING.SUBSCRIPTION.ACTIVATED or PAYMENT.SALE.COMPLETED
		// finishes it.
		return &payments.Result{Order: o, Ref: ref, Status: s.Status}, nil
	}
	amount, err := Cents(paid.Value)
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	next := s.NextBilling()
	ev := &store.PaymentEvent{Provider: payments.PayPal, EventID: "subscription:" + ref, Type: "subscription.activated", AppID: &o.AppID,
		OrderID: &o.ID, PaymentRef: ref, Amount: amount, Currency: strings.ToUpper(paid.CurrencyCode)}
	out, fresh, err := p.Store.ApplyPaymentEvent(ctx, ev, func(ctx context.Context, tx bun.Tx, o *store.Order) (string, error) {
		outcome, err := p.Store.PayOrderTx(ctx, tx, o, payments.PayPal, ref, amount, paid.CurrencyCode)
		if err != nil || outcome != store.OutcomePaid {
			return outcome, err
		}
		return outcome, store.LinkProviderSubscriptionTx(ctx, tx, o.ID, ref, next)
	})
	if err != nil {
		return nil, err
	}
	if ev.Outcome == store.OutcomeMismatch || ev.Outcome == store.OutcomeNotPayable {
		p.log().Error("paypal subscription payment not applied: its subscription is cancelled and the payment needs a refund",
			"order", o.ID, "subscription", ref, "outcome", ev.Outcome)
	}
	if out.Status == store.OrderPending {
		return nil, payments.ErrNotThisOrder
	}
	return &payments.Result{Order: out, Ref: ref, Status: statusOf(ev, fresh)}, nil
}

// sale is PAYMENT.SALE.COMPLETED's resource: a payment PayPal took for a
// subscription cycle (Payments v1 shapes).
type sale struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Amount struct {
		Total    string `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
	TransactionFee *struct {
		Value    string `json:"value"`
		Currency string `json:"currency"`
	} `json:"transaction_fee"`
	BillingAgreementID string `json:"billing_agreement_id"`
	Custom             string `json:"custom"`
}

// subscriptionWebhook applies PayPal's events about subscriptions; ok
// false when typ is none of them.
func (p *Provider) subscriptionWebhook(ctx context.Context, ev webhookEvent) (*payments.Result, bool, error) {
	switch ev.EventType {
	case "BILLING.SUBSCRIPTION.ACTIVATED":
		var s Subscription
		if err := json.Unmarshal(ev.Resource, &s); err != nil || s.ID == "" {
			return nil, true, fmt.Errorf("%w: subscription: %v", payments.ErrInvalidWebhook, err)
		}
		res, err := p.confirmFromWebhook(ctx, s.CustomID, s.ID)
		return res, true, err
	case "PAYMENT.SALE.COMPLETED":
		var sl sale
		if err := json.Unmarshal(ev.Resource, &sl); err != nil || sl.ID == "" {
			return nil, true, fmt.Errorf("%w: sale: %v", payments.ErrInvalidWebhook, err)
		}
		if sl.BillingAgreementID == "" {
			return &payments.Result{Ref: sl.ID, Status: store.OutcomeIgnored}, true, nil
		}
		res, err := p.saleCompleted(ctx, ev, &sl)
		return res, true, err
	case "BILLING.SUBSCRIPTION.PAYMENT.FAILED", "BILLING.SUBSCRIPTION.SUSPENDED":
		// A suspended subscription bills no more until it is reactivated:
		// the member keeps access through the grace period, as after a
		// failed card renewal.
		res, err := p.subscriptionState(ctx, ev, "failed")
		return res, true, err
	case "BILLING.SUBSCRIPTION.UPDATED":
		var s Subscription
		if err := json.Unmarshal(ev.Resource, &s); err != nil || s.ID == "" {
			return nil, true, fmt.Errorf("%w: subscription: %v", payments.ErrInvalidWebhook, err)
		}
		res, err := p.subscriptionUpdated(ctx, &s)
		return res, true, err
	case "BILLING.SUBSCRIPTION.CANCELLED":
		res, err := p.subscriptionState(ctx, ev, "canceled")
		return res, true, err
	case "BILLING.SUBSCRIPTION.EXPIRED":
		res, err := p.subscriptionState(ctx, ev, "ended")
		return res, true, err
	}
	return nil, false, nil
}

// confirmFromWebhook pays the order orderID from subscription ref when it
// still waits for it (the member never came back from PayPal).
func (p *Provider) confirmFromWebhook(ctx context.Context, orderID, ref string) (*payments.Result, error) {
	o, err := p.Store.OrderByID(ctx, orderID)
	if errors.Is(err, store.ErrNotFound) {
		return &payments.Result{Ref: ref, Status: store.OutcomeIgnored}, nil
	}
	if err != nil {
		return nil, err
	}
	if o.Status != store.OrderPending || o.PaymentRef != ref {
		return &payments.Result{Order: o, Ref: ref, Status: store.OutcomeAlready}, nil
	}
	res, err := p.confirmSubscription(ctx, o, ref)
	if errors.Is(err, payments.ErrDeclined) {
		return &payments.Result{Order: o, Ref: ref, Status: store.OutcomeFailed}, nil
	}
	return res, err
}

// saleCompleted applies a subscription's payment: the first one pays the
// membership's order (when the return visit has not), a later one renews
// the membership to PayPal's next billing time and books the payment as a
// card renewal is (the earning, the platform's fee) with PayPal's fee.
func (p *Provider) saleCompleted(ctx context.Context, ev webhookEvent, sl *sale) (*payments.Result, error) {
	ref := sl.BillingAgreementID
	if sl.Custom != "" {
		if _, err := p.confirmFromWebhook(ctx, sl.Custom, ref); err != nil {
			return nil, err
		}
	}
	amount, err := Cents(sl.Amount.Total)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", payments.ErrInvalidWebhook, err)
	}
	// The period the sale pays for ends when PayPal bills next, but never
	// more than one cycle on from the membership's end: two renewals
	// reported late each extend by their own cycle.
	var periodEnd time.Time
	cur, err := p.Store.SubscriptionByProviderRef(ctx, payments.PayPal, ref)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if cur != nil {
		s, err := p.Client.GetSubscription(ctx, ref)
		if err != nil {
			return nil, payments.ProviderError("paypal", err)
		}
		cycle := cur.Cycle
		if cycle == "" {
			if plan, err := p.Store.PlanOf(ctx, cur.PlanID); err == nil && plan != nil {
				cycle = plan.BillingCycle
			}
		}
		periodEnd = addCycle(cur.CurrentPeriodEnd, cycle)
		if next := s.NextBilling(); !next.IsZero() && next.Before(periodEnd) {
			periodEnd = next
		}
	}
	rec := &store.PaymentEvent{Provider: payments.PayPal, EventID: ev.ID, Type: ev.EventType, PaymentRef: ref,
		Amount: amount, Currency: strings.ToUpper(sl.Amount.Currency)}
	_, fresh, err := p.Store.ApplyProviderRenewalEvent(ctx, rec, ref, "paid", periodEnd, 0)
	if err != nil {
		return nil, err
	}
	if fresh && cur != nil && sl.TransactionFee != nil {
		// PayPal's fee on the sale, on the payment it belongs to: the
		// renewal's, or the first payment's (the order's).
		ledgerRef := ""
		switch {
		case rec.Outcome == store.OutcomeRenewed:
			ledgerRef = "renewal:" + ref + ":" + periodEnd.UTC().Format("20060102T150405")
		case cur.OrderID != nil:
			ledgerRef = "order:" + *cur.OrderID
		}
		if fee, err := Cents(sl.TransactionFee.Value); err == nil && ledgerRef != "" {
			if err := p.Store.BookProcessorFee(ctx, store.ProcessorFee{AppID: cur.AppID, Ref: ledgerRef, OrderID: cur.OrderID,
				Amount: fee, Currency: sl.TransactionFee.Currency, Memo: "PayPal membership payment"}); err != nil {
				p.log().Error("paypal fee not booked", "subscription", ref, "err", err)
			}
		}
	}
	if fresh && rec.Outcome == store.OutcomeRenewed {
		// An upgrade approved on PayPal but whose difference was never
		// paid starts with this renewal, which PayPal billed at its price.
		if err := p.Store.SettlePayPalRevisions(ctx, ref, time.Now()); err != nil {
			return nil, err
		}
	}
	return &payments.Result{Ref: ref, Status: statusOf(rec, fresh)}, nil
}

func addCycle(t time.Time, cycle string) time.Time {
	if cycle == store.CycleYearly {
		return t.AddDate(1, 0, 0)
	}
	return t.AddDate(0, 1, 0)
}

// subscriptionState applies a change of a subscription's state (failed,
// canceled, ended) to the membership it renews, once per event id.
func (p *Provider) subscriptionState(ctx context.Context, ev webhookEvent, event string) (*payments.Result, error) {
	var s Subscription
	if err := json.Unmarshal(ev.Resource, &s); err != nil || s.ID == "" {
		return nil, fmt.Errorf("%w: subscription: %v", payments.ErrInvalidWebhook, err)
	}
	rec := &store.PaymentEvent{Provider: payments.PayPal, EventID: ev.ID, Type: ev.EventType, PaymentRef: s.ID}
	_, fresh, err := p.Store.ApplyProviderRenewalEvent(ctx, rec, s.ID, event, time.Time{}, 0)
	if err != nil {
		return nil, err
	}
	return &payments.Result{Ref: s.ID, Status: statusOf(rec, fresh)}, nil
}

// ErrCannotResume: a PayPal subscription, once cancelled, cannot be
// started again; the member joins again when the membership ends.
var ErrCannotResume = errors.New("a cancelled PayPal subscription cannot be resumed")

// SetCancelAtPeriodEnd cancels the PayPal subscription renewing a
// membership: PayPal bills it no more, and the membership ends with the
// period paid. PayPal has no undo for a cancel.
func (p *Provider) SetCancelAtPeriodEnd(ctx context.Context, ref string, cancel bool) error {
	if !IsSubscriptionRef(ref) {
		return nil
	}
	if !cancel {
		return ErrCannotResume
	}
	if err := p.Client.CancelSubscription(ctx, ref, "Cancelled by the member", "marquee-cancel-"+ref); err != nil {
		return payments.ProviderError("paypal", err)
	}
	return nil
}

// CancelPayment stops the PayPal subscription of an order that was
// cancelled (the cancel_payment job): one the buyer approved meanwhile
// would bill for a membership that never started. One still waiting for
// approval cannot be cancelled at PayPal and lapses on its own.
func (p *Provider) CancelPayment(ctx context.Context, ref string) error {
	if !IsSubscriptionRef(ref) {
		return nil
	}
	s, err := p.Client.GetSubscription(ctx, ref)
	if err != nil {
		return payments.ProviderError("paypal", err)
	}
	if s.Status != "ACTIVE" && s.Status != "SUSPENDED" {
		return nil
	}
	if err := p.Client.CancelSubscription(ctx, ref, "Order cancelled", "marquee-cancel-"+ref); err != nil {
		return payments.ProviderError("paypal", err)
	}
	return nil
}

// firstSale answers the sale that paid membership order o: the first
// payment PayPal took for its subscription (the order is the first cycle;
// later cycles are renewals, booked apart), read from the subscription's
// transactions, as PayPal keeps no order for it.
func (p *Provider) firstSale(ctx context.Context, o *store.Order) (*SubscriptionTransaction, error) {
	from := o.CreatedAt.Add(-24 * time.Hour)
	txs, err := p.Client.SubscriptionTransactions(ctx, o.PaymentRef, from, time.Now().Add(time.Hour))
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	var first *SubscriptionTransaction
	for i := range txs {
		t := &txs[i]
		switch t.Status {
		case "COMPLETED", "PARTIALLY_REFUNDED", "REFUNDED":
		default:
			continue
		}
		if first == nil || t.Time.Before(first.Time) {
			first = t
		}
	}
	if first == nil {
		return nil, payments.ErrNotThisOrder
	}
	if cents, err := Cents(first.AmountWithBreakdown.GrossAmount.Value); err != nil || cents != o.Total {
		return nil, payments.ErrNotThisOrder
	}
	return first, nil
}

// refundSubscriptionPayment gives back amount of the sale that paid a
// membership order by PayPal subscription, through Payments v1's sale
// refund (the call for the sales PAYMENT.SALE.COMPLETED reports). As for
// orders, the amount is set aside first and the refund's PayPal-Request-Id
// is its own. A full refund ends the membership (the order's refund
// effect), so the subscription is cancelled at PayPal too: it must bill no
// more.
func (p *Provider) refundSubscriptionPayment(ctx context.Context, req payments.RefundRequest, amount int64) (*store.Order, error) {
	o := req.Order
	sale, err := p.firstSale(ctx, o)
	if err != nil {
		return nil, err
	}
	pr, err := p.Store.BeginRefund(ctx, o.AppID, o.ID, payments.PayPal, amount, req.Reason)
	if err != nil {
		return nil, err
	}
	r, err := p.Client.RefundSale(ctx, sale.ID, pr.Amount, o.Currency, req.Reason, "marquee-refund-"+pr.ID)
	if err != nil {
		if _, ferr := p.Store.FinishRefund(ctx, pr, "", err); ferr != nil {
			p.log().Error("paypal sale refund failed and could not be given back", "order", o.ID, "err", ferr)
		}
		return nil, payments.ProviderError("paypal refund", err)
	}
	out, err := p.Store.FinishRefund(ctx, pr, r.ID, nil)
	if err != nil {
		return nil, err
	}
	if out.Status == store.OrderRefunded {
		if err := p.Client.CancelSubscription(ctx, o.PaymentRef, "Payment refunded", "marquee-cancel-"+o.PaymentRef); err != nil {
			p.log().Error("paypal subscription of a refunded membership not cancelled: cancel it in PayPal", "subscription", o.PaymentRef, "err", err)
		}
	}
	return out, nil
}
