package paymentstest

import (
	"net/http"
	"strings"
	"time"
)

// Charges and balance transactions, as Stripe documents them: a succeeded
// PaymentIntent's latest_charge is a charge whose balance_transaction holds
// what Stripe kept (fee, fee_details) and what is left (net). Both are ids
// unless asked for with expand[] (latest_charge,
// latest_charge.balance_transaction), and readable at GET /v1/charges/{id}
// and GET /v1/balance_transactions/{id}. The fake's fee is Stripe's US card
// price, 2.9% + 30¢ (rounded half up).

// StripeFeeOn is the fake's fee on a card payment of amount.
func StripeFeeOn(amount int64) int64 { return (amount*29+500)/1000 + 30 }

// chargeLocked makes the charge and balance transaction of pi, which just
// succeeded.
func (s *Stripe) chargeLocked(pi map[string]any) {
	chID := pi["latest_charge"].(string)
	if s.charges[chID] != nil {
		return
	}
	amount := num(pi["amount_received"])
	fee := StripeFeeOn(amount)
	txn := s.nextID("txn")
	s.balanceTxns[txn] = map[string]any{"id": txn, "object": "balance_transaction", "amount": amount, "currency": pi["currency"],
		"fee": fee, "net": amount - fee, "type": "charge", "source": chID, "status": "pending", "created": time.Now().Unix(),
		"fee_details": []any{map[string]any{"amount": fee, "currency": pi["currency"], "type": "stripe_fee", "description": "Stripe processing fees", "application": nil}}}
	s.charges[chID] = map[string]any{"id": chID, "object": "charge", "amount": amount, "amount_captured": amount, "currency": pi["currency"],
		"paid": true, "status": "succeeded", "payment_intent": pi["id"], "balance_transaction": txn, "metadata": pi["metadata"],
		"transfer_data": pi["transfer_data"], "on_behalf_of": pi["on_behalf_of"]}
}

// expands lists the request's expand[] (stripe-go sends expand[0]=...).
func expands(r *http.Request) map[string]bool {
	out := map[string]bool{}
	for k, vs := range r.URL.Query() {
		if k == "expand" || strings.HasPrefix(k, "expand[") {
			for _, v := range vs {
				out[v] = true
			}
		}
	}
	return out
}

// expandLocked answers pi with latest_charge (and its balance_transaction)
// expanded when the request asks.
func (s *Stripe) expandLocked(pi map[string]any, r *http.Request) map[string]any {
	ex := expands(r)
	ch, _ := pi["latest_charge"].(string)
	if ch == "" || s.charges[ch] == nil || (!ex["latest_charge"] && !ex["latest_charge.balance_transaction"]) {
		return pi
	}
	out := clone(pi)
	c := clone(s.charges[ch])
	if ex["latest_charge.balance_transaction"] {
		c["balance_transaction"] = clone(s.balanceTxns[c["balance_transaction"].(string)])
	}
	out["latest_charge"] = c
	return out
}

// balance answers GET /v1/charges/{id} and /v1/balance_transactions/{id};
// false when the request is neither.
func (s *Stripe) balance(w http.ResponseWriter, r *http.Request, parts []string) bool {
	if r.Method != http.MethodGet || len(parts) != 3 || parts[0] != "v1" {
		return false
	}
	var obj map[string]any
	switch parts[1] {
	case "charges":
		obj = s.charges[parts[2]]
		if obj != nil && expands(r)["balance_transaction"] {
			obj = clone(obj)
			obj["balance_transaction"] = s.balanceTxns[obj["balance_transaction"].(string)]
		}
	case "balance_transactions":
		obj = s.balanceTxns[parts[2]]
	default:
		return false
	}
	if obj == nil {
		stripeError(w, 404, "invalid_request_error", "resource_missing", "No such "+strings.TrimSuffix(parts[1], "s")+": '"+parts[2]+"'", nil)
		return true
	}
	writeJSON(w, 200, obj)
	return true
}

// ProcessorFees sums the fees of every balance transaction (what Stripe
// kept of all payments).
func (s *Stripe) ProcessorFees() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum int64
	for _, t := range s.balanceTxns {
		sum += num(t["fee"])
	}
	return sum
}

// ProcessorFee is the fee Stripe kept of PaymentIntent id's charge.
func (s *Stripe) ProcessorFee(id string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	pi := s.intents[id]
	if pi == nil {
		return 0
	}
	ch, _ := pi["latest_charge"].(string)
	if c := s.charges[ch]; c != nil {
		return num(s.balanceTxns[c["balance_transaction"].(string)]["fee"])
	}
	return 0
}
