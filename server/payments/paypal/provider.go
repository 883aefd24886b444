package paypal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/payments"
	"marquee/store"
)

// Provider is the PayPal method: an order at PayPal per Marquee order, the
// buyer approves it on PayPal's page, and the capture (server to server) or
// a verified webhook says the money arrived.
type Provider struct {
	Client *Client
	Store  *store.Storage
	Logger *slog.Logger
	// Tolerance is how old a webhook's transmission time may be; 0 is 300 s.
	Tolerance time.Duration
	// Fees: the platform fee of orders paid to a creator's PayPal (payee.go).
	Fees Fees
	now  func() time.Time
}

var (
	_ payments.Provider = (*Provider)(nil)
	_ payments.Webhooks = (*Provider)(nil)
)

func (p *Provider) Name() string { return payments.PayPal }

func (p *Provider) log() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

// Start makes (or reuses) the PayPal order for o and answers where the
// buyer approves it.
func (p *Provider) Start(ctx context.Context, req payments.StartRequest) (*payments.Started, error) {
	o := req.Order
	if o.Status != store.OrderPending {
		return nil, store.ErrIllegalTransition
	}
	// A membership renews through a PayPal subscription (subscriptions.go);
	// an order with more than the membership in it pays once.
	line, err := p.Store.MembershipLineOf(ctx, o.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if line != nil && line.Price == o.Total {
		return p.startSubscription(ctx, req, line)
	}
	if o.PaymentMethod == payments.PayPal && o.PaymentRef != "" && !IsSubscriptionRef(o.PaymentRef) {
		if po, err := p.Client.GetOrder(ctx, o.PaymentRef); err == nil && po.OrderRef() == o.ID && po.ApprovalURL() != "" &&
			(po.Status == "CREATED" || po.Status == "PAYER_ACTION_REQUIRED") {
			return &payments.Started{Ref: po.ID, ApprovalURL: po.ApprovalURL(), Status: po.Status}, nil
		}
	}
	payee, fee, err := p.payeeOf(ctx, o.AppID, o.Total)
	if err != nil {
		return nil, err
	}
	po, err := p.Client.CreateOrder(ctx, CreateOrder{OrderID: o.ID, Number: o.OrderNumber, Amount: o.Total, Currency: o.Currency,
		ReturnURL: req.ReturnURL, CancelURL: req.CancelURL, Payee: payee, PlatformFee: fee,
		RequestID: fmt.Sprintf("marquee-order-%s-paypal-%d", o.ID, o.Total)})
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	if po.ID == "" {
		return nil, payments.ProviderError("paypal", errors.New("order without id"))
	}
	if err := p.Store.AttachPayment(ctx, o.ID, payments.PayPal, po.ID); err != nil {
		return nil, err
	}
	if po.ApprovalURL() == "" {
		return nil, payments.ErrNoApprovalURL
	}
	return &payments.Started{Ref: po.ID, ApprovalURL: po.ApprovalURL(), Status: po.Status}, nil
}

// Confirm captures the approved PayPal order req.Ref and marks the order
// PAID when PayPal says the whole amount was captured. Capturing again
// answers the order as it stands.
func (p *Provider) Confirm(ctx context.Context, req payments.ConfirmRequest) (*payments.Result, error) {
	o := req.Order
	if req.Ref == "" || req.Ref != o.PaymentRef {
		return nil, payments.ErrNotThisOrder
	}
	if o.Status != store.OrderPending {
		if o.PaidAt != nil {
			return &payments.Result{Order: o, Ref: req.Ref, Status: "COMPLETED"}, nil
		}
		return nil, store.ErrIllegalTransition
	}
	if IsSubscriptionRef(req.Ref) {
		return p.confirmSubscription(ctx, o, req.Ref)
	}
	key, err := p.captureKey(ctx, o, req.Ref)
	if err != nil {
		return nil, err
	}
	po, err := p.Client.CaptureOrder(ctx, req.Ref, key)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity {
		// PayPal keeps this answer for the key: the next try (after the
		// buyer approves, or picks another card) must use a fresh one.
		p.recordFailure(ctx, o, req.Ref, "capture:"+key, apiErr.Message)
		switch {
		case apiErr.Issue("ORDER_NOT_APPROVED"):
			return nil, payments.Declined("The payment was not approved on PayPal.")
		case apiErr.Issue("INSTRUMENT_DECLINED"), apiErr.Issue("PAYER_ACTION_REQUIRED"):
			return nil, payments.Declined("PayPal declined the payment method. Choose another one on PayPal.")
		}
		return nil, payments.Declined(apiErr.Message)
	}
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	return p.applyCaptured(ctx, o, po)
}

// captureKey is the PayPal-Request-Id of a capture of ref: concurrent and
// retried captures share it (one capture), and each capture PayPal refused
// (recorded as capture.failed) moves on to the next, since PayPal replays a
// refusal to its key forever.
func (p *Provider) captureKey(ctx context.Context, o *store.Order, ref string) (string, error) {
	evs, err := p.Store.PaymentEvents(ctx, o.ID)
	if err != nil {
		return "", err
	}
	refused := 0
	for _, e := range evs {
		if e.Type == "capture.failed" && e.PaymentRef == ref && strings.HasPrefix(e.EventID, "capture:") {
			refused++
		}
	}
	if refused == 0 {
		return "marquee-capture-" + ref, nil
	}
	return fmt.Sprintf("marquee-capture-%s-%d", ref, refused), nil
}

// applyCaptured marks o PAID from a captured PayPal order.
func (p *Provider) applyCaptured(ctx context.Context, o *store.Order, po *Order) (*payments.Result, error) {
	if po.OrderRef() != o.ID {
		return nil, payments.ErrNotThisOrder
	}
	// The order keeps every capture tried: a declined one stays in the
	// list after the buyer paid with another method on a later try, so
	// any completed capture is the answer, and a refusal only when none
	// completed.
	var done, refused *Capture
	for _, c := range po.Captures() {
		c := c
		switch c.Status {
		case "COMPLETED":
			done = &c
		case "DECLINED", "FAILED":
			refused = &c
		}
	}
	if done == nil && refused != nil {
		p.recordFailure(ctx, o, po.ID, "capture:"+refused.ID, "PayPal "+strings.ToLower(refused.Status)+" the capture")
		return nil, payments.Declined("PayPal declined the payment.")
	}
	if done == nil {
		// PENDING captures (an eCheck, a review) finish by webhook.
		return &payments.Result{Order: o, Ref: po.ID, Status: po.Status}, nil
	}
	amount, err := Cents(done.Amount.Value)
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	res, err := p.pay(ctx, "capture:"+done.ID, "capture", o, po.ID, amount, done.Amount.CurrencyCode, done.Fee())
	if err != nil {
		return nil, err
	}
	if res.Order.Status == store.OrderPending {
		return nil, payments.ErrNotThisOrder
	}
	res.Status = po.Status
	return res, nil
}

// pay applies a capture of amount for o; fee is what PayPal kept of it
// (seller_receivable_breakdown.paypal_fee), booked in the app's ledger once
// the order is paid by it.
func (p *Provider) pay(ctx context.Context, eventID, typ string, o *store.Order, ref string, amount int64, currency string, fee *Money) (*payments.Result, error) {
	ev := &store.PaymentEvent{Provider: payments.PayPal, EventID: eventID, Type: typ, AppID: &o.AppID, OrderID: &o.ID,
		PaymentRef: ref, Amount: amount, Currency: strings.ToUpper(currency)}
	out, fresh, err := p.Store.ApplyPaymentEvent(ctx, ev, func(ctx context.Context, tx bun.Tx, o *store.Order) (string, error) {
		return p.Store.PayOrderTx(ctx, tx, o, payments.PayPal, ref, amount, currency)
	})
	if err != nil {
		return nil, err
	}
	if ev.Outcome == store.OutcomeMismatch || ev.Outcome == store.OutcomeNotPayable {
		p.log().Error("paypal payment not applied: needs a refund", "order", o.ID, "paypalOrder", ref, "outcome", ev.Outcome,
			"amount", amount, "currency", currency)
	}
	if fresh && ev.Outcome == store.OutcomePaid {
		p.recordFeeOwed(ctx, out, ref, amount, strings.ToUpper(currency))
	}
	if fee != nil && out.PaidAt != nil && out.PaymentMethod == payments.PayPal && out.PaymentRef == ref {
		// PayPal takes its fee from the account paid: the creator's payee,
		// or the operator's, which passes the rest on as earnings.
		if cents, err := Cents(fee.Value); err == nil {
			if err := p.Store.BookProcessorFee(ctx, store.ProcessorFee{AppID: out.AppID, Ref: "order:" + out.ID, OrderID: &out.ID,
				Amount: cents, Currency: fee.CurrencyCode, Memo: "Order " + out.OrderNumber}); err != nil {
				p.log().Error("paypal fee not booked", "order", out.ID, "err", err)
			}
		}
	}
	return &payments.Result{Order: out, Ref: ref, Status: statusOf(ev, fresh)}, nil
}

func (p *Provider) recordFailure(ctx context.Context, o *store.Order, ref, eventID, message string) {
	ev := &store.PaymentEvent{Provider: payments.PayPal, EventID: eventID, Type: "capture.failed", AppID: &o.AppID, OrderID: &o.ID,
		PaymentRef: ref, Message: message}
	if _, _, err := p.Store.ApplyPaymentEvent(ctx, ev, func(context.Context, bun.Tx, *store.Order) (string, error) {
		return store.OutcomeFailed, nil
	}); err != nil {
		p.log().Warn("record failed paypal payment", "order", o.ID, "err", err)
	}
}

// Refund gives back req.Amount (0: all that is left) of the order's
// capture at PayPal. As with cards, the amount is set aside on the order
// first (store.BeginRefund) and each refund has its own PayPal-Request-Id.
func (p *Provider) Refund(ctx context.Context, req payments.RefundRequest) (*store.Order, error) {
	o := req.Order
	amount, err := payments.RefundAmount(req, payments.PayPal)
	if err != nil {
		return nil, err
	}
	if IsSubscriptionRef(o.PaymentRef) {
		return p.refundSubscriptionPayment(ctx, req, amount)
	}
	po, err := p.Client.GetOrder(ctx, o.PaymentRef)
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	var capture *Capture
	for _, c := range po.Captures() {
		if c.Status == "COMPLETED" || c.Status == "PARTIALLY_REFUNDED" {
			c := c
			capture = &c
		}
	}
	if capture == nil {
		return nil, payments.ErrNotThisOrder
	}
	pr, err := p.Store.BeginRefund(ctx, o.AppID, o.ID, payments.PayPal, amount, req.Reason)
	if err != nil {
		return nil, err
	}
	r, err := p.Client.RefundCapture(ctx, capture.ID, pr.Amount, o.Currency, req.Reason, "marquee-refund-"+pr.ID)
	if err != nil {
		if _, ferr := p.Store.FinishRefund(ctx, pr, "", err); ferr != nil {
			p.log().Error("paypal refund failed and could not be given back", "order", o.ID, "err", ferr)
		}
		return nil, payments.ProviderError("paypal refund", err)
	}
	return p.Store.FinishRefund(ctx, pr, r.ID, nil)
}

// webhookEvent is PayPal's webhook envelope.
type webhookEvent struct {
	ID        string          `json:"id"`
	EventType string          `json:"event_type"`
	Resource  json.RawMessage `json:"resource"`
}

// HandleWebhook checks that the delivery is recent (PAYPAL-TRANSMISSION-TIME
// within the tolerance) and that PayPal vouches for it
// (verify-webhook-signature), then applies it once per event id.
func (p *Provider) HandleWebhook(ctx context.Context, body []byte, header http.Header) (*payments.Result, error) {
	tol := p.Tolerance
	if tol <= 0 {
		tol = 300 * time.Second
	}
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	sent, err := time.Parse(time.RFC3339, header.Get("PAYPAL-TRANSMISSION-TIME"))
	if err != nil || now().Sub(sent) > tol || sent.Sub(now()) > tol {
		return nil, fmt.Errorf("%w: transmission time missing or outside %s", payments.ErrInvalidWebhook, tol)
	}
	if err := p.Client.VerifyWebhook(ctx, header, body); err != nil {
		if errors.Is(err, ErrBadSignature) || errors.Is(err, ErrNoWebhookID) {
			return nil, fmt.Errorf("%w: %v", payments.ErrInvalidWebhook, err)
		}
		// PayPal could not be asked: answer an error so PayPal retries.
		return nil, payments.ProviderError("paypal verify", err)
	}
	var ev webhookEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" {
		return nil, fmt.Errorf("%w: not a PayPal event", payments.ErrInvalidWebhook)
	}
	if res, ok, err := p.subscriptionWebhook(ctx, ev); ok {
		return res, err
	}
	switch ev.EventType {
	case "PAYMENT.CAPTURE.COMPLETED", "PAYMENT.CAPTURE.DENIED", "PAYMENT.CAPTURE.DECLINED":
		var c CaptureDetail
		if err := json.Unmarshal(ev.Resource, &c); err != nil {
			return nil, fmt.Errorf("%w: capture: %v", payments.ErrInvalidWebhook, err)
		}
		if topupOf(c.CustomID) != "" {
			return p.webhookTopupCapture(ctx, ev, &c)
		}
		if id := tierUpOf(c.CustomID); id != "" {
			if ev.EventType != "PAYMENT.CAPTURE.COMPLETED" {
				return &payments.Result{Ref: c.ID, Status: store.OutcomeIgnored}, nil
			}
			return p.tierUpWebhook(ctx, id, c.SupplementaryData.RelatedIDs.OrderID)
		}
		o, err := p.Store.OrderByID(ctx, c.CustomID)
		if errors.Is(err, store.ErrNotFound) {
			return &payments.Result{Ref: c.ID, Status: store.OutcomeIgnored}, nil
		}
		if err != nil {
			return nil, err
		}
		ref := c.SupplementaryData.RelatedIDs.OrderID
		if ref == "" {
			ref = o.PaymentRef
		}
		if ev.EventType != "PAYMENT.CAPTURE.COMPLETED" {
			rec := &store.PaymentEvent{Provider: payments.PayPal, EventID: ev.ID, Type: ev.EventType, AppID: &o.AppID, OrderID: &o.ID,
				PaymentRef: ref, Message: "PayPal " + strings.ToLower(c.Status) + " the capture"}
			out, fresh, err := p.Store.ApplyPaymentEvent(ctx, rec, func(context.Context, bun.Tx, *store.Order) (string, error) {
				return store.OutcomeFailed, nil
			})
			if err != nil {
				return nil, err
			}
			return &payments.Result{Order: out, Ref: ref, Status: statusOf(rec, fresh)}, nil
		}
		amount, err := Cents(c.Amount.Value)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", payments.ErrInvalidWebhook, err)
		}
		return p.pay(ctx, ev.ID, ev.EventType, o, ref, amount, c.Amount.CurrencyCode, c.Fee())
	case "CHECKOUT.ORDER.APPROVED":
		// The buyer approved but may never come back to payment-success
		// (closed tab): capture from here.
		var po Order
		if err := json.Unmarshal(ev.Resource, &po); err != nil {
			return nil, fmt.Errorf("%w: order: %v", payments.ErrInvalidWebhook, err)
		}
		if topupOf(po.OrderRef()) != "" {
			return p.webhookTopupApproved(ctx, &po)
		}
		if id := tierUpOf(po.OrderRef()); id != "" {
			return p.tierUpWebhook(ctx, id, po.ID)
		}
		o, err := p.Store.OrderByID(ctx, po.OrderRef())
		if errors.Is(err, store.ErrNotFound) {
			return &payments.Result{Ref: po.ID, Status: store.OutcomeIgnored}, nil
		}
		if err != nil {
			return nil, err
		}
		if o.Status != store.OrderPending || o.PaymentRef != po.ID {
			return &payments.Result{Order: o, Ref: po.ID, Status: store.OutcomeAlready}, nil
		}
		return p.Confirm(ctx, payments.ConfirmRequest{Order: o, Ref: po.ID})
	case "PAYMENT.CAPTURE.REFUNDED":
		var r struct {
			ID        string `json:"id"`
			Amount    Money  `json:"amount"`
			Links     []link `json:"links"`
			Breakdown struct {
				TotalRefunded *Money `json:"total_refunded_amount"`
			} `json:"seller_payable_breakdown"`
		}
		if err := json.Unmarshal(ev.Resource, &r); err != nil {
			return nil, fmt.Errorf("%w: refund: %v", payments.ErrInvalidWebhook, err)
		}
		captureID := ""
		for _, l := range r.Links {
			if l.Rel == "up" {
				captureID = l.Href[strings.LastIndex(l.Href, "/")+1:]
			}
		}
		if captureID == "" {
			return &payments.Result{Status: store.OutcomeIgnored}, nil
		}
		c, err := p.Client.GetCapture(ctx, captureID)
		if err != nil {
			return nil, payments.ProviderError("paypal", err)
		}
		o, err := p.Store.OrderByID(ctx, c.CustomID)
		if errors.Is(err, store.ErrNotFound) {
			return &payments.Result{Status: store.OutcomeIgnored}, nil
		}
		if err != nil {
			return nil, err
		}
		amount, _ := Cents(r.Amount.Value)
		// PayPal refunds partly too: the refund names all refunded of the
		// capture so far, which only reaching the total makes the order
		// REFUNDED. Without it, a capture PayPal calls REFUNDED is all.
		refunded := int64(0)
		if r.Breakdown.TotalRefunded != nil {
			refunded, _ = Cents(r.Breakdown.TotalRefunded.Value)
		} else if c.Status == "REFUNDED" {
			refunded = o.Total
		}
		rec := &store.PaymentEvent{Provider: payments.PayPal, EventID: ev.ID, Type: ev.EventType, AppID: &o.AppID, OrderID: &o.ID,
			PaymentRef: o.PaymentRef, Amount: amount, Currency: r.Amount.CurrencyCode}
		out, fresh, err := p.Store.ApplyPaymentEvent(ctx, rec, func(ctx context.Context, tx bun.Tx, o *store.Order) (string, error) {
			return p.Store.RefundTotalTx(ctx, tx, o, refunded, "Refunded in PayPal")
		})
		if err != nil {
			return nil, err
		}
		return &payments.Result{Order: out, Ref: o.PaymentRef, Status: statusOf(rec, fresh)}, nil
	}
	return &payments.Result{Status: store.OutcomeIgnored}, nil
}

func statusOf(ev *store.PaymentEvent, fresh bool) string {
	if !fresh {
		return "duplicate"
	}
	return ev.Outcome
}

// RefundStray gives back amount of PayPal order ref's capture, a payment its
// order could not take (the refund_stray_payment job); refused moves the
// PayPal-Request-Id past refusals PayPal keeps for it.
func (p *Provider) RefundStray(ctx context.Context, ref string, amount int64, refused int) error {
	if IsSubscriptionRef(ref) {
		// A subscription whose first payment its order could not take
		// (the order was cancelled meanwhile): it must bill no more. The
		// payment itself is a sale, refunded in PayPal by hand.
		if err := p.CancelPayment(ctx, ref); err != nil {
			return err
		}
		p.log().Error("paypal subscription payment its order could not take: cancelled; refund its payment in PayPal",
			"subscription", ref, "amount", amount)
		return nil
	}
	po, err := p.Client.GetOrder(ctx, ref)
	if err != nil {
		return payments.ProviderError("paypal", err)
	}
	for _, c := range po.Captures() {
		if c.Status != "COMPLETED" && c.Status != "PARTIALLY_REFUNDED" {
			continue
		}
		key := "marquee-stray-" + c.ID
		if refused > 0 {
			key += fmt.Sprintf("-retry-%d", refused)
		}
		if _, err := p.Client.RefundCapture(ctx, c.ID, 0, c.Amount.CurrencyCode, "Refund of a payment the order could not take", key); err != nil {
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				err = fmt.Errorf("%w: %w", payments.ErrStoredFailure, err)
			}
			return payments.ProviderError("paypal stray refund", err)
		}
		p.log().Info("paypal payment refunded: its order could not take it", "order", ref, "capture", c.ID)
	}
	return nil
}
