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
			"nickname": r.PostForm.Get("product_data[name]")}
		s.prices[id] = pr
		writeJSON(w, 200, pr)
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
		s.subscriptions[id] = sub
		writeJSON(w, 200, sub)
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
	amount := num(pr["unit_amount"])
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
