package paymentstest

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The Billing part of the fake: customers, prices with product_data, and
// subscriptions (create, update cancel_at_period_end, cancel). Stripe
// renews on its own clock; tests play that clock with RenewSubscription,
// FailRenewal and EndSubscription, which emit the signed events Stripe
// would.

func nilIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func formMeta(r *http.Request) map[string]any {
	meta := map[string]any{}
	for k, v := range r.PostForm {
		if strings.HasPrefix(k, "metadata[") {
			meta[strings.TrimSuffix(strings.TrimPrefix(k, "metadata["), "]")] = v[0]
		}
	}
	return meta
}

func (s *Stripe) billing(w http.ResponseWriter, r *http.Request, parts []string) bool {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/customers":
		id := s.nextID("cus")
		cu := map[string]any{"id": id, "object": "customer", "email": r.PostForm.Get("email"), "metadata": formMeta(r)}
		s.customers[id] = cu
		writeJSON(w, 200, cu)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/prices":
		amount, err := strconv.ParseInt(r.PostForm.Get("unit_amount"), 10, 64)
		interval := r.PostForm.Get("recurring[interval]")
		if err != nil || amount < 0 || (interval != "month" && interval != "year") || r.PostForm.Get("product_data[name]") == "" {
			stripeError(w, 400, "invalid_request_error", "parameter_missing", "Invalid price", nil)
			return true
		}
		id := s.nextID("price")
		pr := map[string]any{"id": id, "object": "price", "unit_amount": amount, "currency": r.PostForm.Get("currency"),
			"recurring": map[string]any{"interval": interval, "interval_count": 1}, "product": s.nextID("prod"),
			"nickname": r.PostForm.Get("product_data[name]"), "metadata": formMeta(r)}
		s.prices[id] = pr
		writeJSON(w, 200, pr)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/coupons":
		// As strict as Stripe: percent_off or amount_off (with its
		// currency), a duration, and duration_in_months for repeating only.
		pct, amount, dur := r.PostForm.Get("percent_off"), r.PostForm.Get("amount_off"), r.PostForm.Get("duration")
		months := r.PostForm.Get("duration_in_months")
		bad := func(msg, param string) bool {
			stripeError(w, 400, "invalid_request_error", "parameter_invalid", msg, map[string]any{"param": param})
			return true
		}
		if (pct == "") == (amount == "") {
			return bad("You must pass either percent_off or amount_off, but not both.", "percent_off")
		}
		id := r.PostForm.Get("id")
		if id == "" {
			id = s.nextID("co")
		} else if s.coupons[id] != nil {
			// A coupon's own id is taken once, as on Stripe.
			stripeError(w, 400, "invalid_request_error", "resource_already_exists", "Coupon already exists.", map[string]any{"param": "id"})
			return true
		}
		c := map[string]any{"id": id, "object": "coupon", "duration": dur, "percent_off": nil, "amount_off": nil,
			"currency": nil, "duration_in_months": nil, "valid": true, "metadata": formMeta(r)}
		if pct != "" {
			v, err := strconv.ParseFloat(pct, 64)
			if err != nil || v <= 0 || v > 100 {
				return bad("Invalid percent_off", "percent_off")
			}
			c["percent_off"] = v
		} else {
			v, err := strconv.ParseInt(amount, 10, 64)
			if err != nil || v <= 0 {
				return bad("Invalid amount_off", "amount_off")
			}
			if r.PostForm.Get("currency") == "" {
				return bad("You must pass currency when passing amount_off", "currency")
			}
			c["amount_off"], c["currency"] = v, r.PostForm.Get("currency")
		}
		switch dur {
		case "once", "forever":
			if months != "" {
				return bad("duration_in_months is only valid with duration repeating", "duration_in_months")
			}
		case "repeating":
			m, err := strconv.ParseInt(months, 10, 64)
			if err != nil || m < 1 {
				return bad("A repeating coupon needs duration_in_months", "duration_in_months")
			}
			c["duration_in_months"] = m
		default:
			return bad("Invalid duration: must be one of once, repeating, or forever", "duration")
		}
		s.coupons[c["id"].(string)] = c
		writeJSON(w, 200, c)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/subscriptions":
		cu := s.customers[r.PostForm.Get("customer")]
		pr := s.prices[r.PostForm.Get("items[0][price]")]
		if cu == nil || pr == nil {
			stripeError(w, 400, "invalid_request_error", "resource_missing", "No such customer or price", nil)
			return true
		}
		trialEnd, err := strconv.ParseInt(r.PostForm.Get("trial_end"), 10, 64)
		if err != nil || trialEnd <= time.Now().Unix() {
			stripeError(w, 400, "invalid_request_error", "parameter_invalid_integer", "Invalid trial_end: must be in the future", nil)
			return true
		}
		dest := r.PostForm.Get("transfer_data[destination]")
		if dest != "" {
			s.connectInit()
			if a := s.accounts[dest]; a == nil || a["charges_enabled"] != true {
				stripeError(w, 400, "invalid_request_error", "resource_missing", "No such destination: '"+dest+"'", map[string]any{"param": "transfer_data[destination]"})
				return true
			}
		}
		if !s.checkOnBehalfOf(w, r, dest) {
			return true
		}
		feePct := r.PostForm.Get("application_fee_percent")
		if feePct != "" && dest == "" {
			stripeError(w, 400, "invalid_request_error", "", "application_fee_percent needs transfer_data[destination] (or a Stripe-Account header).", map[string]any{"param": "application_fee_percent"})
			return true
		}
		id := s.nextID("sub")
		sub := map[string]any{"id": id, "object": "subscription", "customer": cu["id"], "status": "trialing",
			"trial_end": trialEnd, "cancel_at_period_end": false, "metadata": formMeta(r),
			"default_payment_method": nilIfEmpty(r.PostForm.Get("default_payment_method")),
			"items": map[string]any{"object": "list", "data": []any{map[string]any{"id": s.nextID("si"), "object": "subscription_item",
				"price": pr, "current_period_start": time.Now().Unix(), "current_period_end": trialEnd}}}}
		sub["transfer_data"], sub["application_fee_percent"] = nil, nil
		sub["on_behalf_of"] = nilIfEmpty(r.PostForm.Get("on_behalf_of"))
		if dest != "" {
			sub["transfer_data"] = map[string]any{"destination": dest}
		}
		if feePct != "" {
			pct, err := strconv.ParseFloat(feePct, 64)
			if err != nil || pct < 0 || pct > 100 {
				stripeError(w, 400, "invalid_request_error", "parameter_invalid", "Invalid application_fee_percent", map[string]any{"param": "application_fee_percent"})
				return true
			}
			sub["application_fee_percent"] = pct
		}
		sub["discounts"] = []any{}
		if code := r.PostForm.Get("discounts[0][coupon]"); code != "" {
			if s.coupons[code] == nil {
				stripeError(w, 400, "invalid_request_error", "resource_missing", "No such coupon: '"+code+"'", map[string]any{"param": "discounts[0][coupon]"})
				return true
			}
			s.subCoupon[id] = subDiscount{Coupon: code, Start: time.Now()}
			sub["discounts"] = []any{s.nextID("di")}
		}
		s.subscriptions[id] = sub
		writeJSON(w, 200, sub)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/billing_portal/sessions":
		cu := s.customers[r.PostForm.Get("customer")]
		if cu == nil {
			stripeError(w, 400, "invalid_request_error", "resource_missing", "No such customer: '"+r.PostForm.Get("customer")+"'", map[string]any{"param": "customer"})
			return true
		}
		id := s.nextID("bps")
		writeJSON(w, 200, map[string]any{"id": id, "object": "billing_portal.session", "customer": cu["id"],
			"return_url": nilIfEmpty(r.PostForm.Get("return_url")), "url": s.URL + "/p/session/" + id, "livemode": false,
			"created": time.Now().Unix()})
	case len(parts) == 3 && parts[0] == "v1" && parts[1] == "subscriptions":
		sub := s.subscriptions[parts[2]]
		if sub == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such subscription: '"+parts[2]+"'", nil)
			return true
		}
		switch r.Method {
		case http.MethodGet:
		case http.MethodPost:
			if sub["status"] == "canceled" {
				stripeError(w, 400, "invalid_request_error", "resource_missing", "A canceled subscription can only update its cancellation_details and metadata.", nil)
				return true
			}
			if v := r.PostForm.Get("cancel_at_period_end"); v != "" {
				sub["cancel_at_period_end"] = v == "true"
			}
			if !s.changeItemLocked(w, r, sub) {
				return true
			}
		case http.MethodDelete:
			s.endLocked(sub)
		default:
			return false
		}
		writeJSON(w, 200, sub)
	default:
		return false
	}
	return true
}

func (s *Stripe) endLocked(sub map[string]any) {
	if sub["status"] == "canceled" {
		return
	}
	sub["status"] = "canceled"
	sub["ended_at"] = time.Now().Unix()
	s.emitLocked("customer.subscription.deleted", sub)
}

// Subscription answers a copy of a subscription, nil when there is none.
func (s *Stripe) Subscription(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.subscriptions[id])
}

// SubscriptionIDs lists the subscriptions made, oldest first.
func (s *Stripe) SubscriptionIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.subscriptions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// invoiceLocked bills the subscription's next period: status "paid" or
// "open" (the card was declined), and answers the invoice.
func (s *Stripe) invoiceLocked(sub map[string]any, paid bool) map[string]any {
	item := sub["items"].(map[string]any)["data"].([]any)[0].(map[string]any)
	pr := item["price"].(map[string]any)
	start := num(item["current_period_end"])
	end := time.Unix(start, 0).UTC().AddDate(0, 1, 0)
	if pr["recurring"].(map[string]any)["interval"] == "year" {
		end = time.Unix(start, 0).UTC().AddDate(1, 0, 0)
	}
	amount := s.discountedLocked(sub, num(pr["unit_amount"]), start)
	inv := map[string]any{"id": s.nextID("in"), "object": "invoice", "customer": sub["customer"], "currency": pr["currency"],
		"amount_due": amount, "amount_paid": 0, "status": "open", "billing_reason": "subscription_cycle",
		"period_start": start, "period_end": start,
		"parent": map[string]any{"type": "subscription_details", "subscription_details": map[string]any{"subscription": sub["id"], "metadata": sub["metadata"]}},
		"lines": map[string]any{"object": "list", "data": []any{map[string]any{"id": s.nextID("il"), "object": "line_item",
			"amount": amount, "currency": pr["currency"], "period": map[string]any{"start": start, "end": end.Unix()}}}}}
	if paid {
		inv["status"], inv["amount_paid"] = "paid", amount
		if td, _ := sub["transfer_data"].(map[string]any); td != nil {
			// Each paid invoice of a Connect subscription pays its
			// fee and transfers the rest's charge to the account.
			charge := s.nextID("ch")
			fee := int64(0)
			if pct, ok := sub["application_fee_percent"].(float64); ok {
				fee = int64(float64(amount)*pct/100 + 0.5)
			}
			s.connectInit()
			t := &Transfer{ID: s.nextID("tr"), Destination: td["destination"].(string), Charge: charge, Amount: amount}
			s.transfers[t.ID] = t
			inv["application_fee_amount"] = fee
			if fee > 0 {
				f := &ApplicationFee{ID: s.nextID("fee"), Account: t.Destination, Charge: charge, Amount: fee}
				s.appFees[f.ID] = f
			}
			inv["transfer_data"] = map[string]any{"destination": t.Destination}
		}
		item["current_period_start"], item["current_period_end"] = start, end.Unix()
		sub["status"] = "active"
	} else {
		sub["status"] = "past_due"
	}
	return inv
}

// RenewSubscription plays Stripe charging the next period: the period
// moves on and invoice.paid is emitted (and answered, unsent when no
// WebhookURL is set).
func (s *Stripe) RenewSubscription(id string) SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoiceLocked(s.subscriptions[id], true)
	s.emitLocked("invoice.paid", inv)
	return s.events[len(s.events)-1]
}

// FailRenewal plays a declined renewal: invoice.payment_failed.
func (s *Stripe) FailRenewal(id string) SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := s.invoiceLocked(s.subscriptions[id], false)
	s.emitLocked("invoice.payment_failed", inv)
	return s.events[len(s.events)-1]
}

// EndSubscription plays Stripe ending the subscription (retries ran out,
// or its cancel_at_period_end came): customer.subscription.deleted.
func (s *Stripe) EndSubscription(id string) SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(s.subscriptions[id])
	return s.events[len(s.events)-1]
}

// subDiscount is a subscription's coupon and when it was applied.
type subDiscount struct {
	Coupon  string
	Start   time.Time
	Applied int
}

// discountedLocked is amount with the subscription's coupon, for the
// invoice of the period starting at start: once applies to the first
// invoice, repeating to invoices within duration_in_months of the
// discount's start, forever to all.
func (s *Stripe) discountedLocked(sub map[string]any, amount, start int64) int64 {
	id, _ := sub["id"].(string)
	d, ok := s.subCoupon[id]
	if !ok {
		return amount
	}
	c := s.coupons[d.Coupon]
	switch c["duration"] {
	case "once":
		if d.Applied > 0 {
			return amount
		}
	case "repeating":
		if !time.Unix(start, 0).Before(d.Start.AddDate(0, int(num(c["duration_in_months"])), 0)) {
			return amount
		}
	}
	d.Applied++
	s.subCoupon[id] = d
	if pct, ok := c["percent_off"].(float64); ok {
		return amount - int64(float64(amount)*pct/100+0.5)
	}
	if off := num(c["amount_off"]); off < amount {
		return amount - off
	}
	return 0
}

// Coupon answers a copy of a coupon, nil when there is none.
func (s *Stripe) Coupon(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.coupons[id])
}

// SubscriptionCoupon answers the coupon a subscription's discount applies.
func (s *Stripe) SubscriptionCoupon(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subCoupon[id].Coupon
}

// changeItemLocked applies items[0][id] + items[0][price] of a subscription
// update as Stripe does: the item must be the subscription's, the price
// must exist, and proration_behavior always_invoice bills the difference
// for the rest of the period at once (invoice.paid with billing_reason
// subscription_update). Metadata merges. A change emits
// customer.subscription.updated. It answers false after writing an error.
func (s *Stripe) changeItemLocked(w http.ResponseWriter, r *http.Request, sub map[string]any) bool {
	for k, v := range formMeta(r) {
		sub["metadata"].(map[string]any)[k] = v
	}
	itemID, priceID := r.PostForm.Get("items[0][id]"), r.PostForm.Get("items[0][price]")
	if itemID == "" && priceID == "" {
		return true
	}
	behaviour := r.PostForm.Get("proration_behavior")
	switch behaviour {
	case "", "create_prorations", "none", "always_invoice":
	default:
		stripeError(w, 400, "invalid_request_error", "parameter_invalid", "Invalid proration_behavior: must be one of create_prorations, none, or always_invoice", map[string]any{"param": "proration_behavior"})
		return false
	}
	// discounts[0][coupon] replaces the subscription's discount from now.
	if code := r.PostForm.Get("discounts[0][coupon]"); code != "" {
		if s.coupons[code] == nil {
			stripeError(w, 400, "invalid_request_error", "resource_missing", "No such coupon: '"+code+"'", map[string]any{"param": "discounts[0][coupon]"})
			return false
		}
		s.subCoupon[sub["id"].(string)] = subDiscount{Coupon: code, Start: time.Now()}
		sub["discounts"] = []any{s.nextID("di")}
	}
	item := sub["items"].(map[string]any)["data"].([]any)[0].(map[string]any)
	if itemID != item["id"] {
		stripeError(w, 400, "invalid_request_error", "resource_missing", "No such subscription item: '"+itemID+"'", map[string]any{"param": "items[0][id]"})
		return false
	}
	pr := s.prices[priceID]
	if pr == nil {
		stripeError(w, 400, "invalid_request_error", "resource_missing", "No such price: '"+priceID+"'", map[string]any{"param": "items[0][price]"})
		return false
	}
	old := item["price"].(map[string]any)
	if old["currency"] != pr["currency"] || old["recurring"].(map[string]any)["interval"] != pr["recurring"].(map[string]any)["interval"] {
		stripeError(w, 400, "invalid_request_error", "", "Prices of one subscription must share currency and interval.", map[string]any{"param": "items[0][price]"})
		return false
	}
	item["price"] = pr
	now := time.Now().Unix()
	start, end := num(item["current_period_start"]), num(item["current_period_end"])
	diff := num(pr["unit_amount"]) - num(old["unit_amount"])
	if behaviour == "always_invoice" && diff > 0 && end > now && end > start {
		amount := (diff*(end-now) + (end - start) - 1) / (end - start)
		amount = s.discountedLocked(sub, amount, now) // the coupon, if any, discounts this invoice too
		inv := map[string]any{"id": s.nextID("in"), "object": "invoice", "customer": sub["customer"], "currency": pr["currency"],
			"amount_due": amount, "amount_paid": amount, "status": "paid", "billing_reason": "subscription_update",
			"period_start": now, "period_end": now,
			"parent": map[string]any{"type": "subscription_details", "subscription_details": map[string]any{"subscription": sub["id"], "metadata": sub["metadata"]}},
			"lines": map[string]any{"object": "list", "data": []any{map[string]any{"id": s.nextID("il"), "object": "line_item",
				"amount": amount, "currency": pr["currency"], "period": map[string]any{"start": now, "end": end}}}}}
		s.emitLocked("invoice.paid", inv)
	}
	s.emitLocked("customer.subscription.updated", sub)
	return true
}

// EndTrial plays the end of subscription id's free trial as Stripe does:
// a subscription set to cancel at the period end, or one without a card
// whose trial_settings say cancel, is cancelled
// (customer.subscription.deleted); a card that cannot be charged
// (pm_card_chargeCustomerFail, a declined card) makes the first invoice
// fail (invoice.payment_failed, past_due); any other card is charged
// (invoice.paid, active). customer.subscription.updated follows a charge.
// It answers the invoice's (or the deletion's) event; none for a
// subscription that is not trialing.
func (s *Stripe) EndTrial(id string) SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := s.subscriptions[id]
	if sub == nil || sub["status"] != "trialing" {
		return SignedEvent{}
	}
	pm, _ := sub["default_payment_method"].(string)
	missing := ""
	if ts, ok := sub["trial_settings"].(map[string]any); ok {
		missing, _ = ts["end_behavior"].(map[string]any)["missing_payment_method"].(string)
	}
	if sub["cancel_at_period_end"] == true || (pm == "" && missing == "cancel") {
		s.endLocked(sub)
		return s.events[len(s.events)-1]
	}
	paid := pm != "" && !declined(pm) && !strings.Contains(pm, "CustomerFail")
	inv := s.invoiceLocked(sub, paid)
	typ := "invoice.payment_failed"
	if paid {
		typ = "invoice.paid"
	}
	s.emitLocked(typ, inv)
	ev := s.events[len(s.events)-1]
	s.emitLocked("customer.subscription.updated", sub)
	return ev
}
