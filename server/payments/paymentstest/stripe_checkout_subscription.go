package paymentstest

import (
	"fmt"
	"html"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Checkout Sessions in subscription mode, as Stripe documents them, for a
// free trial that needs a card (issue 40 item 5):
//   - POST /v1/checkout/sessions with mode=subscription needs success_url
//     and line_items[0][price] (an existing recurring price) with a
//     quantity; subscription_data[trial_period_days] is 1 to 730;
//     subscription_data[transfer_data][destination] must be an account
//     that takes charges (and subscription_data[on_behalf_of], if given,
//     the same one, with card payments active); application_fee_percent
//     needs a destination; discounts[0][coupon] must exist;
//     payment_method_collection is always or if_required;
//     subscription_data[trial_settings][end_behavior][missing_payment_method]
//     is cancel, pause or create_invoice. A trial session's amount_total
//     is 0 (nothing is due today).
//   - the hosted page saves the card (4000 0000 0000 0002 is declined and
//     the session stays open; 4000 0000 0000 0341 is saved but every
//     charge to it fails, pm_card_chargeCustomerFail) and makes the
//     customer and the subscription, trialing until trial_end with the
//     card as its default payment method; it emits
//     customer.subscription.created, the trial's $0 invoice.paid
//     (billing_reason subscription_create) and checkout.session.completed
//     (complete, payment_status no_payment_required), and sends the
//     browser to success_url.
//   - EndTrial plays the trial's end (stripe_billing.go's clock).

func (s *Stripe) createSubscriptionSession(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	bad := func(code, msg, param string) {
		stripeError(w, 400, "invalid_request_error", code, msg, map[string]any{"param": param})
	}
	pr := s.prices[f.Get("line_items[0][price]")]
	if pr == nil {
		bad("resource_missing", "No such price: '"+f.Get("line_items[0][price]")+"'", "line_items[0][price]")
		return
	}
	if pr["recurring"] == nil {
		bad("", "You must provide at least one recurring price in `subscription` mode when using prices.", "line_items[0][price]")
		return
	}
	if qty, err := strconv.ParseInt(f.Get("line_items[0][quantity]"), 10, 64); err != nil || qty != 1 {
		bad("parameter_invalid_integer", "Invalid line_items[0][quantity]", "line_items[0][quantity]")
		return
	}
	days := int64(0)
	if v := f.Get("subscription_data[trial_period_days]"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 730 {
			bad("parameter_invalid_integer", "subscription_data[trial_period_days] must be between 1 and 730", "subscription_data[trial_period_days]")
			return
		}
		days = n
	}
	switch f.Get("payment_method_collection") {
	case "", "always", "if_required":
	default:
		bad("parameter_invalid", "Invalid payment_method_collection", "payment_method_collection")
		return
	}
	missing := f.Get("subscription_data[trial_settings][end_behavior][missing_payment_method]")
	switch missing {
	case "", "cancel", "pause", "create_invoice":
	default:
		bad("parameter_invalid", "Invalid missing_payment_method", "subscription_data[trial_settings][end_behavior][missing_payment_method]")
		return
	}
	dest := f.Get("subscription_data[transfer_data][destination]")
	s.connectInit()
	if dest != "" {
		if a := s.accounts[dest]; a == nil || a["charges_enabled"] != true {
			bad("resource_missing", "No such destination: '"+dest+"'", "subscription_data[transfer_data][destination]")
			return
		}
	}
	if obo := f.Get("subscription_data[on_behalf_of]"); obo != "" {
		a := s.accounts[obo]
		if caps, _ := a["capabilities"].(map[string]any); a == nil || caps["card_payments"] != "active" || (dest != "" && dest != obo) {
			bad("", "The account referenced in 'subscription_data[on_behalf_of]' must take card payments and be the destination.", "subscription_data[on_behalf_of]")
			return
		}
	}
	fee := any(nil)
	if v := f.Get("subscription_data[application_fee_percent]"); v != "" {
		pct, err := strconv.ParseFloat(v, 64)
		if dest == "" {
			bad("", "application_fee_percent needs subscription_data[transfer_data][destination].", "subscription_data[application_fee_percent]")
			return
		}
		if err != nil || pct < 0 || pct > 100 {
			bad("parameter_invalid", "Invalid application_fee_percent", "subscription_data[application_fee_percent]")
			return
		}
		fee = pct
	}
	coupon := f.Get("discounts[0][coupon]")
	if coupon != "" && s.coupons[coupon] == nil {
		bad("resource_missing", "No such coupon: '"+coupon+"'", "discounts[0][coupon]")
		return
	}
	if f.Get("success_url") == "" {
		bad("parameter_missing", "Missing required param: success_url.", "success_url")
		return
	}
	subMeta := map[string]any{}
	for k, v := range f {
		if strings.HasPrefix(k, "subscription_data[metadata][") {
			subMeta[strings.TrimSuffix(strings.TrimPrefix(k, "subscription_data[metadata]["), "]")] = v[0]
		}
	}
	total := num(pr["unit_amount"])
	if days > 0 {
		total = 0
	}
	id := s.nextID("cs_test")
	cs := map[string]any{"id": id, "object": "checkout.session", "mode": "subscription", "status": "open", "payment_status": "unpaid",
		"amount_total": total, "amount_subtotal": total, "currency": pr["currency"], "metadata": formMeta(r),
		"success_url": f.Get("success_url"), "cancel_url": nilIfEmpty(f.Get("cancel_url")), "customer_email": nilIfEmpty(f.Get("customer_email")),
		"customer": nil, "subscription": nil, "payment_intent": nil, "url": s.URL + "/checkout/pay/" + id, "created": time.Now().Unix(),
		"expires_at": time.Now().Add(24 * time.Hour).Unix(), "livemode": false,
		"subscription_data": map[string]any{"price": pr["id"], "trial_period_days": days, "metadata": subMeta, "destination": dest,
			"on_behalf_of": f.Get("subscription_data[on_behalf_of]"), "application_fee_percent": fee, "coupon": coupon,
			"missing_payment_method": missing}}
	s.sessions[id] = cs
	writeJSON(w, 200, s.sessionJSON(cs))
}

// completeSubscriptionLocked saves card pm on session cs and makes its
// customer and subscription; it answers Stripe's decline message when the
// card cannot be saved (the session stays open).
func (s *Stripe) completeSubscriptionLocked(cs map[string]any, pm string) string {
	if declined(pm) {
		return "Your card was declined."
	}
	sd := cs["subscription_data"].(map[string]any)
	pr := s.prices[sd["price"].(string)]
	cu := map[string]any{"id": s.nextID("cus"), "object": "customer", "email": cs["customer_email"], "metadata": map[string]any{}}
	s.customers[cu["id"].(string)] = cu
	now := time.Now().Unix()
	days := num(sd["trial_period_days"])
	status, trialEnd, periodEnd := "active", any(nil), time.Unix(now, 0).AddDate(0, 1, 0).Unix()
	if days > 0 {
		end := now + days*24*3600
		status, trialEnd, periodEnd = "trialing", end, end
	}
	id := s.nextID("sub")
	sub := map[string]any{"id": id, "object": "subscription", "customer": cu["id"], "status": status, "trial_end": trialEnd,
		"cancel_at_period_end": false, "metadata": sd["metadata"], "default_payment_method": pm, "pending_setup_intent": nil,
		"currency": pr["currency"], "application_fee_percent": sd["application_fee_percent"], "transfer_data": nil,
		"on_behalf_of": nilIfEmpty(sd["on_behalf_of"].(string)), "discounts": []any{},
		"trial_settings": map[string]any{"end_behavior": map[string]any{"missing_payment_method": orDefault(sd["missing_payment_method"].(string), "create_invoice")}},
		"items": map[string]any{"object": "list", "data": []any{map[string]any{"id": s.nextID("si"), "object": "subscription_item",
			"price": pr, "current_period_start": now, "current_period_end": periodEnd}}}}
	if d := sd["destination"].(string); d != "" {
		sub["transfer_data"] = map[string]any{"destination": d}
	}
	if c := sd["coupon"].(string); c != "" {
		s.subCoupon[id] = subDiscount{Coupon: c, Start: time.Now()}
		sub["discounts"] = []any{s.nextID("di")}
	}
	s.subscriptions[id] = sub
	s.emitLocked("customer.subscription.created", sub)
	if days > 0 {
		// The trial's own invoice: nothing due, paid at once.
		s.emitLocked("invoice.paid", map[string]any{"id": s.nextID("in"), "object": "invoice", "customer": cu["id"], "currency": pr["currency"],
			"amount_due": 0, "amount_paid": 0, "status": "paid", "billing_reason": "subscription_create", "period_start": now, "period_end": now,
			"parent": map[string]any{"type": "subscription_details", "subscription_details": map[string]any{"subscription": id, "metadata": sub["metadata"]}},
			"lines": map[string]any{"object": "list", "data": []any{map[string]any{"id": s.nextID("il"), "object": "line_item", "amount": 0,
				"currency": pr["currency"], "period": map[string]any{"start": now, "end": periodEnd}}}}})
	}
	cs["status"], cs["payment_status"], cs["subscription"], cs["customer"] = "complete", "no_payment_required", id, cu["id"]
	if days == 0 {
		cs["payment_status"] = "paid"
	}
	s.emitLocked("checkout.session.completed", s.sessionJSON(cs))
	return ""
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// cardPaymentMethod is the test payment method a card number stands for.
func cardPaymentMethod(number string) string {
	switch strings.ReplaceAll(number, " ", "") {
	case "4000000000000002":
		return "pm_card_chargeDeclined"
	case "4000000000000341":
		return "pm_card_chargeCustomerFail"
	}
	return "pm_card_visa"
}

// PayCheckoutWith plays the member saving card pm on a subscription
// session's hosted page; it answers Stripe's message when it is refused.
func (s *Stripe) PayCheckoutWith(id, pm string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkoutInit()
	cs := s.sessions[id]
	if cs == nil || cs["status"] != "open" || cs["mode"] != "subscription" {
		return "This checkout session is no longer available"
	}
	return s.completeSubscriptionLocked(cs, pm)
}

func (s *Stripe) subscriptionCheckoutPage(w http.ResponseWriter, r *http.Request, cs map[string]any) {
	msg := ""
	if r.Method == http.MethodPost {
		if msg = s.completeSubscriptionLocked(cs, cardPaymentMethod(r.PostForm.Get("card"))); msg == "" {
			back := strings.ReplaceAll(cs["success_url"].(string), "{CHECKOUT_SESSION_ID}", cs["id"].(string))
			http.Redirect(w, r, back, http.StatusSeeOther)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusPaymentRequired)
	}
	sd := cs["subscription_data"].(map[string]any)
	pr := s.prices[sd["price"].(string)]
	amount := num(pr["unit_amount"])
	heading := fmt.Sprintf("Subscribe: %d.%02d %s / %s", amount/100, amount%100, strings.ToUpper(cs["currency"].(string)),
		pr["recurring"].(map[string]any)["interval"])
	button := "Subscribe"
	if days := num(sd["trial_period_days"]); days > 0 {
		heading = fmt.Sprintf("Try %s: %d days free, then %d.%02d %s / %s", pr["nickname"], days, amount/100, amount%100,
			strings.ToUpper(cs["currency"].(string)), pr["recurring"].(map[string]any)["interval"])
		button = "Start trial"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	errHTML := ""
	if msg != "" {
		errHTML = `<p role="alert" id="fake-checkout-error">` + html.EscapeString(msg) + `</p>`
	}
	fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>Checkout (fake Stripe)</title>
<h1>%s</h1>%s<form method="post"><label>Card number <input name="card" value="4242 4242 4242 4242"></label>
<button type="submit" id="fake-checkout-pay">%s</button></form>`, html.EscapeString(heading), errHTML, button)
}

// CheckoutSessionIDs lists the sessions made, oldest first.
func (s *Stripe) CheckoutSessionIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkoutInit()
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
