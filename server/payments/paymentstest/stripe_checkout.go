package paymentstest

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Checkout Sessions, as Stripe documents them for mode=payment:
//   - POST /v1/checkout/sessions: mode, success_url and line_items (with
//     price_data: currency, unit_amount, product_data[name]; and quantity)
//     are required; the session is "open", payment_status "unpaid", with a
//     url to the hosted page and no payment_intent yet;
//   - GET /v1/checkout/sessions/{id}; POST .../{id}/expire (open only);
//   - the hosted page (/checkout/pay/{id}, the fake's stand-in for
//     checkout.stripe.com) takes a card with a plain form: the payment's
//     PaymentIntent succeeds (its own metadata is payment_intent_data's,
//     not the session's), the session becomes complete and paid,
//     checkout.session.completed is emitted, and the browser goes to
//     success_url ({CHECKOUT_SESSION_ID} filled in). An expired or
//     completed session's page says so.

func (s *Stripe) checkoutInit() {
	if s.sessions == nil {
		s.sessions = map[string]map[string]any{}
	}
}

// CheckoutSession answers a copy of a session.
func (s *Stripe) CheckoutSession(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkoutInit()
	return clone(s.sessions[id])
}

// CheckoutSessionCount is how many sessions were created.
func (s *Stripe) CheckoutSessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// PayCheckout plays the buyer paying session id on the hosted page; it
// answers false when the session cannot be paid.
func (s *Stripe) PayCheckout(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkoutInit()
	cs := s.sessions[id]
	if cs == nil || cs["status"] != "open" {
		return false
	}
	if cs["mode"] == "subscription" {
		return s.completeSubscriptionLocked(cs, "pm_card_visa") == ""
	}
	s.payCheckoutLocked(cs)
	return true
}

func (s *Stripe) payCheckoutLocked(cs map[string]any) {
	id := s.nextID("pi")
	meta, _ := cs["payment_intent_metadata"].(map[string]any)
	pi := map[string]any{"id": id, "object": "payment_intent", "amount": cs["amount_total"], "amount_received": 0,
		"currency": cs["currency"], "status": "requires_payment_method", "client_secret": id + "_secret_fake", "metadata": meta,
		"last_payment_error": nil, "created": time.Now().Unix(), "livemode": false, "transfer_data": nil, "application_fee_amount": nil,
		"on_behalf_of": nil, "customer": nil}
	s.intents[id] = pi
	s.confirmLocked(pi, "pm_card_visa")
	cs["status"], cs["payment_status"], cs["payment_intent"] = "complete", "paid", id
	s.emitLocked("checkout.session.completed", s.sessionJSON(cs))
}

// sessionJSON is a session as the API shows it (without the fake's own
// bookkeeping).
func (s *Stripe) sessionJSON(cs map[string]any) map[string]any {
	out := clone(cs)
	delete(out, "payment_intent_metadata")
	delete(out, "subscription_data")
	return out
}

// checkout answers the Checkout Sessions API; false when the request is
// not one.
func (s *Stripe) checkout(w http.ResponseWriter, r *http.Request, parts []string) bool {
	if len(parts) < 3 || parts[0] != "v1" || parts[1] != "checkout" || parts[2] != "sessions" {
		return false
	}
	s.checkoutInit()
	switch {
	case len(parts) == 3 && r.Method == http.MethodPost:
		f := r.PostForm
		if f.Get("mode") != "payment" && f.Get("mode") != "subscription" && f.Get("mode") != "setup" {
			stripeError(w, 400, "invalid_request_error", "parameter_missing", "Missing required param: mode.", map[string]any{"param": "mode"})
			return true
		}
		if f.Get("success_url") == "" {
			stripeError(w, 400, "invalid_request_error", "parameter_missing", "Missing required param: success_url.", map[string]any{"param": "success_url"})
			return true
		}
		if f.Get("mode") == "subscription" {
			s.createSubscriptionSession(w, r)
			return true
		}
		cur := f.Get("line_items[0][price_data][currency]")
		unit, err := strconv.ParseInt(f.Get("line_items[0][price_data][unit_amount]"), 10, 64)
		qty, qerr := strconv.ParseInt(f.Get("line_items[0][quantity]"), 10, 64)
		if cur == "" || err != nil || unit < 1 || qerr != nil || qty < 1 || f.Get("line_items[0][price_data][product_data][name]") == "" {
			stripeError(w, 400, "invalid_request_error", "parameter_missing", "line_items need price_data (currency, unit_amount, product_data[name]) and a quantity in payment mode.", map[string]any{"param": "line_items"})
			return true
		}
		piMeta := map[string]any{}
		for k, v := range f {
			if strings.HasPrefix(k, "payment_intent_data[metadata][") {
				piMeta[strings.TrimSuffix(strings.TrimPrefix(k, "payment_intent_data[metadata]["), "]")] = v[0]
			}
		}
		id := s.nextID("cs_test")
		cs := map[string]any{"id": id, "object": "checkout.session", "mode": f.Get("mode"), "status": "open", "payment_status": "unpaid",
			"amount_total": unit * qty, "amount_subtotal": unit * qty, "currency": cur, "metadata": formMeta(r),
			"success_url": f.Get("success_url"), "cancel_url": nilIfEmpty(f.Get("cancel_url")), "customer_email": nilIfEmpty(f.Get("customer_email")),
			"payment_intent": nil, "url": s.URL + "/checkout/pay/" + id, "created": time.Now().Unix(),
			"expires_at": time.Now().Add(24 * time.Hour).Unix(), "livemode": false, "payment_intent_metadata": piMeta}
		s.sessions[id] = cs
		writeJSON(w, 200, s.sessionJSON(cs))
	case len(parts) >= 4:
		cs := s.sessions[parts[3]]
		if cs == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such checkout.session: '"+parts[3]+"'", nil)
			return true
		}
		switch {
		case len(parts) == 4 && r.Method == http.MethodGet:
			writeJSON(w, 200, s.sessionJSON(cs))
		case len(parts) == 5 && parts[4] == "expire" && r.Method == http.MethodPost:
			if cs["status"] != "open" {
				stripeError(w, 400, "invalid_request_error", "", "Only Checkout Sessions with a status in [\"open\"] can be expired.", nil)
				return true
			}
			cs["status"], cs["url"] = "expired", nil
			s.emitLocked("checkout.session.expired", s.sessionJSON(cs))
			writeJSON(w, 200, s.sessionJSON(cs))
		default:
			stripeError(w, 404, "invalid_request_error", "", "Unrecognized request URL", nil)
		}
	default:
		stripeError(w, 404, "invalid_request_error", "", "Unrecognized request URL", nil)
	}
	return true
}

// checkoutPage is the hosted payment page; false when the request is not
// for it.
func (s *Stripe) checkoutPage(w http.ResponseWriter, r *http.Request) bool {
	id, ok := strings.CutPrefix(r.URL.Path, "/checkout/pay/")
	if !ok {
		return false
	}
	s.checkoutInit()
	cs := s.sessions[id]
	if cs == nil {
		http.NotFound(w, r)
		return true
	}
	if cs["status"] != "open" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusGone)
		fmt.Fprint(w, "<!doctype html><title>Checkout</title><h1>This checkout session is no longer available</h1>")
		return true
	}
	if cs["mode"] == "subscription" {
		s.subscriptionCheckoutPage(w, r, cs)
		return true
	}
	if r.Method == http.MethodPost {
		s.payCheckoutLocked(cs)
		back := strings.ReplaceAll(cs["success_url"].(string), "{CHECKOUT_SESSION_ID}", id)
		http.Redirect(w, r, back, http.StatusSeeOther)
		return true
	}
	amount := num(cs["amount_total"])
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>Checkout (fake Stripe)</title>
<h1>Pay %d.%02d %s</h1><form method="post"><label>Card number <input name="card" value="4242 4242 4242 4242"></label>
<button type="submit" id="fake-checkout-pay">Pay</button></form>`, amount/100, amount%100, html.EscapeString(strings.ToUpper(cs["currency"].(string))))
	return true
}
