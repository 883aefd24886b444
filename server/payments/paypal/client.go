// Package paypal takes PayPal payments through PayPal's Orders v2 REST API
// over net/http: Client is the thin layer (OAuth token, orders, captures,
// refunds, webhook signature check); Provider puts it behind
// payments.Provider and payments.Webhooks.
package paypal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Client.
type Options struct {
	ClientID     string
	ClientSecret string
	// APIBase: https://api-m.sandbox.paypal.com (default) or
	// https://api-m.paypal.com, or a fake in tests.
	APIBase    string
	WebhookID  string
	HTTPClient *http.Client
	// PartnerAttributionID (PAYPAL_BN_CODE) is the platform's BN code,
	// sent as PayPal-Partner-Attribution-Id on every order that names a
	// payee when set: PayPal refuses platform_fees without it.
	PartnerAttributionID string
}

// Client speaks to PayPal's REST API. Its OAuth token is cached until
// shortly before it expires.
type Client struct {
	o    Options
	http *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

func NewClient(o Options) *Client {
	o.APIBase = strings.TrimRight(o.APIBase, "/")
	if o.APIBase == "" {
		o.APIBase = "https://api-m.sandbox.paypal.com"
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{o: o, http: hc}
}

// APIError is PayPal's error answer.
type APIError struct {
	Status  int
	Name    string `json:"name"`
	Message string `json:"message"`
	Details []struct {
		Issue       string `json:"issue"`
		Description string `json:"description"`
	} `json:"details"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("paypal %d %s: %s", e.Status, e.Name, e.Message)
}

// Issue reports whether PayPal named issue (e.g. ORDER_ALREADY_CAPTURED).
func (e *APIError) Issue(issue string) bool {
	for _, d := range e.Details {
		if d.Issue == issue {
			return true
		}
	}
	return false
}

// Token answers a valid OAuth access token, fetching one when the cached
// one is missing or about to expire.
func (c *Client) Token(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && time.Now().Before(c.expires) {
		return c.token, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.o.APIBase+"/v1/oauth2/token",
		strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(c.o.ClientID, c.o.ClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := c.send(req, &out); err != nil {
		return "", fmt.Errorf("paypal token: %w", err)
	}
	if out.AccessToken == "" {
		return "", errors.New("paypal token: empty access token")
	}
	life := time.Duration(out.ExpiresIn) * time.Second
	// Renew a minute early so a request never carries a token that expires
	// on its way.
	if life > 2*time.Minute {
		life -= time.Minute
	}
	c.token, c.expires = out.AccessToken, time.Now().Add(life)
	return c.token, nil
}

func (c *Client) send(req *http.Request, out any) error {
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		apiErr := &APIError{Status: res.StatusCode}
		_ = json.Unmarshal(body, apiErr)
		return apiErr
	}
	if out != nil && len(body) > 0 {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("decode paypal answer: %w", err)
		}
	}
	return nil
}

// call sends a JSON request with the bearer token; requestID, when set, is
// PayPal-Request-Id, PayPal's idempotency key.
func (c *Client) call(ctx context.Context, method, path, requestID string, in, out any) error {
	return c.callWith(ctx, method, path, requestID, nil, in, out)
}

// callWith is call with extra request headers.
func (c *Client) callWith(ctx context.Context, method, path, requestID string, header http.Header, in, out any) error {
	tok, err := c.Token(ctx)
	if err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.o.APIBase+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Prefer", "return=representation")
	if requestID != "" {
		req.Header.Set("PayPal-Request-Id", requestID)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	err = c.send(req, out)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized {
		// The token was revoked or expired early: forget it so the next
		// call fetches another.
		c.mu.Lock()
		c.token = ""
		c.mu.Unlock()
	}
	return err
}

// Value turns minor units into PayPal's decimal string ("12.34"). Marquee's
// currencies have two decimals (SPEC.md: USD).
func Value(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// Cents parses PayPal's decimal string back into minor units.
func Cents(v string) (int64, error) {
	v = strings.TrimSpace(v)
	whole, frac, _ := strings.Cut(v, ".")
	if len(frac) > 2 {
		return 0, fmt.Errorf("amount %q has more than two decimals", v)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", v, err)
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("amount %q: bad decimals", v)
	}
	if strings.HasPrefix(whole, "-") {
		return w*100 - f, nil
	}
	return w*100 + f, nil
}

// Money is PayPal's amount object.
type Money struct {
	CurrencyCode string `json:"currency_code"`
	Value        string `json:"value"`
}

type link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

// Capture is one capture of an order's payment.
type Capture struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Amount   Money  `json:"amount"`
	CustomID string `json:"custom_id"`
	// SellerReceivableBreakdown is what the payee receives of it: the
	// gross, PayPal's fee and the net (and the platform's fees).
	SellerReceivableBreakdown *struct {
		GrossAmount *Money `json:"gross_amount"`
		PayPalFee   *Money `json:"paypal_fee"`
		NetAmount   *Money `json:"net_amount"`
	} `json:"seller_receivable_breakdown"`
}

// Fee is what PayPal kept of the capture, nil when it does not say.
func (c *Capture) Fee() *Money {
	if c.SellerReceivableBreakdown == nil {
		return nil
	}
	return c.SellerReceivableBreakdown.PayPalFee
}

// Order is the part of a PayPal order the product reads.
type Order struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	Links         []link `json:"links"`
	PurchaseUnits []struct {
		ReferenceID string `json:"reference_id"`
		CustomID    string `json:"custom_id"`
		Amount      Money  `json:"amount"`
		Payments    struct {
			Captures []Capture `json:"captures"`
		} `json:"payments"`
	} `json:"purchase_units"`
}

// ApprovalURL is where the buyer approves the order ("payer-action" for
// orders made with payment_source, "approve" for older ones).
func (o *Order) ApprovalURL() string {
	for _, rel := range []string{"payer-action", "approve"} {
		for _, l := range o.Links {
			if l.Rel == rel && l.Href != "" {
				return l.Href
			}
		}
	}
	return ""
}

// OrderRef is our order id as PayPal keeps it (custom_id).
func (o *Order) OrderRef() string {
	if len(o.PurchaseUnits) == 0 {
		return ""
	}
	if o.PurchaseUnits[0].CustomID != "" {
		return o.PurchaseUnits[0].CustomID
	}
	return o.PurchaseUnits[0].ReferenceID
}

// Captures lists the order's captures.
func (o *Order) Captures() []Capture {
	var out []Capture
	for _, u := range o.PurchaseUnits {
		out = append(out, u.Payments.Captures...)
	}
	return out
}

// CreateOrder asks PayPal for an order to approve.
type CreateOrder struct {
	OrderID   string
	Number    string
	Amount    int64
	Currency  string
	ReturnURL string
	CancelURL string
	// RequestID is PayPal-Request-Id: a retry answers the same order.
	RequestID string
	// Description is shown to the buyer on PayPal's page (at most 127
	// characters); empty sends none.
	Description string
	// Payee is the creator who receives the money (purchase_units[].payee);
	// nil leaves it to the operator's own account.
	Payee *Payee
	// PlatformFee is the operator's share taken from the payee's money
	// (purchase_units[].payment_instruction.platform_fees), in minor
	// units; 0 sends none. PayPal accepts it only from a partner account
	// allowed to take fees, and only with a Payee.
	PlatformFee int64
}

// Payee names who receives an order's money: a PayPal merchant id or the
// account's e-mail (PayPal takes either, the id when both are known).
type Payee struct {
	MerchantID   string `json:"merchant_id,omitempty"`
	EmailAddress string `json:"email_address,omitempty"`
}

func (c *Client) CreateOrder(ctx context.Context, in CreateOrder) (*Order, error) {
	unit := map[string]any{
		"reference_id": in.OrderID,
		"custom_id":    in.OrderID,
		"invoice_id":   in.Number,
		"amount":       Money{CurrencyCode: strings.ToUpper(in.Currency), Value: Value(in.Amount)},
	}
	if in.Description != "" {
		unit["description"] = in.Description
	}
	var header http.Header
	if in.Payee != nil && (in.Payee.MerchantID != "" || in.Payee.EmailAddress != "") {
		if c.o.PartnerAttributionID != "" {
			header = http.Header{"Paypal-Partner-Attribution-Id": {c.o.PartnerAttributionID}}
		}
		payee := *in.Payee
		if payee.MerchantID != "" {
			payee.EmailAddress = ""
		}
		unit["payee"] = payee
		if in.PlatformFee > 0 {
			unit["payment_instruction"] = map[string]any{
				"disbursement_mode": "INSTANT",
				"platform_fees": []map[string]any{{
					"amount": Money{CurrencyCode: strings.ToUpper(in.Currency), Value: Value(in.PlatformFee)},
				}},
			}
		}
	}
	body := map[string]any{
		"intent":         "CAPTURE",
		"purchase_units": []map[string]any{unit},
		"payment_source": map[string]any{"paypal": map[string]any{"experience_context": map[string]any{
			"return_url": in.ReturnURL, "cancel_url": in.CancelURL,
			"user_action": "PAY_NOW", "shipping_preference": "NO_SHIPPING",
		}}},
	}
	var out Order
	if err := c.callWith(ctx, http.MethodPost, "/v2/checkout/orders", in.RequestID, header, body, &out); err != nil {
		return nil, fmt.Errorf("paypal create order: %w", err)
	}
	return &out, nil
}

// GetOrder answers how a PayPal order stands.
func (c *Client) GetOrder(ctx context.Context, id string) (*Order, error) {
	var out Order
	if err := c.call(ctx, http.MethodGet, "/v2/checkout/orders/"+url.PathEscape(id), "", nil, &out); err != nil {
		return nil, fmt.Errorf("paypal get order: %w", err)
	}
	return &out, nil
}

// CaptureOrder captures an approved order. Capturing twice is harmless: an
// order PayPal says is already captured is read back and answered as it is.
func (c *Client) CaptureOrder(ctx context.Context, id, requestID string) (*Order, error) {
	var out Order
	err := c.call(ctx, http.MethodPost, "/v2/checkout/orders/"+url.PathEscape(id)+"/capture", requestID, map[string]any{}, &out)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Issue("ORDER_ALREADY_CAPTURED") {
		return c.GetOrder(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("paypal capture order: %w", err)
	}
	return &out, nil
}

// Refund is a refund PayPal made.
type Refund struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Amount Money  `json:"amount"`
}

// RefundCapture gives back amount (0: all) of a capture.
func (c *Client) RefundCapture(ctx context.Context, captureID string, amount int64, currency, note, requestID string) (*Refund, error) {
	body := map[string]any{}
	if amount > 0 {
		body["amount"] = Money{CurrencyCode: strings.ToUpper(currency), Value: Value(amount)}
	}
	if note != "" {
		if len(note) > 255 {
			note = note[:255]
		}
		body["note_to_payer"] = note
	}
	var out Refund
	if err := c.call(ctx, http.MethodPost, "/v2/payments/captures/"+url.PathEscape(captureID)+"/refund", requestID, body, &out); err != nil {
		return nil, fmt.Errorf("paypal refund: %w", err)
	}
	return &out, nil
}

// ErrNoWebhookID: webhooks are refused until PAYPAL_WEBHOOK_ID is set (the
// signature check needs it).
var ErrNoWebhookID = errors.New("paypal webhook id not configured")

// ErrBadSignature: PayPal did not vouch for the delivery.
var ErrBadSignature = errors.New("paypal webhook signature not verified")

// VerifyWebhook asks PayPal's verify-webhook-signature whether a delivery
// (its headers and raw body) is one PayPal sent to our webhook.
func (c *Client) VerifyWebhook(ctx context.Context, header http.Header, body []byte) error {
	if c.o.WebhookID == "" {
		return ErrNoWebhookID
	}
	if !json.Valid(body) {
		return fmt.Errorf("%w: body is not JSON", ErrBadSignature)
	}
	in := map[string]any{
		"auth_algo":         header.Get("PAYPAL-AUTH-ALGO"),
		"cert_url":          header.Get("PAYPAL-CERT-URL"),
		"transmission_id":   header.Get("PAYPAL-TRANSMISSION-ID"),
		"transmission_sig":  header.Get("PAYPAL-TRANSMISSION-SIG"),
		"transmission_time": header.Get("PAYPAL-TRANSMISSION-TIME"),
		"webhook_id":        c.o.WebhookID,
		"webhook_event":     json.RawMessage(body),
	}
	for _, k := range []string{"auth_algo", "cert_url", "transmission_id", "transmission_sig", "transmission_time"} {
		if in[k] == "" {
			return fmt.Errorf("%w: missing %s", ErrBadSignature, k)
		}
	}
	var out struct {
		VerificationStatus string `json:"verification_status"`
	}
	if err := c.call(ctx, http.MethodPost, "/v1/notifications/verify-webhook-signature", "", in, &out); err != nil {
		return fmt.Errorf("paypal verify webhook: %w", err)
	}
	if out.VerificationStatus != "SUCCESS" {
		return ErrBadSignature
	}
	return nil
}

// CaptureDetail is a capture with the ids that tie it to an order.
type CaptureDetail struct {
	Capture
	SupplementaryData struct {
		RelatedIDs struct {
			OrderID string `json:"order_id"`
		} `json:"related_ids"`
	} `json:"supplementary_data"`
}

// GetCapture reads one capture (a refund webhook names only the capture).
func (c *Client) GetCapture(ctx context.Context, id string) (*CaptureDetail, error) {
	var out CaptureDetail
	if err := c.call(ctx, http.MethodGet, "/v2/payments/captures/"+url.PathEscape(id), "", nil, &out); err != nil {
		return nil, fmt.Errorf("paypal get capture: %w", err)
	}
	return &out, nil
}
