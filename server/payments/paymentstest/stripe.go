// Package paymentstest holds local fakes of Stripe and PayPal for tests:
// stripe-mock checks request shapes but keeps no state, so these keep
// PaymentIntents, orders, captures and refunds, honour idempotency keys the
// way the real services do, and send signed webhooks. Both are plain
// http.Handlers: httptest servers in Go tests, and a process
// (scripts/fakepaypal) for browser tests.
package paymentstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	sg "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// Stripe is a fake of the parts of Stripe's API Marquee calls.
type Stripe struct {
	// WebhookSecret signs the events it emits (whsec_...).
	WebhookSecret string
	// WebhookURL, when set, receives every emitted event (in the background).
	WebhookURL string
	URL        string
	// ConnectWebhookSecret signs Connect events (account.updated), which
	// go to ConnectWebhookURL (stripe_connect.go).
	ConnectWebhookSecret string
	ConnectWebhookURL    string

	mu      sync.Mutex
	seq     int
	intents map[string]map[string]any
	refunds map[string]map[string]any
	// customers, prices and subscriptions: Billing, for memberships.
	customers     map[string]map[string]any
	prices        map[string]map[string]any
	subscriptions map[string]map[string]any
	// coupons, and the coupon (with its start) each subscription's
	// discount applies (stripe_billing.go).
	coupons   map[string]map[string]any
	subCoupon map[string]subDiscount
	// idem remembers each Idempotency-Key's first answer.
	idem     map[string]idemAnswer
	events   []SignedEvent
	requests []string
	// failing counts the coming requests to a path that answer 500.
	failing map[string]int
	// inflight holds the Idempotency-Keys of requests being answered;
	// holds keeps requests to a path waiting (outside the lock) until the
	// test releases them.
	inflight map[string]bool
	holds    holds
	srv      *httptest.Server
	// Connect: accounts, account links, transfers, application fees.
	accounts  map[string]map[string]any
	links     map[string]*accountLink
	transfers map[string]*Transfer
	appFees   map[string]*ApplicationFee
	// charges and balance transactions of succeeded payments: Stripe's
	// fee is the balance transaction's (stripe_balance.go).
	charges     map[string]map[string]any
	balanceTxns map[string]map[string]any
	// sessions: Checkout Sessions (stripe_checkout.go).
	sessions map[string]map[string]any
}

type idemAnswer struct {
	fingerprint string
	status      int
	body        []byte
}

// SignedEvent is one emitted webhook delivery.
type SignedEvent struct {
	ID      string
	Type    string
	Payload []byte
	Header  string
}

// At is the time in the event's signature (t=...).
func (e SignedEvent) At() time.Time {
	for _, part := range strings.Split(e.Header, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return time.Unix(n, 0)
		}
	}
	return time.Time{}
}

func NewStripe(webhookSecret string) *Stripe {
	return &Stripe{WebhookSecret: webhookSecret, intents: map[string]map[string]any{}, refunds: map[string]map[string]any{},
		idem: map[string]idemAnswer{}, customers: map[string]map[string]any{}, prices: map[string]map[string]any{},
		subscriptions: map[string]map[string]any{}, inflight: map[string]bool{},
		coupons: map[string]map[string]any{}, subCoupon: map[string]subDiscount{},
		charges: map[string]map[string]any{}, balanceTxns: map[string]map[string]any{}}
}

// StartStripe runs a fake Stripe for the test and closes it at the end.
func StartStripe(t interface{ Cleanup(func()) }, webhookSecret string) *Stripe {
	s := NewStripe(webhookSecret)
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Stripe) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s_fake%06d", prefix, s.seq)
}

// FailNext makes the next n requests to path (such as "/v1/subscriptions")
// answer 500, as during an outage of Stripe's.
func (s *Stripe) FailNext(path string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing == nil {
		s.failing = map[string]int{}
	}
	s.failing[path] = n
}

// Hold keeps every request to path waiting, its idempotency key in flight,
// until release is called.
func (s *Stripe) Hold(path string) (release func()) { return s.holds.hold(&s.mu, path) }

// Held is how many requests to path wait at a Hold.
func (s *Stripe) Held(path string) int { return s.holds.held(&s.mu, path) }

// IntentCount is how many PaymentIntents were created.
func (s *Stripe) IntentCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.intents)
}

// Intent answers a copy of a PaymentIntent.
func (s *Stripe) Intent(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.intents[id])
}

// IntentIDs lists the PaymentIntents made, oldest first.
func (s *Stripe) IntentIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.intents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Events answers the emitted events, oldest first.
func (s *Stripe) Events() []SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SignedEvent(nil), s.events...)
}

// Requests lists "METHOD path" of every API call received.
func (s *Stripe) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Sign makes a Stripe-Signature header for payload at time at, as Stripe
// would with the endpoint's secret (webhook.GenerateTestSignedPayload).
func (s *Stripe) Sign(payload []byte, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: s.WebhookSecret, Timestamp: at}).Header
}

// Event builds and signs an event of typ about object, without sending it.
func (s *Stripe) Event(typ string, object map[string]any) SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eventLocked(typ, object)
}

func (s *Stripe) eventLocked(typ string, object map[string]any) SignedEvent {
	id := s.nextID("evt")
	payload, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": sg.APIVersion, "created": time.Now().Unix(),
		"type": typ, "livemode": false, "pending_webhooks": 1,
		"data": map[string]any{"object": object},
	})
	return SignedEvent{ID: id, Type: typ, Payload: payload, Header: s.Sign(payload, time.Now())}
}

func (s *Stripe) emitLocked(typ string, object map[string]any) {
	ev := s.eventLocked(typ, clone(object))
	s.events = append(s.events, ev)
	if s.WebhookURL != "" {
		go deliver(s.WebhookURL, ev.Payload, http.Header{"Stripe-Signature": {ev.Header}})
	}
}

func deliver(url string, body []byte, h http.Header) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}

func clone(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// Succeed plays the browser's Payment Element confirming intent id with a
// good card: the intent succeeds and payment_intent.succeeded is emitted.
func (s *Stripe) Succeed(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pi := s.intents[id]; pi != nil {
		s.confirmLocked(pi, "pm_card_visa")
	}
}

// Decline plays a declined card on intent id.
func (s *Stripe) Decline(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pi := s.intents[id]; pi != nil {
		s.confirmLocked(pi, "pm_card_chargeDeclined")
	}
}

func declined(pm string) bool { return strings.Contains(strings.ToLower(pm), "declined") }

// confirmLocked moves pi as Stripe would for payment method pm and emits the
// event; it answers whether the card was declined.
func (s *Stripe) confirmLocked(pi map[string]any, pm string) bool {
	pi["payment_method"] = pm
	if declined(pm) {
		pi["status"] = "requires_payment_method"
		pi["last_payment_error"] = map[string]any{"type": "card_error", "code": "card_declined", "decline_code": "generic_decline",
			"message": "Your card was declined."}
		s.emitLocked("payment_intent.payment_failed", pi)
		return true
	}
	pi["status"] = "succeeded"
	pi["amount_received"] = pi["amount"]
	pi["last_payment_error"] = nil
	pi["latest_charge"] = "ch_" + strings.TrimPrefix(pi["id"].(string), "pi_")
	s.chargeLocked(pi)
	s.settleLocked(pi)
	s.emitLocked("payment_intent.succeeded", pi)
	return false
}

func stripeError(w http.ResponseWriter, status int, typ, code, msg string, extra map[string]any) {
	e := map[string]any{"type": typ, "code": code, "message": msg}
	for k, v := range extra {
		e[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

// ServeHTTP answers /v1/payment_intents, /v1/payment_intents/{id},
// /v1/payment_intents/{id}/confirm, /v1/refunds and Billing. Idempotency
// works as Stripe documents it: the first answer to a key, errors and 500s
// included, is stored and replayed to every later request with that key
// (other parameters are refused); a request whose key is still being
// answered gets 409 idempotency_error, which stripe-go retries.
func (s *Stripe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if err := r.ParseForm(); err != nil {
		stripeError(w, 400, "invalid_request_error", "", "bad form", nil)
		return
	}
	if s.onboardingPage(w, r) || s.checkoutPage(w, r) {
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer sk_") && !s.browserConfirm(r) {
		stripeError(w, 401, "invalid_request_error", "", "Invalid API Key provided", nil)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if r.Method != http.MethodPost {
		key = ""
	}
	fp := r.Method + " " + r.URL.Path + "?" + r.PostForm.Encode()
	if key != "" {
		if s.inflight[key] {
			stripeError(w, 409, "idempotency_error", "", "There is currently another in-progress request using this Stripe-Idempotency-Key. Please try again later.", nil)
			return
		}
		if a, ok := s.idem[key]; ok {
			if a.fingerprint != fp {
				stripeError(w, 400, "idempotency_error", "", "Keys for idempotent requests can only be used with the same parameters they were first used with.", nil)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Idempotent-Replayed", "true")
			if a.status >= 500 {
				w.Header().Set("Stripe-Should-Retry", "false")
			}
			w.WriteHeader(a.status)
			_, _ = w.Write(a.body)
			return
		}
		s.inflight[key] = true
		defer delete(s.inflight, key)
	}
	s.holds.wait(&s.mu, r.URL.Path)
	rec := httptest.NewRecorder()
	if s.failing[r.URL.Path] > 0 {
		s.failing[r.URL.Path]--
		// Stripe says not to retry at once; the caller's own retry comes
		// later, and with the same key it gets this 500 again.
		rec.Header().Set("Stripe-Should-Retry", "false")
		stripeError(rec, 500, "api_error", "", "An unknown error occurred", nil)
	} else {
		s.route(rec, r)
	}
	if key != "" {
		s.idem[key] = idemAnswer{fingerprint: fp, status: rec.Code, body: rec.Body.Bytes()}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Stripe) route(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/payment_intents":
		amount, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
		if err != nil || amount < 1 {
			stripeError(w, 400, "invalid_request_error", "parameter_invalid_integer", "Invalid amount", map[string]any{"param": "amount"})
			return
		}
		meta := map[string]any{}
		for k, v := range r.PostForm {
			if strings.HasPrefix(k, "metadata[") {
				meta[strings.TrimSuffix(strings.TrimPrefix(k, "metadata["), "]")] = v[0]
			}
		}
		if !s.checkDestination(w, r, amount) {
			return
		}
		id := s.nextID("pi")
		pi := map[string]any{"id": id, "object": "payment_intent", "amount": amount, "amount_received": 0,
			"currency": r.PostForm.Get("currency"), "status": "requires_payment_method",
			"client_secret": id + "_secret_fake", "metadata": meta, "last_payment_error": nil,
			"created": time.Now().Unix(), "livemode": false, "receipt_email": r.PostForm.Get("receipt_email"),
			"customer": nilIfEmpty(r.PostForm.Get("customer")), "setup_future_usage": nilIfEmpty(r.PostForm.Get("setup_future_usage")),
			"transfer_data": nil, "application_fee_amount": nil}
		if d := r.PostForm.Get("transfer_data[destination]"); d != "" {
			pi["transfer_data"] = map[string]any{"destination": d}
		}
		pi["on_behalf_of"] = nilIfEmpty(r.PostForm.Get("on_behalf_of"))
		if f := r.PostForm.Get("application_fee_amount"); f != "" {
			pi["application_fee_amount"], _ = strconv.ParseInt(f, 10, 64)
		}
		s.intents[id] = pi
		writeJSON(w, 200, pi)
	case len(parts) >= 3 && parts[0] == "v1" && parts[1] == "payment_intents":
		pi := s.intents[parts[2]]
		if pi == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such payment_intent: '"+parts[2]+"'", nil)
			return
		}
		if len(parts) == 3 && r.Method == http.MethodGet {
			writeJSON(w, 200, s.expandLocked(pi, r))
			return
		}
		if len(parts) == 4 && parts[3] == "cancel" && r.Method == http.MethodPost {
			switch pi["status"] {
			case "succeeded", "canceled":
				stripeError(w, 400, "invalid_request_error", "payment_intent_unexpected_state",
					"You cannot cancel this PaymentIntent because it has a status of "+pi["status"].(string)+".", map[string]any{"payment_intent": pi})
				return
			}
			pi["status"] = "canceled"
			pi["cancellation_reason"] = r.PostForm.Get("cancellation_reason")
			s.emitLocked("payment_intent.canceled", pi)
			writeJSON(w, 200, pi)
			return
		}
		if len(parts) == 4 && parts[3] == "confirm" && r.Method == http.MethodPost {
			if pi["status"] == "canceled" {
				stripeError(w, 400, "invalid_request_error", "payment_intent_unexpected_state",
					"You cannot confirm this PaymentIntent because it has a status of canceled.", nil)
				return
			}
			if pi["status"] == "succeeded" {
				stripeError(w, 400, "invalid_request_error", "payment_intent_unexpected_state",
					"You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.", nil)
				return
			}
			pm := r.PostForm.Get("payment_method")
			if pm == "" {
				pm = "pm_card_visa"
			}
			if s.confirmLocked(pi, pm) {
				stripeError(w, 402, "card_error", "card_declined", "Your card was declined.",
					map[string]any{"decline_code": "generic_decline", "payment_intent": pi})
				return
			}
			writeJSON(w, 200, pi)
			return
		}
		stripeError(w, 404, "invalid_request_error", "", "Unrecognized request URL", nil)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/refunds":
		pi := s.intents[r.PostForm.Get("payment_intent")]
		if pi == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such payment_intent", nil)
			return
		}
		if pi["status"] != "succeeded" {
			stripeError(w, 400, "invalid_request_error", "charge_not_refundable", "This PaymentIntent has no successful charge to refund.", nil)
			return
		}
		received := num(pi["amount_received"])
		already := num(pi["amount_refunded"])
		amount := received - already
		if a := r.PostForm.Get("amount"); a != "" {
			amount, _ = strconv.ParseInt(a, 10, 64)
		}
		if amount < 1 || amount > received-already {
			stripeError(w, 400, "invalid_request_error", "amount_too_large", "Refund amount is greater than unrefunded amount on charge", nil)
			return
		}
		conn, ok := s.refundConnectLocked(w, r, pi, amount, already, received)
		if !ok {
			return
		}
		pi["amount_refunded"] = already + amount
		id := s.nextID("re")
		rf := map[string]any{"id": id, "object": "refund", "amount": amount, "currency": pi["currency"], "status": "succeeded",
			"payment_intent": pi["id"], "charge": pi["latest_charge"], "reason": r.PostForm.Get("reason")}
		for k, v := range conn {
			rf[k] = v
		}
		s.refunds[id] = rf
		s.emitLocked("charge.refunded", map[string]any{"id": pi["latest_charge"], "object": "charge", "amount": received,
			"amount_refunded": already + amount, "refunded": already+amount == received, "currency": pi["currency"],
			"payment_intent": pi["id"], "metadata": pi["metadata"]})
		writeJSON(w, 200, rf)
	default:
		if !s.billing(w, r, parts) && !s.connect(w, r, parts) && !s.balance(w, r, parts) && !s.checkout(w, r, parts) {
			stripeError(w, 404, "invalid_request_error", "", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+")", nil)
		}
	}
}

func num(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// browserConfirm reports whether r is what Stripe.js sends from the
// browser to confirm a PaymentIntent: the publishable key and the intent's
// client secret in the body, no secret key.
func (s *Stripe) browserConfirm(r *http.Request) bool {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 4 || parts[1] != "payment_intents" || parts[3] != "confirm" {
		return false
	}
	pi := s.intents[parts[2]]
	return strings.HasPrefix(r.PostForm.Get("key"), "pk_") && pi != nil && pi["client_secret"] == r.PostForm.Get("client_secret")
}
