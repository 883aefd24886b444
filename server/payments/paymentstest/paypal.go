package paymentstest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PayPal is a fake of the parts of PayPal's REST API Marquee calls, plus the
// buyer's approval page.
type PayPal struct {
	ClientID     string
	ClientSecret string
	// WebhookID is the id verify-webhook-signature expects.
	WebhookID string
	// WebhookURL, when set, receives the events emitted on capture and refund.
	WebhookURL string
	URL        string

	// OmitApprovalLink makes created orders come without a payer-action
	// link (to test 'PayPal order created but approval URL is missing').
	OmitApprovalLink bool
	// DeclineCaptures makes captures come back DECLINED.
	DeclineCaptures bool
	// PlatformFeesAllowed: the account is a partner PayPal lets take
	// platform fees; without it an order carrying
	// payment_instruction.platform_fees is refused (403 PERMISSION_DENIED).
	PlatformFeesAllowed bool

	mu         sync.Mutex
	seq        int
	secret     []byte
	tokens     map[string]bool
	tokenCalls int
	orders     map[string]*ppOrder
	captures   map[string]*ppCapture
	idem       map[string]ppAnswer
	inflight   map[string]bool
	holds      holds
	events     []PayPalEvent
	// Subscriptions (paypal_subscriptions.go).
	products map[string]*ppProduct
	plans    map[string]*ppPlan
	subs     map[string]*ppSubscription
	sales    map[string]*PayPalSale
	srv      *httptest.Server
}

// ppAnswer is the first answer to a PayPal-Request-Id, replayed to its
// repeats whatever it was.
type ppAnswer struct {
	status int
	body   []byte
}

// Hold keeps every request to path waiting, its idempotency key in flight,
// until release is called.
func (p *PayPal) Hold(path string) (release func()) { return p.holds.hold(&p.mu, path) }

// Held is how many requests to path wait at a Hold.
func (p *PayPal) Held(path string) int { return p.holds.held(&p.mu, path) }

type ppOrder struct {
	ID        string
	Status    string
	OrderID   string // our order (custom_id)
	Amount    Money
	ReturnURL string
	CancelURL string
	Captures  []string
	// Payee and PaymentInstruction as the order was created with them.
	Payee              *PayPalPayee
	PaymentInstruction *PayPalPaymentInstruction
	// Attribution is the PayPal-Partner-Attribution-Id it came with.
	Attribution string
}

// PayPalPayee is purchase_units[].payee: one of merchant_id or
// email_address.
type PayPalPayee struct {
	MerchantID   string `json:"merchant_id,omitempty"`
	EmailAddress string `json:"email_address,omitempty"`
}

// PayPalPaymentInstruction is purchase_units[].payment_instruction.
type PayPalPaymentInstruction struct {
	DisbursementMode string `json:"disbursement_mode,omitempty"`
	PlatformFees     []struct {
		Amount *Money       `json:"amount"`
		Payee  *PayPalPayee `json:"payee,omitempty"`
	} `json:"platform_fees,omitempty"`
}

// OrderAttribution answers the PayPal-Partner-Attribution-Id (the
// platform's BN code) PayPal order id was created with.
func (p *PayPal) OrderAttribution(id string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.orders[id]; o != nil {
		return o.Attribution
	}
	return ""
}

// OrderParties answers the payee and payment instruction PayPal order id
// was created with (nil when it had none).
func (p *PayPal) OrderParties(id string) (*PayPalPayee, *PayPalPaymentInstruction) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.orders[id]
	if o == nil {
		return nil, nil
	}
	return o.Payee, o.PaymentInstruction
}

// PayPal's documented patterns: a merchant id is 13 characters of
// [2-9A-HJ-NP-Z]; an e-mail address at most 254 characters with one @.
var (
	ppMerchantID = regexp.MustCompile(`^[2-9A-HJ-NP-Z]{13}$`)
	ppEmail      = regexp.MustCompile(`^.+@[^"\-].+$`)
	ppValue      = regexp.MustCompile(`^((-?[0-9]+)|(-?([0-9]+)?[.][0-9]+))$`)
)

// checkPayee answers the issue PayPal names for a malformed payee, "" when
// it is well formed.
func checkPayee(pe *PayPalPayee) string {
	switch {
	case pe.MerchantID == "" && pe.EmailAddress == "":
		return "PAYEE_ACCOUNT_INVALID"
	case pe.MerchantID != "" && !ppMerchantID.MatchString(pe.MerchantID):
		return "INVALID_PARAMETER_SYNTAX"
	case pe.EmailAddress != "" && (len(pe.EmailAddress) > 254 || !ppEmail.MatchString(pe.EmailAddress)):
		return "INVALID_PARAMETER_SYNTAX"
	}
	return ""
}

type ppCapture struct {
	ID       string
	Status   string
	Amount   Money
	CustomID string
	OrderID  string // PayPal's order id
	Refunded int64
}

// Money is PayPal's amount object.
type Money struct {
	CurrencyCode string `json:"currency_code"`
	Value        string `json:"value"`
}

// PayPalEvent is one signed webhook delivery.
type PayPalEvent struct {
	ID     string
	Type   string
	Body   []byte
	Header http.Header
}

func NewPayPal(clientID, clientSecret, webhookID string) *PayPal {
	return &PayPal{ClientID: clientID, ClientSecret: clientSecret, WebhookID: webhookID,
		secret: []byte("fake-paypal-signing-" + webhookID), tokens: map[string]bool{},
		orders: map[string]*ppOrder{}, captures: map[string]*ppCapture{}, idem: map[string]ppAnswer{},
		inflight: map[string]bool{}}
}

// StartPayPal runs a fake PayPal for the test and closes it at the end.
func StartPayPal(t interface{ Cleanup(func()) }, clientID, clientSecret, webhookID string) *PayPal {
	p := NewPayPal(clientID, clientSecret, webhookID)
	p.srv = httptest.NewServer(p)
	p.URL = p.srv.URL
	t.Cleanup(p.srv.Close)
	return p
}

func (p *PayPal) nextID(prefix string) string {
	p.seq++
	return fmt.Sprintf("%s%012d", prefix, p.seq)
}

// TokenCalls is how many OAuth tokens were issued.
func (p *PayPal) TokenCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokenCalls
}

// OrderCount is how many PayPal orders were created.
func (p *PayPal) OrderCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.orders)
}

// CaptureCount is how many captures were made.
func (p *PayPal) CaptureCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.captures)
}

// Approve plays the buyer approving order id on PayPal's page.
func (p *PayPal) Approve(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.orders[id]
	if o == nil || (o.Status != "PAYER_ACTION_REQUIRED" && o.Status != "CREATED") {
		return false
	}
	o.Status = "APPROVED"
	return true
}

// Capture plays a capture of approved order id that PayPal completed while
// Marquee was not listening (its capture call in flight when the order was
// cancelled): the money is taken and PAYMENT.CAPTURE.COMPLETED emitted.
func (p *PayPal) Capture(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.orders[id]
	if o == nil || o.Status != "APPROVED" {
		return false
	}
	return p.captureLocked(o).Status == "COMPLETED"
}

// captureLocked captures approved order o (declined when DeclineCaptures)
// and emits the capture's event.
func (p *PayPal) captureLocked(o *ppOrder) *ppCapture {
	c := &ppCapture{ID: p.nextID("CAPFAKE"), Status: "COMPLETED", Amount: o.Amount, CustomID: o.OrderID, OrderID: o.ID}
	if p.DeclineCaptures {
		c.Status = "DECLINED"
	}
	p.captures[c.ID] = c
	o.Captures = append(o.Captures, c.ID)
	if c.Status == "COMPLETED" {
		o.Status = "COMPLETED"
		p.emitLocked("PAYMENT.CAPTURE.COMPLETED", p.captureJSON(c))
	} else {
		p.emitLocked("PAYMENT.CAPTURE.DENIED", p.captureJSON(c))
	}
	return c
}

// Captured answers what PayPal holds for its order id: how many captures
// took money, how much, and how much of it was refunded.
func (p *PayPal) Captured(id string) (captures int, captured, refunded int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.orders[id]
	if o == nil {
		return 0, 0, 0
	}
	for _, cid := range o.Captures {
		c := p.captures[cid]
		if c.Status == "DECLINED" || c.Status == "FAILED" {
			continue
		}
		captures++
		captured += cents(c.Amount.Value)
		refunded += c.Refunded
	}
	return captures, captured, refunded
}

// Events answers the emitted events, oldest first.
func (p *PayPal) Events() []PayPalEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PayPalEvent(nil), p.events...)
}

func (p *PayPal) sig(transmissionID, when string, body []byte) string {
	m := hmac.New(sha256.New, p.secret)
	fmt.Fprintf(m, "%s|%s|%s|%d", transmissionID, when, p.WebhookID, crc32.ChecksumIEEE(compact(body)))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// Event builds and signs an event of typ about resource, sent at time at,
// without sending it.
func (p *PayPal) Event(typ string, resource any, at time.Time) PayPalEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.eventLocked(typ, resource, at)
}

func (p *PayPal) eventLocked(typ string, resource any, at time.Time) PayPalEvent {
	id := p.nextID("WH-FAKE-")
	body, _ := json.Marshal(map[string]any{"id": id, "event_version": "1.0", "create_time": at.UTC().Format(time.RFC3339),
		"resource_type": strings.ToLower(strings.Split(typ, ".")[1]), "event_type": typ, "resource": resource})
	tid := p.nextID("tx-")
	when := at.UTC().Format(time.RFC3339)
	h := http.Header{}
	h.Set("PAYPAL-TRANSMISSION-ID", tid)
	h.Set("PAYPAL-TRANSMISSION-TIME", when)
	h.Set("PAYPAL-TRANSMISSION-SIG", p.sig(tid, when, body))
	h.Set("PAYPAL-AUTH-ALGO", "SHA256withRSA")
	h.Set("PAYPAL-CERT-URL", p.URL+"/v1/notifications/certs/fake")
	return PayPalEvent{ID: id, Type: typ, Body: body, Header: h}
}

func (p *PayPal) emitLocked(typ string, resource any) {
	ev := p.eventLocked(typ, resource, time.Now())
	p.events = append(p.events, ev)
	if p.WebhookURL != "" {
		go deliver(p.WebhookURL, ev.Body, ev.Header)
	}
}

func ppError(w http.ResponseWriter, status int, name, issue, msg string) {
	body := map[string]any{"name": name, "message": msg}
	if issue != "" {
		body["details"] = []map[string]string{{"issue": issue, "description": msg}}
	}
	writeJSON(w, status, body)
}

func (p *PayPal) orderJSON(o *ppOrder) map[string]any {
	var caps []map[string]any
	for _, id := range o.Captures {
		caps = append(caps, p.captureJSON(p.captures[id]))
	}
	unit := map[string]any{"reference_id": o.OrderID, "custom_id": o.OrderID, "amount": o.Amount}
	if o.Payee != nil {
		unit["payee"] = o.Payee
	}
	if o.PaymentInstruction != nil {
		unit["payment_instruction"] = o.PaymentInstruction
	}
	if len(caps) > 0 {
		unit["payments"] = map[string]any{"captures": caps}
	}
	links := []map[string]string{{"rel": "self", "href": p.URL + "/v2/checkout/orders/" + o.ID, "method": "GET"}}
	if !p.OmitApprovalLink && o.Status != "COMPLETED" {
		links = append(links, map[string]string{"rel": "payer-action", "href": p.URL + "/checkoutnow?token=" + o.ID, "method": "GET"})
	}
	return map[string]any{"id": o.ID, "status": o.Status, "intent": "CAPTURE", "purchase_units": []any{unit}, "links": links}
}

// PayPalFeeOn is the fake's fee on a capture of amount: PayPal's US
// checkout price, 3.49% + 49¢ (rounded half up).
func PayPalFeeOn(amount int64) int64 { return (amount*349+5000)/10000 + 49 }

// ProcessorFees sums the paypal_fee of every completed capture.
func (p *PayPal) ProcessorFees() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum int64
	for _, c := range p.captures {
		if c.Status != "DECLINED" && c.Status != "FAILED" {
			sum += PayPalFeeOn(cents(c.Amount.Value))
		}
	}
	return sum
}

func (p *PayPal) captureJSON(c *ppCapture) map[string]any {
	gross := cents(c.Amount.Value)
	fee := PayPalFeeOn(gross)
	money := func(v int64) Money {
		return Money{CurrencyCode: c.Amount.CurrencyCode, Value: fmt.Sprintf("%d.%02d", v/100, v%100)}
	}
	// As PayPal reports a capture: what the payee receives of it.
	breakdown := map[string]any{"gross_amount": c.Amount, "paypal_fee": money(fee), "net_amount": money(gross - fee)}
	if c.Status == "DECLINED" || c.Status == "FAILED" {
		breakdown = nil
	}
	return map[string]any{"id": c.ID, "status": c.Status, "amount": c.Amount, "custom_id": c.CustomID, "final_capture": true,
		"seller_receivable_breakdown": breakdown,
		"supplementary_data":          map[string]any{"related_ids": map[string]string{"order_id": c.OrderID}},
		"links":                       []map[string]string{{"rel": "self", "href": p.URL + "/v2/payments/captures/" + c.ID}}}
}

// ServeHTTP answers the OAuth token, Orders v2 (create, get, capture),
// captures (get, refund), verify-webhook-signature, and the approval page
// /checkoutnow. Requests are answered one at a time.
func (p *PayPal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	path := r.URL.Path
	switch {
	case path == "/v1/oauth2/token" && r.Method == http.MethodPost:
		id, secret, ok := r.BasicAuth()
		if !ok || id != p.ClientID || secret != p.ClientSecret {
			writeJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": "Client Authentication failed"})
			return
		}
		p.tokenCalls++
		tok := p.nextID("A21AAFAKE")
		p.tokens[tok] = true
		writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 32400, "app_id": "APP-FAKE"})
		return
	case path == "/checkoutnow" && r.Method == http.MethodGet:
		p.approvalPage(w, r)
		return
	case path == "/webapps/billing/subscriptions":
		p.subscriptionApproval(w, r)
		return
	case strings.HasPrefix(path, "/_fake/"):
		p.fakeControl(w, r)
		return
	case path == "/checkoutnow" && r.Method == http.MethodPost:
		_ = r.ParseForm()
		o := p.orders[r.PostForm.Get("token")]
		if o == nil {
			http.Error(w, "unknown order", 404)
			return
		}
		if o.Status == "PAYER_ACTION_REQUIRED" || o.Status == "CREATED" {
			o.Status = "APPROVED"
		}
		// PayPal sends the buyer back with its order id as token.
		back, err := url.Parse(o.ReturnURL)
		if err != nil {
			http.Error(w, "bad return url", 400)
			return
		}
		q := back.Query()
		q.Set("token", o.ID)
		q.Set("PayerID", "FAKEPAYER1")
		back.RawQuery = q.Encode()
		http.Redirect(w, r, back.String(), http.StatusSeeOther)
		return
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !p.tokens[tok] {
		ppError(w, 401, "AUTHENTICATION_FAILURE", "", "Authentication failed due to invalid authentication credentials or a missing Authorization header.")
		return
	}
	// PayPal-Request-Id as PayPal keeps it: the first answer, failures
	// included, is replayed to every repeat; a repeat while the first is
	// still being answered is refused with 409.
	key := r.Header.Get("PayPal-Request-Id")
	if r.Method != http.MethodPost {
		key = ""
	}
	idemKey := r.URL.Path + "|" + key
	if key != "" {
		if p.inflight[idemKey] {
			ppError(w, 409, "RESOURCE_CONFLICT", "DUPLICATE_REQUEST_ID", "A previous request with this PayPal-Request-Id is still being processed.")
			return
		}
		if a, ok := p.idem[idemKey]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			_, _ = w.Write(a.body)
			return
		}
		p.inflight[idemKey] = true
		defer delete(p.inflight, idemKey)
	}
	p.holds.wait(&p.mu, r.URL.Path)
	rec := httptest.NewRecorder()
	p.route(rec, r)
	if key != "" {
		p.idem[idemKey] = ppAnswer{status: rec.Code, body: rec.Body.Bytes()}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (p *PayPal) route(w http.ResponseWriter, r *http.Request) {
	if p.routeSubscriptions(w, r) {
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/v2/checkout/orders" && r.Method == http.MethodPost:
		var in struct {
			Intent        string `json:"intent"`
			PurchaseUnits []struct {
				ReferenceID        string                    `json:"reference_id"`
				CustomID           string                    `json:"custom_id"`
				InvoiceID          string                    `json:"invoice_id"`
				Description        string                    `json:"description"`
				Amount             Money                     `json:"amount"`
				Payee              *PayPalPayee              `json:"payee"`
				PaymentInstruction *PayPalPaymentInstruction `json:"payment_instruction"`
			} `json:"purchase_units"`
			PaymentSource struct {
				PayPal struct {
					ExperienceContext struct {
						ReturnURL string `json:"return_url"`
						CancelURL string `json:"cancel_url"`
					} `json:"experience_context"`
				} `json:"paypal"`
			} `json:"payment_source"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Intent != "CAPTURE" || len(in.PurchaseUnits) != 1 {
			ppError(w, 400, "INVALID_REQUEST", "MALFORMED_REQUEST_JSON", "Request is not well-formed")
			return
		}
		if _, err := strconv.ParseFloat(in.PurchaseUnits[0].Amount.Value, 64); err != nil {
			ppError(w, 422, "UNPROCESSABLE_ENTITY", "INVALID_PARAMETER_VALUE", "amount value")
			return
		}
		if issue, msg := checkUnit(in.PurchaseUnits[0].Amount, in.PurchaseUnits[0].CustomID, in.PurchaseUnits[0].InvoiceID,
			in.PurchaseUnits[0].Description, in.PurchaseUnits[0].Payee, in.PurchaseUnits[0].PaymentInstruction); issue != "" {
			ppError(w, 422, "UNPROCESSABLE_ENTITY", issue, msg)
			return
		}
		// Paying another account (payee) needs nothing more ("Pay another
		// account"); taking a fee (platform_fees) is for partners only, who
		// say who they are with their BN code in PayPal-Partner-Attribution-Id.
		bn := r.Header.Get("PayPal-Partner-Attribution-Id")
		if pi := in.PurchaseUnits[0].PaymentInstruction; bn == "" && pi != nil && len(pi.PlatformFees) > 0 {
			ppError(w, 403, "NOT_AUTHORIZED", "PERMISSION_DENIED", "You do not have permission to access or perform operations on this resource. (platform_fees need the PayPal-Partner-Attribution-Id header)")
			return
		}
		if pi := in.PurchaseUnits[0].PaymentInstruction; pi != nil && len(pi.PlatformFees) > 0 && !p.PlatformFeesAllowed {
			ppError(w, 403, "NOT_AUTHORIZED", "PERMISSION_DENIED", "You do not have permission to access or perform operations on this resource.")
			return
		}
		ctx := in.PaymentSource.PayPal.ExperienceContext
		if ctx.ReturnURL == "" || ctx.CancelURL == "" {
			ppError(w, 422, "UNPROCESSABLE_ENTITY", "MISSING_REQUIRED_PARAMETER", "return_url and cancel_url are required")
			return
		}
		o := &ppOrder{ID: p.nextID("PPFAKE"), Status: "PAYER_ACTION_REQUIRED", OrderID: in.PurchaseUnits[0].CustomID,
			Amount: in.PurchaseUnits[0].Amount, ReturnURL: ctx.ReturnURL, CancelURL: ctx.CancelURL,
			Payee: in.PurchaseUnits[0].Payee, PaymentInstruction: in.PurchaseUnits[0].PaymentInstruction, Attribution: bn}
		p.orders[o.ID] = o
		writeJSON(w, 200, p.orderJSON(o))
	case len(parts) >= 4 && parts[0] == "v2" && parts[1] == "checkout" && parts[2] == "orders":
		o := p.orders[parts[3]]
		if o == nil {
			ppError(w, 404, "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID", "Specified resource ID does not exist.")
			return
		}
		if len(parts) == 4 && r.Method == http.MethodGet {
			writeJSON(w, 200, p.orderJSON(o))
			return
		}
		if len(parts) == 5 && parts[4] == "capture" && r.Method == http.MethodPost {
			switch o.Status {
			case "COMPLETED":
				ppError(w, 422, "UNPROCESSABLE_ENTITY", "ORDER_ALREADY_CAPTURED", "Order already captured.")
				return
			case "APPROVED":
			default:
				ppError(w, 422, "UNPROCESSABLE_ENTITY", "ORDER_NOT_APPROVED", "Payer has not yet approved the Order for payment.")
				return
			}
			p.captureLocked(o)
			writeJSON(w, 201, p.orderJSON(o))
			return
		}
		ppError(w, 404, "NOT_FOUND", "", "not found")
	case len(parts) >= 4 && parts[0] == "v2" && parts[1] == "payments" && parts[2] == "captures":
		c := p.captures[parts[3]]
		if c == nil {
			ppError(w, 404, "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID", "Specified resource ID does not exist.")
			return
		}
		if len(parts) == 4 && r.Method == http.MethodGet {
			writeJSON(w, 200, p.captureJSON(c))
			return
		}
		if len(parts) == 5 && parts[4] == "refund" && r.Method == http.MethodPost {
			var in struct {
				Amount *Money `json:"amount"`
			}
			_ = json.NewDecoder(r.Body).Decode(&in)
			total := cents(c.Amount.Value)
			amount := total - c.Refunded
			if in.Amount != nil {
				amount = cents(in.Amount.Value)
			}
			if c.Status != "COMPLETED" && c.Status != "PARTIALLY_REFUNDED" || amount < 1 || amount > total-c.Refunded {
				ppError(w, 422, "UNPROCESSABLE_ENTITY", "REFUND_AMOUNT_EXCEEDED", "The refund amount must be less than or equal to the capture amount that has not yet been refunded.")
				return
			}
			c.Refunded += amount
			c.Status = "PARTIALLY_REFUNDED"
			if c.Refunded == total {
				c.Status = "REFUNDED"
			}
			rf := map[string]any{"id": p.nextID("REFFAKE"), "status": "COMPLETED",
				"amount": Money{CurrencyCode: c.Amount.CurrencyCode, Value: fmt.Sprintf("%d.%02d", amount/100, amount%100)},
				// As PayPal does: all refunded of the capture so far.
				"seller_payable_breakdown": map[string]any{"total_refunded_amount": Money{CurrencyCode: c.Amount.CurrencyCode,
					Value: fmt.Sprintf("%d.%02d", c.Refunded/100, c.Refunded%100)}},
				"links": []map[string]string{{"rel": "up", "href": p.URL + "/v2/payments/captures/" + c.ID}}}
			p.emitLocked("PAYMENT.CAPTURE.REFUNDED", rf)
			writeJSON(w, 201, rf)
			return
		}
		ppError(w, 404, "NOT_FOUND", "", "not found")
	case r.URL.Path == "/v1/notifications/verify-webhook-signature" && r.Method == http.MethodPost:
		var in struct {
			TransmissionID   string          `json:"transmission_id"`
			TransmissionSig  string          `json:"transmission_sig"`
			TransmissionTime string          `json:"transmission_time"`
			WebhookID        string          `json:"webhook_id"`
			WebhookEvent     json.RawMessage `json:"webhook_event"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			ppError(w, 400, "INVALID_REQUEST", "MALFORMED_REQUEST_JSON", "Request is not well-formed")
			return
		}
		status := "FAILURE"
		want := p.sig(in.TransmissionID, in.TransmissionTime, in.WebhookEvent)
		if in.WebhookID == p.WebhookID && hmac.Equal([]byte(want), []byte(in.TransmissionSig)) {
			status = "SUCCESS"
		}
		writeJSON(w, 200, map[string]string{"verification_status": status})
	default:
		ppError(w, 404, "NOT_FOUND", "", "not found: "+r.Method+" "+r.URL.Path)
	}
}

// checkUnit holds a purchase unit to PayPal's documented rules for the
// fields Marquee sends (Orders v2, purchase_unit_request): the amount's
// currency code and value; custom_id, invoice_id and description lengths;
// payee as one of merchant_id or email_address; payment_instruction's
// disbursement_mode and at most one platform fee, in the unit's currency,
// above zero and not above the unit's amount, on a unit that names its
// payee. It answers PayPal's issue and message, or "".
func checkUnit(amount Money, customID, invoiceID, description string, payee *PayPalPayee, pi *PayPalPaymentInstruction) (string, string) {
	if len(amount.CurrencyCode) != 3 || !ppValue.MatchString(amount.Value) || len(amount.Value) > 32 {
		return "INVALID_PARAMETER_VALUE", "amount"
	}
	if len(customID) > 127 || len(invoiceID) > 127 || len(description) > 127 {
		return "INVALID_STRING_MAX_LENGTH", "custom_id, invoice_id and description are at most 127 characters"
	}
	if payee != nil {
		if issue := checkPayee(payee); issue != "" {
			return issue, "payee"
		}
	}
	if pi == nil {
		return "", ""
	}
	switch pi.DisbursementMode {
	case "", "INSTANT", "DELAYED":
	default:
		return "INVALID_PARAMETER_VALUE", "payment_instruction.disbursement_mode"
	}
	if len(pi.PlatformFees) > 1 {
		return "INVALID_ARRAY_MAX_ITEMS", "payment_instruction.platform_fees holds at most one fee"
	}
	for _, f := range pi.PlatformFees {
		if payee == nil {
			return "PAYEE_NOT_SPECIFIED", "platform_fees need the purchase unit's payee"
		}
		if f.Amount == nil || !ppValue.MatchString(f.Amount.Value) {
			return "MISSING_REQUIRED_PARAMETER", "platform_fees[].amount"
		}
		if f.Amount.CurrencyCode != amount.CurrencyCode {
			return "PLATFORM_FEE_CURRENCY_MISMATCH", "the platform fee's currency must be the purchase unit's"
		}
		if cents(f.Amount.Value) <= 0 || cents(f.Amount.Value) > cents(amount.Value) {
			return "PLATFORM_FEES_AMOUNT_INVALID", "the platform fee must be above zero and at most the amount"
		}
		if f.Payee != nil {
			if issue := checkPayee(f.Payee); issue != "" {
				return issue, "platform_fees[].payee"
			}
		}
	}
	return "", ""
}

func cents(v string) int64 {
	f, _ := strconv.ParseFloat(v, 64)
	return int64(f*100 + 0.5)
}

var approvalTmpl = template.Must(template.New("approve").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PayPal (test) - Approve payment</title>
<style>body{font-family:sans-serif;max-width:28rem;margin:3rem auto;padding:1rem;color:#1a1a2e}
.box{border:1px solid #ccd;border-radius:12px;padding:1.5rem}button{background:#ffc439;border:0;border-radius:24px;padding:.8rem 2rem;font-size:1rem;font-weight:bold;cursor:pointer}
a{display:inline-block;margin-top:1rem}</style></head>
<body><div class="box"><h1>PayPal <small>(test double)</small></h1>
<p>Pay <strong>{{.Amount.Value}} {{.Amount.CurrencyCode}}</strong> for order {{.OrderID}}.</p>
<form method="post" action="/checkoutnow"><input type="hidden" name="token" value="{{.ID}}">
<button type="submit">Pay Now</button></form>
<a href="{{.CancelURL}}">Cancel and return to merchant</a></div></body></html>`))

func (p *PayPal) approvalPage(w http.ResponseWriter, r *http.Request) {
	o := p.orders[r.URL.Query().Get("token")]
	if o == nil {
		http.Error(w, "unknown order", 404)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = approvalTmpl.Execute(w, o)
}
