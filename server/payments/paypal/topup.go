package paypal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"marquee/server/payments"
	"marquee/store"
)

var _ payments.TopupPayer = (*Provider)(nil)

// topupPrefix marks a PayPal order's custom_id as a wallet top-up's (an
// order's custom_id is the order id itself).
const topupPrefix = "topup:"

// TopupCustomID is the custom_id of a top-up's PayPal order.
func TopupCustomID(topupID string) string { return topupPrefix + topupID }

// topupOf answers the top-up id a PayPal custom_id names, "" for an order's.
func topupOf(customID string) string {
	if id, ok := strings.CutPrefix(customID, topupPrefix); ok {
		return id
	}
	return ""
}

// StartTopup makes (or reuses) the PayPal order of a top-up, for its stored
// amount, and answers where the member approves it. The money goes to the
// operator's account: the wallet is the platform's.
func (p *Provider) StartTopup(ctx context.Context, req payments.TopupRequest) (*payments.Started, error) {
	t := req.Topup
	if t.Status != store.TopupPending {
		return nil, store.ErrTopupClosed
	}
	if t.PaymentMethod == payments.PayPal && t.PaymentRef != "" {
		if po, err := p.Client.GetOrder(ctx, t.PaymentRef); err == nil && po.OrderRef() == TopupCustomID(t.ID) && po.ApprovalURL() != "" &&
			(po.Status == "CREATED" || po.Status == "PAYER_ACTION_REQUIRED") {
			return &payments.Started{Ref: po.ID, ApprovalURL: po.ApprovalURL(), Status: po.Status}, nil
		}
	}
	po, err := p.Client.CreateOrder(ctx, CreateOrder{OrderID: TopupCustomID(t.ID), Number: "topup-" + t.ID, Amount: t.Amount,
		Currency: t.Currency, ReturnURL: req.ReturnURL, CancelURL: req.CancelURL, Description: "Wallet top-up",
		RequestID: fmt.Sprintf("marquee-topup-%s-paypal-%d", t.ID, t.Amount)})
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	if po.ID == "" {
		return nil, payments.ProviderError("paypal", errors.New("order without id"))
	}
	if err := p.Store.AttachTopupPayment(ctx, t.ID, payments.PayPal, po.ID); err != nil {
		return nil, err
	}
	t.PaymentRef = po.ID
	if po.ApprovalURL() == "" {
		return nil, payments.ErrNoApprovalURL
	}
	return &payments.Started{Ref: po.ID, ApprovalURL: po.ApprovalURL(), Status: po.Status}, nil
}

// ConfirmTopup captures the approved PayPal order of a top-up and credits
// the wallet the first time PayPal says the whole amount was captured.
func (p *Provider) ConfirmTopup(ctx context.Context, req payments.TopupRequest) (*store.WalletTopup, error) {
	t := req.Topup
	if t.Status == store.TopupPaid {
		return t, nil
	}
	if t.Status != store.TopupPending {
		// Expired: never captured, so PayPal takes nothing.
		return nil, store.ErrTopupClosed
	}
	if t.PaymentMethod != payments.PayPal || t.PaymentRef == "" {
		return nil, payments.ErrNotThisOrder
	}
	// Concurrent and retried captures share a PayPal-Request-Id (one
	// capture); each refusal recorded moves the next try to a fresh one.
	refused, err := p.Store.TopupFailures(ctx, payments.PayPal, t.PaymentRef, "topup.capture.failed")
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("marquee-topup-capture-%s-%d", t.PaymentRef, refused)
	po, err := p.Client.CaptureOrder(ctx, t.PaymentRef, key)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity {
		if ferr := p.Store.RecordTopupFailure(ctx, &store.PaymentEvent{Provider: payments.PayPal, EventID: "topup-capture:" + key,
			Type: "topup.capture.failed", AppID: &t.AppID, PaymentRef: t.PaymentRef, Message: apiErr.Message}); ferr != nil {
			p.log().Warn("record refused paypal top-up capture", "topup", t.ID, "err", ferr)
		}
		if apiErr.Issue("ORDER_NOT_APPROVED") {
			return nil, payments.Declined("The payment was not approved on PayPal.")
		}
		return nil, payments.Declined(apiErr.Message)
	}
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	if po.OrderRef() != TopupCustomID(t.ID) {
		return nil, payments.ErrNotThisOrder
	}
	var done *Capture
	for _, c := range po.Captures() {
		if c.Status == "COMPLETED" {
			c := c
			done = &c
		}
	}
	if done == nil {
		return t, nil // PENDING: the webhook finishes it
	}
	return p.topupCaptured(ctx, "capture:"+done.ID, "capture", t, po.ID, done)
}

func (p *Provider) topupCaptured(ctx context.Context, eventID, typ string, t *store.WalletTopup, ref string, c *Capture) (*store.WalletTopup, error) {
	amount, err := Cents(c.Amount.Value)
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	rec := &store.PaymentEvent{Provider: payments.PayPal, EventID: eventID, Type: typ, AppID: &t.AppID, PaymentRef: ref,
		Amount: amount, Currency: strings.ToUpper(c.Amount.CurrencyCode)}
	out, _, err := p.Store.ApplyTopupPaymentEvent(ctx, rec, t.ID, payments.PayPal, ref, amount, c.Amount.CurrencyCode)
	if err != nil {
		return nil, err
	}
	if out.Status != store.TopupPaid {
		p.log().Error("paypal top-up payment not applied: it is being refunded", "topup", t.ID, "paypalOrder", ref, "outcome", rec.Outcome)
		return nil, payments.ErrNotThisOrder
	}
	return out, nil
}

// webhookTopupCapture applies PAYMENT.CAPTURE.COMPLETED for a top-up's
// PayPal order, once per event id.
func (p *Provider) webhookTopupCapture(ctx context.Context, ev webhookEvent, c *CaptureDetail) (*payments.Result, error) {
	t, err := p.Store.TopupByID(ctx, topupOf(c.CustomID))
	if errors.Is(err, store.ErrNotFound) {
		return &payments.Result{Ref: c.ID, Status: store.OutcomeIgnored}, nil
	}
	if err != nil {
		return nil, err
	}
	ref := c.SupplementaryData.RelatedIDs.OrderID
	if ref == "" {
		ref = t.PaymentRef
	}
	if ev.EventType != "PAYMENT.CAPTURE.COMPLETED" {
		rec := &store.PaymentEvent{Provider: payments.PayPal, EventID: ev.ID, Type: ev.EventType, AppID: &t.AppID, PaymentRef: ref,
			Message: "PayPal " + strings.ToLower(c.Status) + " the capture"}
		if err := p.Store.RecordTopupFailure(ctx, rec); err != nil {
			return nil, err
		}
		return &payments.Result{Ref: ref, Status: store.OutcomeFailed}, nil
	}
	amount, err := Cents(c.Amount.Value)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", payments.ErrInvalidWebhook, err)
	}
	rec := &store.PaymentEvent{Provider: payments.PayPal, EventID: ev.ID, Type: ev.EventType, AppID: &t.AppID, PaymentRef: ref,
		Amount: amount, Currency: strings.ToUpper(c.Amount.CurrencyCode)}
	_, fresh, err := p.Store.ApplyTopupPaymentEvent(ctx, rec, t.ID, payments.PayPal, ref, amount, c.Amount.CurrencyCode)
	if err != nil {
		return nil, err
	}
	if rec.Outcome == store.OutcomeMismatch || rec.Outcome == store.OutcomeNotPayable {
		p.log().Error("paypal top-up payment not applied: it is being refunded", "topup", t.ID, "paypalOrder", ref, "outcome", rec.Outcome)
	}
	return &payments.Result{Ref: ref, Status: statusOf(rec, fresh)}, nil
}

// webhookTopupApproved captures a top-up's order the member approved but
// may never come back from (closed tab).
func (p *Provider) webhookTopupApproved(ctx context.Context, po *Order) (*payments.Result, error) {
	t, err := p.Store.TopupByID(ctx, topupOf(po.OrderRef()))
	if errors.Is(err, store.ErrNotFound) {
		return &payments.Result{Ref: po.ID, Status: store.OutcomeIgnored}, nil
	}
	if err != nil {
		return nil, err
	}
	if t.Status != store.TopupPending || t.PaymentRef != po.ID {
		return &payments.Result{Ref: po.ID, Status: store.OutcomeAlready}, nil
	}
	out, err := p.ConfirmTopup(ctx, payments.TopupRequest{Topup: t})
	if err != nil {
		return nil, err
	}
	return &payments.Result{Ref: po.ID, Status: out.Status}, nil
}
