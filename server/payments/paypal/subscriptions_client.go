package paypal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// PayPal's Subscriptions API as Marquee calls it: a catalog product per
// app, a billing plan per tier, cycle and price, and a subscription per
// member who joins by PayPal.

// callRetrying is call for a create whose PayPal-Request-Id other requests
// may be sending at the same moment (two members joining a tier whose plan
// is not made yet): PayPal answers 409 while the first is in flight, and
// the first's answer once it is done.
func (c *Client) callRetrying(ctx context.Context, method, path, requestID string, in, out any) error {
	for i := 0; ; i++ {
		err := c.call(ctx, method, path, requestID, in, out)
		var apiErr *APIError
		if i < 40 && errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict && apiErr.Issue("DUPLICATE_REQUEST_ID") {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(25*(i+1)) * time.Millisecond):
			}
			continue
		}
		return err
	}
}

// CreateProduct makes a catalog product (type SERVICE) and answers its id.
func (c *Client) CreateProduct(ctx context.Context, name, description, requestID string) (string, error) {
	body := map[string]any{"name": clip(name, 127), "type": "SERVICE"}
	if description != "" {
		body["description"] = clip(description, 256)
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := c.callRetrying(ctx, http.MethodPost, "/v1/catalogs/products", requestID, body, &out); err != nil {
		return "", fmt.Errorf("paypal create product: %w", err)
	}
	if out.ID == "" {
		return "", errors.New("paypal create product: no id")
	}
	return out.ID, nil
}

// PlanSpec is a billing plan: a price every interval (MONTH or YEAR), with
// an optional introductory price for the first IntroCycles cycles (a TRIAL
// cycle; IntroCycles 0 has none).
type PlanSpec struct {
	ProductID   string
	Name        string
	Currency    string
	Interval    string // MONTH or YEAR
	Price       int64
	IntroPrice  int64
	IntroCycles int
	RequestID   string
}

func money(currency string, cents int64) map[string]any {
	return map[string]any{"fixed_price": Money{CurrencyCode: strings.ToUpper(currency), Value: Value(cents)}}
}

// CreatePlan makes an active billing plan and answers its id. A failed
// payment is not retried by PayPal's own schedule more than the plan says
// (payment_failure_threshold): Marquee's grace period decides, and PayPal
// suspends after three failures.
func (c *Client) CreatePlan(ctx context.Context, s PlanSpec) (string, error) {
	freq := map[string]any{"interval_unit": s.Interval, "interval_count": 1}
	var cycles []map[string]any
	seq := 1
	if s.IntroCycles > 0 {
		cycles = append(cycles, map[string]any{"frequency": freq, "tenure_type": "TRIAL", "sequence": seq,
			"total_cycles": s.IntroCycles, "pricing_scheme": money(s.Currency, s.IntroPrice)})
		seq++
	}
	cycles = append(cycles, map[string]any{"frequency": freq, "tenure_type": "REGULAR", "sequence": seq,
		"total_cycles": 0, "pricing_scheme": money(s.Currency, s.Price)})
	body := map[string]any{"product_id": s.ProductID, "name": clip(s.Name, 127), "status": "ACTIVE", "billing_cycles": cycles,
		"payment_preferences": map[string]any{"auto_bill_outstanding": true, "payment_failure_threshold": 3,
			"setup_fee_failure_action": "CANCEL"}}
	var out struct {
		ID string `json:"id"`
	}
	if err := c.callRetrying(ctx, http.MethodPost, "/v1/billing/plans", s.RequestID, body, &out); err != nil {
		return "", fmt.Errorf("paypal create plan: %w", err)
	}
	if out.ID == "" {
		return "", errors.New("paypal create plan: no id")
	}
	return out.ID, nil
}

// Subscription is the part of a PayPal subscription Marquee reads.
type Subscription struct {
	ID          string `json:"id"`
	PlanID      string `json:"plan_id"`
	Status      string `json:"status"`
	CustomID    string `json:"custom_id"`
	Links       []link `json:"links"`
	BillingInfo *struct {
		LastPayment *struct {
			Amount Money     `json:"amount"`
			Time   time.Time `json:"time"`
		} `json:"last_payment"`
		NextBillingTime *time.Time `json:"next_billing_time"`
		CycleExecutions []struct {
			TenureType      string `json:"tenure_type"`
			Sequence        int    `json:"sequence"`
			CyclesCompleted int    `json:"cycles_completed"`
		} `json:"cycle_executions"`
		FailedPaymentsCount int `json:"failed_payments_count"`
	} `json:"billing_info"`
}

// ApprovalURL is where the buyer agrees to the subscription.
func (s *Subscription) ApprovalURL() string {
	for _, l := range s.Links {
		if l.Rel == "approve" && l.Href != "" {
			return l.Href
		}
	}
	return ""
}

// Paid answers the amount of the last payment PayPal took for the
// subscription (ok false when it took none yet).
func (s *Subscription) Paid() (Money, bool) {
	if s.BillingInfo == nil || s.BillingInfo.LastPayment == nil {
		return Money{}, false
	}
	completed := 0
	for _, e := range s.BillingInfo.CycleExecutions {
		completed += e.CyclesCompleted
	}
	return s.BillingInfo.LastPayment.Amount, completed > 0
}

// NextBilling is when PayPal bills next (zero when it does not say).
func (s *Subscription) NextBilling() time.Time {
	if s.BillingInfo == nil || s.BillingInfo.NextBillingTime == nil {
		return time.Time{}
	}
	return s.BillingInfo.NextBillingTime.UTC()
}

// CreateSubscription asks PayPal for a subscription to plan, for the buyer
// to approve.
type CreateSubscription struct {
	PlanID    string
	CustomID  string
	Email     string
	Brand     string
	ReturnURL string
	CancelURL string
	RequestID string
}

func (c *Client) CreateSubscription(ctx context.Context, in CreateSubscription) (*Subscription, error) {
	ac := map[string]any{"return_url": in.ReturnURL, "cancel_url": in.CancelURL, "user_action": "SUBSCRIBE_NOW",
		"shipping_preference": "NO_SHIPPING"}
	if in.Brand != "" {
		ac["brand_name"] = clip(in.Brand, 127)
	}
	body := map[string]any{"plan_id": in.PlanID, "custom_id": in.CustomID, "application_context": ac}
	if in.Email != "" {
		body["subscriber"] = map[string]any{"email_address": in.Email}
	}
	var out Subscription
	if err := c.callRetrying(ctx, http.MethodPost, "/v1/billing/subscriptions", in.RequestID, body, &out); err != nil {
		return nil, fmt.Errorf("paypal create subscription: %w", err)
	}
	return &out, nil
}

// GetSubscription answers how a subscription stands.
func (c *Client) GetSubscription(ctx context.Context, id string) (*Subscription, error) {
	var out Subscription
	if err := c.call(ctx, http.MethodGet, "/v1/billing/subscriptions/"+url.PathEscape(id), "", nil, &out); err != nil {
		return nil, fmt.Errorf("paypal get subscription: %w", err)
	}
	return &out, nil
}

// CancelSubscription cancels a subscription: PayPal bills it no more. One
// cancelled already (or expired) is answered as done.
func (c *Client) CancelSubscription(ctx context.Context, id, reason, requestID string) error {
	err := c.call(ctx, http.MethodPost, "/v1/billing/subscriptions/"+url.PathEscape(id)+"/cancel", requestID,
		map[string]any{"reason": clip(reason, 128)}, nil)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Issue("SUBSCRIPTION_STATUS_INVALID") {
		if s, gerr := c.GetSubscription(ctx, id); gerr == nil && (s.Status == "CANCELLED" || s.Status == "EXPIRED") {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("paypal cancel subscription: %w", err)
	}
	return nil
}

// clip shortens s to at most n bytes without cutting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// SubscriptionTransaction is one payment PayPal took (or tried) for a
// subscription: its id is the sale's (Payments v1), the one
// PAYMENT.SALE.COMPLETED names.
type SubscriptionTransaction struct {
	ID                  string    `json:"id"`
	Status              string    `json:"status"`
	Time                time.Time `json:"time"`
	AmountWithBreakdown struct {
		GrossAmount Money `json:"gross_amount"`
	} `json:"amount_with_breakdown"`
}

// SubscriptionTransactions lists the payments of subscription id between
// start and end (PayPal wants both).
func (c *Client) SubscriptionTransactions(ctx context.Context, id string, start, end time.Time) ([]SubscriptionTransaction, error) {
	q := url.Values{"start_time": {start.UTC().Format(time.RFC3339)}, "end_time": {end.UTC().Format(time.RFC3339)}}
	var out struct {
		Transactions []SubscriptionTransaction `json:"transactions"`
	}
	if err := c.call(ctx, http.MethodGet, "/v1/billing/subscriptions/"+url.PathEscape(id)+"/transactions?"+q.Encode(), "", nil, &out); err != nil {
		return nil, fmt.Errorf("paypal subscription transactions: %w", err)
	}
	return out.Transactions, nil
}

// SaleRefund is PayPal's answer to a sale's refund (Payments v1).
type SaleRefund struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	SaleID string `json:"sale_id"`
	Amount struct {
		Total    string `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
}

// RefundSale gives back amount (0: all) of a sale, a subscription's
// payment: PayPal refunds those through Payments v1
// (/v1/payments/sale/{id}/refund).
func (c *Client) RefundSale(ctx context.Context, saleID string, amount int64, currency, note, requestID string) (*SaleRefund, error) {
	body := map[string]any{}
	if amount > 0 {
		body["amount"] = map[string]string{"total": Value(amount), "currency": strings.ToUpper(currency)}
	}
	if note != "" {
		body["description"] = clip(note, 255)
	}
	var out SaleRefund
	if err := c.call(ctx, http.MethodPost, "/v1/payments/sale/"+url.PathEscape(saleID)+"/refund", requestID, body, &out); err != nil {
		return nil, fmt.Errorf("paypal refund sale: %w", err)
	}
	return &out, nil
}

// ReviseSubscription asks PayPal to move subscription id to plan planID (a
// plan of the same product). PayPal answers where the subscriber approves
// the revision; once approved, the new plan bills from the next cycle.
func (c *Client) ReviseSubscription(ctx context.Context, id, planID, returnURL, cancelURL, requestID string) (string, error) {
	body := map[string]any{"plan_id": planID, "application_context": map[string]any{"return_url": returnURL, "cancel_url": cancelURL,
		"user_action": "CONTINUE", "shipping_preference": "NO_SHIPPING"}}
	var out struct {
		PlanID string `json:"plan_id"`
		Links  []link `json:"links"`
	}
	if err := c.callRetrying(ctx, http.MethodPost, "/v1/billing/subscriptions/"+url.PathEscape(id)+"/revise", requestID, body, &out); err != nil {
		return "", fmt.Errorf("paypal revise subscription: %w", err)
	}
	for _, l := range out.Links {
		if l.Rel == "approve" && l.Href != "" {
			return l.Href, nil
		}
	}
	return "", errors.New("paypal revise subscription: no approve link")
}
