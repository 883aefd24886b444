package paymentstest

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The fake's PayPal Subscriptions: Catalog Products (/v1/catalogs/products),
// Billing Plans (/v1/billing/plans) and Subscriptions
// (/v1/billing/subscriptions: create, get, cancel, suspend, activate,
// revise), the buyer's approval page, and the webhooks PayPal sends about
// them (BILLING.SUBSCRIPTION.*, PAYMENT.SALE.COMPLETED). As PayPal does, it
// refuses what PayPal refuses: missing or malformed fields (400
// INVALID_REQUEST, with the field), states a call does not fit (422
// UNPROCESSABLE_ENTITY, e.g. SUBSCRIPTION_STATUS_INVALID), unknown ids (404
// RESOURCE_NOT_FOUND). Approving a subscription activates it and takes the
// first cycle's payment at once; RenewSubscription and
// FailSubscriptionPayment play the later cycles.

type ppProduct struct {
	ID, Name, Type, Description string
	Created                     time.Time
}

type ppFrequency struct {
	IntervalUnit  string `json:"interval_unit"`
	IntervalCount int    `json:"interval_count"`
}

type ppCycle struct {
	Frequency     *ppFrequency `json:"frequency,omitempty"`
	TenureType    string       `json:"tenure_type"`
	Sequence      int          `json:"sequence"`
	TotalCycles   *int         `json:"total_cycles,omitempty"`
	PricingScheme *struct {
		FixedPrice *Money `json:"fixed_price"`
	} `json:"pricing_scheme,omitempty"`
}

func (c ppCycle) price() Money {
	if c.PricingScheme == nil || c.PricingScheme.FixedPrice == nil {
		return Money{}
	}
	return *c.PricingScheme.FixedPrice
}

func (c ppCycle) total() int {
	if c.TotalCycles == nil {
		return 1
	}
	return *c.TotalCycles
}

type ppPlan struct {
	ID, ProductID, Name, Status string
	Cycles                      []ppCycle
	Created                     time.Time
}

type ppSubscription struct {
	ID, PlanID, CustomID, Status string
	BAToken                      string
	ReturnURL, CancelURL         string
	Email                        string
	// Cycles are the plan's, with the create call's overrides.
	Cycles    []ppCycle
	Completed map[int]int // cycles completed by sequence
	Created   time.Time
	Start     time.Time
	NextBill  time.Time
	Last      *Money
	LastTime  time.Time
	Failed    int
	Sales     []string
	// Revision waiting for approval (revise): the plan it moves to and
	// where the buyer goes back after approving it.
	PendingPlan                  string
	PendingCycles                []ppCycle
	PendingReturn, PendingCancel string
	// Overridden: the cycles are not the plan's (an override).
	Overridden bool
	// Revisions counts the revise calls PayPal made (replays of a
	// PayPal-Request-Id are not calls).
	Revisions  int
	StatusNote string
}

// PayPalSale is a payment PayPal took for a subscription cycle.
type PayPalSale struct {
	ID             string
	SubscriptionID string
	CustomID       string
	Amount         Money
	Fee            int64
	Time           time.Time
	// Refunds are the refunds made of it (Payments v1), in cents.
	Refunds []int64
}

// Refunded is how much of the sale was given back.
func (s *PayPalSale) Refunded() int64 {
	var n int64
	for _, r := range s.Refunds {
		n += r
	}
	return n
}

// saleState is the sale's state as PayPal names it in Payments v1
// (completed, partially_refunded, refunded) and in the subscription's
// transactions (the same, upper case).
func (s *PayPalSale) saleState() string {
	switch r := s.Refunded(); {
	case r == 0:
		return "completed"
	case r >= cents(s.Amount.Value):
		return "refunded"
	}
	return "partially_refunded"
}

func (p *PayPal) initSubs() {
	if p.products == nil {
		p.products, p.plans, p.subs, p.sales = map[string]*ppProduct{}, map[string]*ppPlan{}, map[string]*ppSubscription{}, map[string]*PayPalSale{}
	}
}

// ppInvalid answers 400 INVALID_REQUEST naming the field, as PayPal does
// for a request its schema refuses.
func ppInvalid(w http.ResponseWriter, field, issue, desc string) {
	writeJSON(w, 400, map[string]any{"name": "INVALID_REQUEST",
		"message":  "Request is not well-formed, syntactically incorrect, or violates schema.",
		"debug_id": "fakedebug",
		"details":  []map[string]string{{"field": field, "location": "body", "issue": issue, "description": desc}}})
}

// ppUnprocessable answers 422 UNPROCESSABLE_ENTITY with PayPal's issue.
func ppUnprocessable(w http.ResponseWriter, issue, desc string) {
	writeJSON(w, 422, map[string]any{"name": "UNPROCESSABLE_ENTITY",
		"message":  "The requested action could not be performed, semantically incorrect, or failed business validation.",
		"debug_id": "fakedebug",
		"details":  []map[string]string{{"issue": issue, "description": desc}}})
}

func ppNotFound(w http.ResponseWriter) {
	writeJSON(w, 404, map[string]any{"name": "RESOURCE_NOT_FOUND", "message": "The specified resource does not exist.",
		"debug_id": "fakedebug",
		"details":  []map[string]string{{"issue": "INVALID_RESOURCE_ID", "description": "Requested resource ID was not found."}}})
}

// decodeStrict reads a JSON body, refusing what is not JSON.
func decodeStrict(w http.ResponseWriter, r *http.Request, into any) bool {
	body, _ := io.ReadAll(r.Body)
	if len(body) == 0 || json.Unmarshal(body, into) != nil {
		ppInvalid(w, "/", "MALFORMED_REQUEST_JSON", "The request JSON is not well formed.")
		return false
	}
	return true
}

// ProductCount, PlanCount and SubscriptionCount are how many of each the
// fake made.
func (p *PayPal) ProductCount() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.products) }
func (p *PayPal) PlanCount() int    { p.mu.Lock(); defer p.mu.Unlock(); return len(p.plans) }
func (p *PayPal) SubscriptionCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.subs)
}

// SubscriptionStatus answers a subscription's status ("" when unknown).
func (p *PayPal) SubscriptionStatus(id string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.subs[id]; s != nil {
		return s.Status
	}
	return ""
}

// SubscriptionPlan answers the plan a subscription bills and that plan's
// cycles' prices in order (trial cycles first).
func (p *PayPal) SubscriptionPlan(id string) (planID string, prices []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.subs[id]
	if s == nil {
		return "", nil
	}
	for _, c := range s.Cycles {
		prices = append(prices, c.TenureType+":"+c.price().Value)
	}
	return s.PlanID, prices
}

// SubscriptionSales lists the payments taken for a subscription.
func (p *PayPal) SubscriptionSales(id string) []PayPalSale {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []PayPalSale
	if s := p.subs[id]; s != nil {
		for _, sid := range s.Sales {
			out = append(out, *p.sales[sid])
		}
	}
	return out
}

func addInterval(t time.Time, f *ppFrequency) time.Time {
	n := f.IntervalCount
	switch f.IntervalUnit {
	case "DAY":
		return t.AddDate(0, 0, n)
	case "WEEK":
		return t.AddDate(0, 0, 7*n)
	case "YEAR":
		return t.AddDate(n, 0, 0)
	}
	return t.AddDate(0, n, 0)
}

// currentCycle is the cycle the next payment bills: the first whose
// cycles are not all completed (a total of 0 never ends).
func (s *ppSubscription) currentCycle() *ppCycle {
	for i := range s.Cycles {
		c := &s.Cycles[i]
		if c.total() == 0 || s.Completed[c.Sequence] < c.total() {
			return c
		}
	}
	return nil
}

// bill takes the next cycle's payment at t (PAYMENT.SALE.COMPLETED) and
// moves next_billing_time on by the cycle; a subscription whose last cycle
// was billed expires.
func (p *PayPal) billLocked(s *ppSubscription, t time.Time) *PayPalSale {
	c := s.currentCycle()
	if c == nil {
		return nil
	}
	price := c.price()
	sale := &PayPalSale{ID: p.nextID("SALEFAKE"), SubscriptionID: s.ID, CustomID: s.CustomID, Amount: price,
		Fee: PayPalFeeOn(cents(price.Value)), Time: t}
	p.sales[sale.ID] = sale
	s.Sales = append(s.Sales, sale.ID)
	s.Completed[c.Sequence]++
	s.Last, s.LastTime = &price, t
	base := s.NextBill
	if base.IsZero() {
		base = t
	}
	s.NextBill = addInterval(base, c.Frequency)
	s.Failed = 0
	p.emitLocked("PAYMENT.SALE.COMPLETED", p.saleJSON(sale))
	return sale
}

func (p *PayPal) saleJSON(s *PayPalSale) map[string]any {
	return map[string]any{"id": s.ID, "state": s.saleState(),
		"amount":               map[string]any{"total": s.Amount.Value, "currency": s.Amount.CurrencyCode, "details": map[string]string{"subtotal": s.Amount.Value}},
		"transaction_fee":      map[string]string{"value": fmt.Sprintf("%d.%02d", s.Fee/100, s.Fee%100), "currency": s.Amount.CurrencyCode},
		"billing_agreement_id": s.SubscriptionID, "custom": s.CustomID, "payment_mode": "INSTANT_TRANSFER",
		"create_time": s.Time.UTC().Format(time.RFC3339), "update_time": s.Time.UTC().Format(time.RFC3339),
		"links": []map[string]string{{"rel": "self", "href": p.URL + "/v1/payments/sale/" + s.ID, "method": "GET"}}}
}

func (p *PayPal) subscriptionJSON(s *ppSubscription) map[string]any {
	out := map[string]any{"id": s.ID, "plan_id": s.PlanID, "status": s.Status, "custom_id": s.CustomID,
		"create_time": s.Created.UTC().Format(time.RFC3339), "plan_overridden": s.Overridden,
		"quantity": "1", "status_update_time": s.Created.UTC().Format(time.RFC3339)}
	if s.StatusNote != "" {
		out["status_change_note"] = s.StatusNote
	}
	links := []map[string]string{{"rel": "self", "href": p.URL + "/v1/billing/subscriptions/" + s.ID, "method": "GET"}}
	if s.Status == "APPROVAL_PENDING" {
		links = append([]map[string]string{{"rel": "approve", "href": p.URL + "/webapps/billing/subscriptions?ba_token=" + s.BAToken, "method": "GET"},
			{"rel": "edit", "href": p.URL + "/v1/billing/subscriptions/" + s.ID, "method": "PATCH"}}, links...)
	}
	out["links"] = links
	if s.Start.IsZero() {
		return out
	}
	out["start_time"] = s.Start.UTC().Format(time.RFC3339)
	out["subscriber"] = map[string]any{"email_address": s.Email, "payer_id": "FAKEPAYER1"}
	var execs []map[string]any
	for _, c := range s.Cycles {
		e := map[string]any{"tenure_type": c.TenureType, "sequence": c.Sequence, "cycles_completed": s.Completed[c.Sequence],
			"total_cycles": c.total()}
		if c.total() > 0 {
			e["cycles_remaining"] = c.total() - s.Completed[c.Sequence]
		}
		execs = append(execs, e)
	}
	info := map[string]any{"cycle_executions": execs, "failed_payments_count": s.Failed,
		"outstanding_balance": Money{CurrencyCode: s.Cycles[0].price().CurrencyCode, Value: "0.00"}}
	if s.Last != nil {
		info["last_payment"] = map[string]any{"amount": s.Last, "time": s.LastTime.UTC().Format(time.RFC3339)}
	}
	if s.Status == "ACTIVE" && !s.NextBill.IsZero() {
		info["next_billing_time"] = s.NextBill.UTC().Format(time.RFC3339)
	}
	out["billing_info"] = info
	return out
}

// ApproveSubscription plays the buyer approving subscription id on PayPal's
// page: PayPal activates it and takes the first cycle's payment
// (BILLING.SUBSCRIPTION.ACTIVATED, PAYMENT.SALE.COMPLETED).
func (p *PayPal) ApproveSubscription(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.subs[id]
	if s == nil || s.Status != "APPROVAL_PENDING" {
		return false
	}
	p.activateLocked(s, time.Now())
	return true
}

func (p *PayPal) activateLocked(s *ppSubscription, t time.Time) {
	s.Status, s.Start, s.Email = "ACTIVE", t, "buyer@paypal.test"
	p.emitLocked("BILLING.SUBSCRIPTION.ACTIVATED", p.subscriptionJSON(s))
	p.billLocked(s, t)
}

// RenewSubscription plays PayPal billing the next cycle of an active
// subscription: a PAYMENT.SALE.COMPLETED event (signed and delivered as
// every event). It answers the sale, nil when the subscription is not
// active or has no cycle left.
func (p *PayPal) RenewSubscription(id string) *PayPalSale {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.subs[id]
	if s == nil || s.Status != "ACTIVE" {
		return nil
	}
	sale := p.billLocked(s, time.Now())
	if sale != nil && s.currentCycle() == nil {
		s.Status = "EXPIRED"
		p.emitLocked("BILLING.SUBSCRIPTION.EXPIRED", p.subscriptionJSON(s))
	}
	return sale
}

// FailSubscriptionPayment plays a cycle's payment failing
// (BILLING.SUBSCRIPTION.PAYMENT.FAILED); after maxFails failures in a row
// PayPal suspends the subscription (BILLING.SUBSCRIPTION.SUSPENDED), as a
// plan's payment_failure_threshold does (0: never).
func (p *PayPal) FailSubscriptionPayment(id string, maxFails int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.subs[id]
	if s == nil || s.Status != "ACTIVE" {
		return false
	}
	s.Failed++
	p.emitLocked("BILLING.SUBSCRIPTION.PAYMENT.FAILED", p.subscriptionJSON(s))
	if maxFails > 0 && s.Failed >= maxFails {
		s.Status = "SUSPENDED"
		p.emitLocked("BILLING.SUBSCRIPTION.SUSPENDED", p.subscriptionJSON(s))
	}
	return true
}

// EndSubscription plays PayPal (or the buyer in their PayPal account)
// ending a subscription: status CANCELLED, SUSPENDED or EXPIRED, with the
// event of that name.
func (p *PayPal) EndSubscription(id, status string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.subs[id]
	if s == nil || (s.Status != "ACTIVE" && s.Status != "SUSPENDED") {
		return false
	}
	s.Status = status
	p.emitLocked("BILLING.SUBSCRIPTION."+status, p.subscriptionJSON(s))
	return true
}

// LastEvent answers the last event of typ emitted (to replay it).
func (p *PayPal) LastEvent(typ string) (PayPalEvent, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.events) - 1; i >= 0; i-- {
		if p.events[i].Type == typ {
			return p.events[i], true
		}
	}
	return PayPalEvent{}, false
}

// Resign signs ev again with a fresh transmission time (a redelivery by
// PayPal of the same event id).
func (p *PayPal) Resign(ev PayPalEvent) PayPalEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	tid := p.nextID("tx-")
	when := time.Now().UTC().Format(time.RFC3339)
	h := ev.Header.Clone()
	h.Set("PAYPAL-TRANSMISSION-ID", tid)
	h.Set("PAYPAL-TRANSMISSION-TIME", when)
	h.Set("PAYPAL-TRANSMISSION-SIG", p.sig(tid, when, ev.Body))
	ev.Header = h
	return ev
}

var subApprovalTmpl = template.Must(template.New("approve-sub").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>PayPal (test) - Agree and subscribe</title>
<style>body{font-family:sans-serif;max-width:28rem;margin:2rem auto;padding:1rem;color:#1a1a2e}
.box{border:1px solid #ccd;border-radius:12px;padding:1.5rem}button{background:#ffc439;border:0;border-radius:24px;padding:.8rem 2rem;font-size:1rem;font-weight:bold;cursor:pointer}
a{display:inline-block;margin-top:1rem}</style></head>
<body><div class="box"><h1>PayPal <small>(test double)</small></h1>
<p>{{.Plan}}</p>
{{range .Lines}}<p class="cycle">{{.}}</p>{{end}}
<form method="post" action="/webapps/billing/subscriptions"><input type="hidden" name="ba_token" value="{{.Token}}">
<button type="submit">Agree &amp; Subscribe</button></form>
<a href="{{.CancelURL}}">Cancel and return to merchant</a></div></body></html>`))

func (p *PayPal) subByToken(tok string) *ppSubscription {
	for _, s := range p.subs {
		if s.BAToken == tok && tok != "" {
			return s
		}
	}
	return nil
}

// subscriptionApproval serves GET and POST /webapps/billing/subscriptions:
// the buyer's page to agree to a subscription, and the agreement, which
// activates it and sends the buyer back with subscription_id, ba_token and
// token, as PayPal does.
func (p *PayPal) subscriptionApproval(w http.ResponseWriter, r *http.Request) {
	p.initSubs()
	if r.Method == http.MethodGet {
		s := p.subByToken(r.URL.Query().Get("ba_token"))
		if s == nil {
			http.Error(w, "unknown subscription", 404)
			return
		}
		plan := p.plans[s.PlanID]
		if s.PendingPlan != "" {
			plan = p.plans[s.PendingPlan]
		}
		var lines []string
		cycles := s.Cycles
		if s.PendingPlan != "" && s.Status == "ACTIVE" {
			cycles = s.PendingCycles
			lines = append(lines, "Change your subscription to this plan from your next billing date:")
		}
		for _, c := range cycles {
			n := "every"
			if c.TenureType == "TRIAL" {
				n = fmt.Sprintf("first %d ×", c.total())
			}
			lines = append(lines, fmt.Sprintf("%s %s %s %s", c.price().Value, c.price().CurrencyCode, n, strings.ToLower(c.Frequency.IntervalUnit)))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		cancel := s.CancelURL
		if s.PendingPlan != "" && s.PendingCancel != "" {
			cancel = s.PendingCancel
		}
		_ = subApprovalTmpl.Execute(w, map[string]any{"Plan": plan.Name, "Lines": lines, "Token": s.BAToken, "CancelURL": cancel})
		return
	}
	_ = r.ParseForm()
	s := p.subByToken(r.PostForm.Get("ba_token"))
	if s == nil {
		http.Error(w, "unknown subscription", 404)
		return
	}
	returnURL := s.ReturnURL
	switch {
	case s.Status == "APPROVAL_PENDING":
		p.activateLocked(s, time.Now())
	case s.PendingPlan != "" && s.Status == "ACTIVE":
		// The revision: the new plan bills from the next billing time
		// (nothing is charged now, nothing prorated).
		if s.PendingReturn != "" {
			returnURL = s.PendingReturn
		}
		s.PlanID, s.Cycles, s.PendingPlan, s.PendingCycles = s.PendingPlan, s.PendingCycles, "", nil
		s.Overridden = !sameCycles(s.Cycles, p.plans[s.PlanID].Cycles)
		s.Completed = map[int]int{}
		p.emitLocked("BILLING.SUBSCRIPTION.UPDATED", p.subscriptionJSON(s))
	}
	back, err := url.Parse(returnURL)
	if err != nil {
		http.Error(w, "bad return url", 400)
		return
	}
	q := back.Query()
	q.Set("subscription_id", s.ID)
	q.Set("ba_token", s.BAToken)
	q.Set("token", s.BAToken)
	back.RawQuery = q.Encode()
	http.Redirect(w, r, back.String(), http.StatusSeeOther)
}

// fakeControl serves POST /_fake/subscriptions/{id}/{renew|fail|cancel|
// suspend|expire}: the test's hand on PayPal's side (a browser test run
// against the fake as a process). It is no part of PayPal's API.
func (p *PayPal) fakeControl(w http.ResponseWriter, r *http.Request) {
	p.initSubs()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[1] != "subscriptions" || r.Method != http.MethodPost {
		ppNotFound(w)
		return
	}
	s := p.subs[parts[2]]
	if s == nil {
		ppNotFound(w)
		return
	}
	ok := false
	switch parts[3] {
	case "renew":
		if s.Status == "ACTIVE" {
			ok = p.billLocked(s, time.Now()) != nil
		}
	case "fail":
		if s.Status == "ACTIVE" {
			s.Failed++
			p.emitLocked("BILLING.SUBSCRIPTION.PAYMENT.FAILED", p.subscriptionJSON(s))
			ok = true
		}
	case "cancel", "suspend", "expire":
		if s.Status == "ACTIVE" || s.Status == "SUSPENDED" {
			s.Status = map[string]string{"cancel": "CANCELLED", "suspend": "SUSPENDED", "expire": "EXPIRED"}[parts[3]]
			p.emitLocked("BILLING.SUBSCRIPTION."+s.Status, p.subscriptionJSON(s))
			ok = true
		}
	}
	if !ok {
		ppUnprocessable(w, "SUBSCRIPTION_STATUS_INVALID", "Invalid subscription status for this action.")
		return
	}
	writeJSON(w, 200, p.subscriptionJSON(s))
}

var (
	productTypes  = map[string]bool{"PHYSICAL": true, "DIGITAL": true, "SERVICE": true}
	intervalUnits = map[string]bool{"DAY": true, "WEEK": true, "MONTH": true, "YEAR": true}
	// PayPal's longest interval per unit.
	intervalMax = map[string]int{"DAY": 365, "WEEK": 52, "MONTH": 12, "YEAR": 1}
)

// routeSubscriptions answers the Catalog Products, Billing Plans and
// Subscriptions calls; false when the path is none of theirs.
func (p *PayPal) routeSubscriptions(w http.ResponseWriter, r *http.Request) bool {
	p.initSubs()
	path := r.URL.Path
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case path == "/v1/catalogs/products" && r.Method == http.MethodPost:
		var in struct {
			Name        string `json:"name"`
			Type        string `json:"type"`
			Description string `json:"description"`
		}
		if !decodeStrict(w, r, &in) {
			return true
		}
		switch {
		case in.Name == "":
			ppInvalid(w, "/name", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		case len(in.Name) > 127:
			ppInvalid(w, "/name", "INVALID_STRING_MAX_LENGTH", "The value of a field is too long.")
		case in.Type == "":
			ppInvalid(w, "/type", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		case !productTypes[in.Type]:
			ppInvalid(w, "/type", "INVALID_PARAMETER_VALUE", "The value of a field is invalid.")
		case len(in.Description) > 256:
			ppInvalid(w, "/description", "INVALID_STRING_MAX_LENGTH", "The value of a field is too long.")
		default:
			pr := &ppProduct{ID: p.nextID("PROD-FAKE"), Name: in.Name, Type: in.Type, Description: in.Description, Created: time.Now()}
			p.products[pr.ID] = pr
			writeJSON(w, 201, map[string]any{"id": pr.ID, "name": pr.Name, "type": pr.Type, "description": pr.Description,
				"create_time": pr.Created.UTC().Format(time.RFC3339),
				"links":       []map[string]string{{"rel": "self", "href": p.URL + "/v1/catalogs/products/" + pr.ID, "method": "GET"}}})
		}
		return true
	case len(parts) == 4 && strings.HasPrefix(path, "/v1/catalogs/products/") && r.Method == http.MethodGet:
		pr := p.products[parts[3]]
		if pr == nil {
			ppNotFound(w)
			return true
		}
		writeJSON(w, 200, map[string]any{"id": pr.ID, "name": pr.Name, "type": pr.Type})
		return true
	case path == "/v1/billing/plans" && r.Method == http.MethodPost:
		p.createPlan(w, r)
		return true
	case len(parts) == 4 && parts[0] == "v1" && parts[1] == "billing" && parts[2] == "plans" && r.Method == http.MethodGet:
		pl := p.plans[parts[3]]
		if pl == nil {
			ppNotFound(w)
			return true
		}
		writeJSON(w, 200, p.planJSON(pl))
		return true
	case path == "/v1/billing/subscriptions" && r.Method == http.MethodPost:
		p.createSubscription(w, r)
		return true
	case len(parts) >= 4 && parts[0] == "v1" && parts[1] == "billing" && parts[2] == "subscriptions":
		p.subscriptionCall(w, r, parts)
		return true
	case len(parts) >= 4 && parts[0] == "v1" && parts[1] == "payments" && parts[2] == "sale":
		p.saleCall(w, r, parts)
		return true
	}
	return false
}

func (p *PayPal) planJSON(pl *ppPlan) map[string]any {
	return map[string]any{"id": pl.ID, "product_id": pl.ProductID, "name": pl.Name, "status": pl.Status,
		"billing_cycles": pl.Cycles, "create_time": pl.Created.UTC().Format(time.RFC3339),
		"links": []map[string]string{{"rel": "self", "href": p.URL + "/v1/billing/plans/" + pl.ID, "method": "GET"}}}
}

// checkCycles holds billing cycles to PayPal's rules: at most 12, each with
// a frequency PayPal knows, a sequence unique from 1, trials (at most two,
// each with a finite count) before the one regular cycle, which comes last
// and may run for ever (total_cycles 0), and a fixed price on each. It
// answers the field and issue of the first break, "" when none.
func checkCycles(cycles []ppCycle) (string, string) {
	if len(cycles) == 0 {
		return "/billing_cycles", "MISSING_REQUIRED_PARAMETER"
	}
	if len(cycles) > 12 {
		return "/billing_cycles", "INVALID_ARRAY_MAX_ITEMS"
	}
	seen := map[int]bool{}
	regular, trials := 0, 0
	for i, c := range cycles {
		f := fmt.Sprintf("/billing_cycles/%d", i)
		switch {
		case c.Frequency == nil:
			return f + "/frequency", "MISSING_REQUIRED_PARAMETER"
		case !intervalUnits[c.Frequency.IntervalUnit]:
			return f + "/frequency/interval_unit", "INVALID_PARAMETER_VALUE"
		case c.Frequency.IntervalCount < 1 || c.Frequency.IntervalCount > intervalMax[c.Frequency.IntervalUnit]:
			return f + "/frequency/interval_count", "INVALID_PARAMETER_VALUE"
		case c.TenureType != "REGULAR" && c.TenureType != "TRIAL":
			return f + "/tenure_type", "INVALID_PARAMETER_VALUE"
		case c.Sequence < 1 || c.Sequence > 99 || seen[c.Sequence]:
			return f + "/sequence", "INVALID_PARAMETER_VALUE"
		case c.TotalCycles != nil && (*c.TotalCycles < 0 || *c.TotalCycles > 999):
			return f + "/total_cycles", "INVALID_PARAMETER_VALUE"
		case c.PricingScheme == nil || c.PricingScheme.FixedPrice == nil:
			return f + "/pricing_scheme/fixed_price", "MISSING_REQUIRED_PARAMETER"
		case len(c.price().CurrencyCode) != 3 || !ppValue.MatchString(c.price().Value):
			return f + "/pricing_scheme/fixed_price", "INVALID_PARAMETER_VALUE"
		}
		seen[c.Sequence] = true
		if c.TenureType == "REGULAR" {
			regular++
		} else {
			trials++
			if c.total() == 0 || regular > 0 {
				return f + "/total_cycles", "INVALID_PARAMETER_VALUE"
			}
		}
	}
	if regular != 1 || trials > 2 || cycles[len(cycles)-1].TenureType != "REGULAR" {
		return "/billing_cycles", "INVALID_PARAMETER_VALUE"
	}
	return "", ""
}

func (p *PayPal) createPlan(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ProductID          string          `json:"product_id"`
		Name               string          `json:"name"`
		Status             string          `json:"status"`
		BillingCycles      []ppCycle       `json:"billing_cycles"`
		PaymentPreferences json.RawMessage `json:"payment_preferences"`
	}
	if !decodeStrict(w, r, &in) {
		return
	}
	switch {
	case in.ProductID == "":
		ppInvalid(w, "/product_id", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return
	case in.Name == "":
		ppInvalid(w, "/name", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return
	case len(in.Name) > 127:
		ppInvalid(w, "/name", "INVALID_STRING_MAX_LENGTH", "The value of a field is too long.")
		return
	case in.Status != "" && in.Status != "ACTIVE" && in.Status != "CREATED" && in.Status != "INACTIVE":
		ppInvalid(w, "/status", "INVALID_PARAMETER_VALUE", "The value of a field is invalid.")
		return
	case len(in.PaymentPreferences) == 0:
		ppInvalid(w, "/payment_preferences", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return
	}
	if field, issue := checkCycles(in.BillingCycles); issue != "" {
		ppInvalid(w, field, issue, "The value of a field is invalid.")
		return
	}
	if p.products[in.ProductID] == nil {
		ppUnprocessable(w, "INVALID_PRODUCT_ID", "The specified product ID does not exist.")
		return
	}
	if in.Status == "" {
		in.Status = "ACTIVE"
	}
	pl := &ppPlan{ID: p.nextID("P-FAKE"), ProductID: in.ProductID, Name: in.Name, Status: in.Status, Cycles: in.BillingCycles, Created: time.Now()}
	p.plans[pl.ID] = pl
	writeJSON(w, 201, p.planJSON(pl))
}

// ppPlanOverride is a subscription's (or a revision's) plan object: its
// own prices or counts for some of the plan's billing cycles.
type ppPlanOverride struct {
	BillingCycles []ppCycle `json:"billing_cycles"`
}

// overrideCycles answers the plan's cycles with the override applied, as
// PayPal takes one: it changes a cycle's price (a fixed price in the
// cycle's currency) or count (a trial's finite, 1 to 999; a regular
// cycle's 0 to 999), the cycle named by its sequence; it cannot add a
// cycle, change a cycle's tenure or frequency, or name one twice. A
// refused override is answered on w (ok false).
func overrideCycles(w http.ResponseWriter, plan []ppCycle, o *ppPlanOverride) ([]ppCycle, bool) {
	cycles := append([]ppCycle(nil), plan...)
	if o == nil {
		return cycles, true
	}
	if len(o.BillingCycles) == 0 {
		ppInvalid(w, "/plan/billing_cycles", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return nil, false
	}
	seen := map[int]bool{}
	for i, oc := range o.BillingCycles {
		f := fmt.Sprintf("/plan/billing_cycles/%d", i)
		if oc.Sequence < 1 || oc.Sequence > 99 || seen[oc.Sequence] {
			ppInvalid(w, f+"/sequence", "INVALID_PARAMETER_VALUE", "The value of a field is invalid.")
			return nil, false
		}
		seen[oc.Sequence] = true
		j := -1
		for k := range cycles {
			if cycles[k].Sequence == oc.Sequence {
				j = k
			}
		}
		if j < 0 || (oc.TenureType != "" && oc.TenureType != cycles[j].TenureType) ||
			(oc.Frequency != nil && *oc.Frequency != *cycles[j].Frequency) {
			ppUnprocessable(w, "BILLING_CYCLE_SEQUENCE_INVALID", "The billing cycle sequence of the override does not match the plan's.")
			return nil, false
		}
		if oc.PricingScheme != nil {
			if oc.PricingScheme.FixedPrice == nil || !ppValue.MatchString(oc.PricingScheme.FixedPrice.Value) ||
				oc.PricingScheme.FixedPrice.CurrencyCode != cycles[j].price().CurrencyCode {
				ppInvalid(w, f+"/pricing_scheme/fixed_price", "INVALID_PARAMETER_VALUE", "The value of a field is invalid.")
				return nil, false
			}
			cycles[j].PricingScheme = oc.PricingScheme
		}
		if oc.TotalCycles != nil {
			n := *oc.TotalCycles
			if n < 0 || n > 999 || (n == 0 && cycles[j].TenureType == "TRIAL") {
				ppInvalid(w, f+"/total_cycles", "INVALID_PARAMETER_VALUE", "The value of a field is invalid.")
				return nil, false
			}
			cycles[j].TotalCycles = oc.TotalCycles
		}
	}
	return cycles, true
}

func (p *PayPal) createSubscription(w http.ResponseWriter, r *http.Request) {
	var in struct {
		PlanID             string `json:"plan_id"`
		CustomID           string `json:"custom_id"`
		StartTime          string `json:"start_time"`
		ApplicationContext *struct {
			BrandName  string `json:"brand_name"`
			ReturnURL  string `json:"return_url"`
			CancelURL  string `json:"cancel_url"`
			UserAction string `json:"user_action"`
		} `json:"application_context"`
		Plan       *ppPlanOverride `json:"plan"`
		Subscriber *struct {
			EmailAddress string `json:"email_address"`
		} `json:"subscriber"`
	}
	if !decodeStrict(w, r, &in) {
		return
	}
	switch {
	case in.PlanID == "":
		ppInvalid(w, "/plan_id", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return
	case len(in.CustomID) > 127:
		ppInvalid(w, "/custom_id", "INVALID_STRING_MAX_LENGTH", "The value of a field is too long.")
		return
	case in.StartTime != "":
		if _, err := time.Parse(time.RFC3339, in.StartTime); err != nil {
			ppInvalid(w, "/start_time", "INVALID_PARAMETER_SYNTAX", "The value of a field does not conform to the expected format.")
			return
		}
	}
	if ac := in.ApplicationContext; ac != nil && !validAppContext(w, ac.ReturnURL, ac.CancelURL, ac.UserAction) {
		return
	}
	pl := p.plans[in.PlanID]
	if pl == nil {
		ppNotFound(w)
		return
	}
	if pl.Status != "ACTIVE" {
		ppUnprocessable(w, "PLAN_STATUS_INVALID", "Invalid plan status. Plan must be in ACTIVE status.")
		return
	}
	cycles, ok := overrideCycles(w, pl.Cycles, in.Plan)
	if !ok {
		return
	}
	s := &ppSubscription{ID: p.nextID("I-FAKE"), PlanID: pl.ID, CustomID: in.CustomID, Status: "APPROVAL_PENDING",
		BAToken: p.nextID("BA-FAKE"), Cycles: cycles, Completed: map[int]int{}, Created: time.Now(),
		Overridden: in.Plan != nil}
	if ac := in.ApplicationContext; ac != nil {
		s.ReturnURL, s.CancelURL = ac.ReturnURL, ac.CancelURL
	}
	if s.ReturnURL == "" || s.CancelURL == "" {
		// PayPal itself would send the buyer to its own pages; Marquee
		// always names both, so the fake insists.
		ppInvalid(w, "/application_context/return_url", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return
	}
	p.subs[s.ID] = s
	p.emitLocked("BILLING.SUBSCRIPTION.CREATED", p.subscriptionJSON(s))
	writeJSON(w, 201, p.subscriptionJSON(s))
}

// subscriptionCall answers GET /v1/billing/subscriptions/{id} and its
// actions cancel, suspend, activate and revise.
func (p *PayPal) subscriptionCall(w http.ResponseWriter, r *http.Request, parts []string) {
	s := p.subs[parts[3]]
	if s == nil {
		ppNotFound(w)
		return
	}
	if len(parts) == 4 && r.Method == http.MethodGet {
		writeJSON(w, 200, p.subscriptionJSON(s))
		return
	}
	if len(parts) == 5 && parts[4] == "transactions" && r.Method == http.MethodGet {
		p.subscriptionTransactions(w, r, s)
		return
	}
	if len(parts) != 5 || r.Method != http.MethodPost {
		ppError(w, 404, "NOT_FOUND", "", "not found: "+r.Method+" "+r.URL.Path)
		return
	}
	action := parts[4]
	if action == "revise" {
		p.revise(w, r, s)
		return
	}
	var in struct {
		Reason string `json:"reason"`
	}
	if !decodeStrict(w, r, &in) {
		return
	}
	if in.Reason == "" && action != "activate" {
		ppInvalid(w, "/reason", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return
	}
	if len(in.Reason) > 128 {
		ppInvalid(w, "/reason", "INVALID_STRING_MAX_LENGTH", "The value of a field is too long.")
		return
	}
	from := map[string][]string{"cancel": {"ACTIVE", "SUSPENDED"}, "suspend": {"ACTIVE"}, "activate": {"SUSPENDED"}}
	to := map[string]string{"cancel": "CANCELLED", "suspend": "SUSPENDED", "activate": "ACTIVE"}
	allowed, ok := from[action]
	if !ok {
		ppError(w, 404, "NOT_FOUND", "", "not found: "+r.Method+" "+r.URL.Path)
		return
	}
	fits := false
	for _, st := range allowed {
		fits = fits || s.Status == st
	}
	if !fits {
		ppUnprocessable(w, "SUBSCRIPTION_STATUS_INVALID", "Invalid subscription status for "+action+" action; subscription status should be "+
			strings.Join(allowed, " or ")+".")
		return
	}
	s.Status, s.StatusNote = to[action], in.Reason
	if s.Status == "ACTIVE" {
		p.emitLocked("BILLING.SUBSCRIPTION.RE-ACTIVATED", p.subscriptionJSON(s))
	} else {
		p.emitLocked("BILLING.SUBSCRIPTION."+s.Status, p.subscriptionJSON(s))
	}
	w.WriteHeader(http.StatusNoContent)
}

// subscriptionTransactions answers GET
// /v1/billing/subscriptions/{id}/transactions: the payments taken between
// start_time and end_time, both required (RFC 3339), as PayPal lists them.
func (p *PayPal) subscriptionTransactions(w http.ResponseWriter, r *http.Request, s *ppSubscription) {
	var bounds [2]time.Time
	for i, name := range []string{"start_time", "end_time"} {
		v := r.URL.Query().Get(name)
		if v == "" {
			ppInvalid(w, name, "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
			return
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			ppInvalid(w, name, "INVALID_PARAMETER_SYNTAX", "The value of a field does not conform to the expected format.")
			return
		}
		bounds[i] = t
	}
	if !bounds[1].After(bounds[0]) {
		ppUnprocessable(w, "INVALID_DATE_RANGE", "end_time must be after start_time.")
		return
	}
	txs := []map[string]any{}
	for _, id := range s.Sales {
		sale := p.sales[id]
		if sale.Time.Before(bounds[0]) || sale.Time.After(bounds[1]) {
			continue
		}
		fee := Money{CurrencyCode: sale.Amount.CurrencyCode, Value: fmt.Sprintf("%d.%02d", sale.Fee/100, sale.Fee%100)}
		net := cents(sale.Amount.Value) - sale.Fee
		txs = append(txs, map[string]any{"id": sale.ID, "status": strings.ToUpper(sale.saleState()),
			"amount_with_breakdown": map[string]any{"gross_amount": sale.Amount, "fee_amount": fee,
				"net_amount": Money{CurrencyCode: sale.Amount.CurrencyCode, Value: fmt.Sprintf("%d.%02d", net/100, net%100)}},
			"payer_email": s.Email, "time": sale.Time.UTC().Format(time.RFC3339)})
	}
	writeJSON(w, 200, map[string]any{"transactions": txs, "total_items": len(txs), "total_pages": 1})
}

// SaleRefunds answers the refunds made of sale id, in cents.
func (p *PayPal) SaleRefunds(id string) []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.sales[id]; s != nil {
		return append([]int64(nil), s.Refunds...)
	}
	return nil
}

// saleCall answers Payments v1's GET /v1/payments/sale/{id} and POST
// /v1/payments/sale/{id}/refund, the way PayPal refunds a subscription's
// payment: all that is left without an amount, or amount.total (in
// amount.currency, the sale's); an unknown sale is 404, a refund past what
// is left (a second full refund) 422 TRANSACTION_REFUSED.
func (p *PayPal) saleCall(w http.ResponseWriter, r *http.Request, parts []string) {
	sale := p.sales[parts[3]]
	if sale == nil {
		ppNotFound(w)
		return
	}
	if len(parts) == 4 && r.Method == http.MethodGet {
		writeJSON(w, 200, p.saleJSON(sale))
		return
	}
	if len(parts) != 5 || parts[4] != "refund" || r.Method != http.MethodPost {
		ppError(w, 404, "NOT_FOUND", "", "not found: "+r.Method+" "+r.URL.Path)
		return
	}
	var in struct {
		Amount *struct {
			Total    string `json:"total"`
			Currency string `json:"currency"`
		} `json:"amount"`
		Description string `json:"description"`
	}
	if !decodeStrict(w, r, &in) {
		return
	}
	total := cents(sale.Amount.Value)
	left := total - sale.Refunded()
	amount := left
	if in.Amount != nil {
		switch {
		case !ppValue.MatchString(in.Amount.Total):
			ppInvalid(w, "/amount/total", "INVALID_PARAMETER_VALUE", "The value of a field is invalid.")
			return
		case in.Amount.Currency != sale.Amount.CurrencyCode:
			ppInvalid(w, "/amount/currency", "INVALID_PARAMETER_VALUE", "The refund's currency must be the sale's.")
			return
		}
		amount = cents(in.Amount.Total)
	}
	if len(in.Description) > 255 {
		ppInvalid(w, "/description", "INVALID_STRING_MAX_LENGTH", "The value of a field is too long.")
		return
	}
	if left <= 0 {
		writeJSON(w, 422, map[string]any{"name": "TRANSACTION_REFUSED", "message": "The request was refused.", "debug_id": "fakedebug",
			"details": []map[string]string{{"issue": "TRANSACTION_ALREADY_REFUNDED", "description": "The sale has been fully refunded."}}})
		return
	}
	if amount < 1 || amount > left {
		writeJSON(w, 422, map[string]any{"name": "TRANSACTION_REFUSED", "message": "The request was refused.", "debug_id": "fakedebug",
			"details": []map[string]string{{"issue": "REFUND_EXCEEDED_TRANSACTION_AMOUNT", "description": "Refund amount exceeds the amount left to refund."}}})
		return
	}
	sale.Refunds = append(sale.Refunds, amount)
	now := time.Now().UTC().Format(time.RFC3339)
	rf := map[string]any{"id": p.nextID("SALEREFFAKE"), "state": "completed", "sale_id": sale.ID,
		"billing_agreement_id": sale.SubscriptionID, "custom": sale.CustomID,
		"amount": map[string]string{"total": fmt.Sprintf("%d.%02d", amount/100, amount%100), "currency": sale.Amount.CurrencyCode},
		"total_refunded_amount": map[string]string{"value": fmt.Sprintf("%d.%02d", sale.Refunded()/100, sale.Refunded()%100),
			"currency": sale.Amount.CurrencyCode},
		"create_time": now, "update_time": now,
		"links": []map[string]string{{"rel": "sale", "href": p.URL + "/v1/payments/sale/" + sale.ID, "method": "GET"}}}
	p.emitLocked("PAYMENT.SALE.REFUNDED", rf)
	writeJSON(w, 201, rf)
}

// RevisionCount is how many revise calls subscription id had (a replayed
// PayPal-Request-Id is not one).
func (p *PayPal) RevisionCount(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.subs[id]; s != nil {
		return s.Revisions
	}
	return 0
}

// revise answers POST /v1/billing/subscriptions/{id}/revise as PayPal does
// for a change of plan: plan_id is required and must be a known (404),
// active plan of the subscription's product (422 PLAN_STATUS_INVALID,
// PLAN_PRODUCT_NOT_COMPATIBLE), the subscription ACTIVE (422
// SUBSCRIPTION_STATUS_INVALID); a plan object overrides the new plan's
// cycles as overrideCycles allows; the answer's approve link is where the
// subscriber consents, which moves the plan (BILLING.SUBSCRIPTION.UPDATED)
// and sends them to application_context.return_url. The new plan bills
// from the next billing time, from its first cycle (its TRIAL cycles
// first).
// validAppContext answers PayPal's 400 for an application_context (of a
// subscription or of its revision) with a return or cancel URL that is not
// an absolute http(s) URL or an unknown user_action, and reports whether it
// is valid.
func validAppContext(w http.ResponseWriter, returnURL, cancelURL, userAction string) bool {
	for _, u := range []struct{ field, v string }{{"/application_context/return_url", returnURL}, {"/application_context/cancel_url", cancelURL}} {
		if pu, err := url.Parse(u.v); u.v != "" && (err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "") {
			ppInvalid(w, u.field, "INVALID_PARAMETER_SYNTAX", "The value of a field does not conform to the expected format.")
			return false
		}
	}
	if userAction != "" && userAction != "CONTINUE" && userAction != "SUBSCRIBE_NOW" {
		ppInvalid(w, "/application_context/user_action", "INVALID_PARAMETER_VALUE", "The value of a field is invalid.")
		return false
	}
	return true
}

func (p *PayPal) revise(w http.ResponseWriter, r *http.Request, s *ppSubscription) {
	var in struct {
		PlanID             string          `json:"plan_id"`
		Plan               *ppPlanOverride `json:"plan"`
		EffectiveTime      string          `json:"effective_time"`
		ApplicationContext *struct {
			ReturnURL  string `json:"return_url"`
			CancelURL  string `json:"cancel_url"`
			UserAction string `json:"user_action"`
		} `json:"application_context"`
	}
	if !decodeStrict(w, r, &in) {
		return
	}
	if in.PlanID == "" {
		ppInvalid(w, "/plan_id", "MISSING_REQUIRED_PARAMETER", "A required field is missing.")
		return
	}
	if in.EffectiveTime != "" {
		if _, err := time.Parse(time.RFC3339, in.EffectiveTime); err != nil {
			ppInvalid(w, "/effective_time", "INVALID_PARAMETER_SYNTAX", "The value of a field does not conform to the expected format.")
			return
		}
	}
	if ac := in.ApplicationContext; ac != nil && !validAppContext(w, ac.ReturnURL, ac.CancelURL, ac.UserAction) {
		return
	}
	np := p.plans[in.PlanID]
	if np == nil {
		ppNotFound(w)
		return
	}
	if s.Status != "ACTIVE" {
		ppUnprocessable(w, "SUBSCRIPTION_STATUS_INVALID", "Invalid subscription status for revise action; subscription should be active.")
		return
	}
	if np.Status != "ACTIVE" {
		ppUnprocessable(w, "PLAN_STATUS_INVALID", "Invalid plan status. Plan must be in ACTIVE status.")
		return
	}
	if old := p.plans[s.PlanID]; old == nil || old.ProductID != np.ProductID {
		ppUnprocessable(w, "PLAN_PRODUCT_NOT_COMPATIBLE", "The old and the new plans should be for the same product.")
		return
	}
	cycles, ok := overrideCycles(w, np.Cycles, in.Plan)
	if !ok {
		return
	}
	s.Revisions++
	s.PendingPlan, s.PendingCycles, s.PendingReturn, s.PendingCancel = np.ID, cycles, "", ""
	if ac := in.ApplicationContext; ac != nil {
		s.PendingReturn, s.PendingCancel = ac.ReturnURL, ac.CancelURL
	}
	writeJSON(w, 200, map[string]any{"plan_id": np.ID, "plan_overridden": in.Plan != nil, "quantity": "1",
		"links": []map[string]string{{"rel": "approve", "href": p.URL + "/webapps/billing/subscriptions?ba_token=" + s.BAToken, "method": "GET"},
			{"rel": "edit", "href": p.URL + "/v1/billing/subscriptions/" + s.ID, "method": "PATCH"}}})
}

// sameCycles reports whether two cycle lists bill alike.
func sameCycles(a, b []ppCycle) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Sequence != b[i].Sequence || a[i].total() != b[i].total() || a[i].price() != b[i].price() {
			return false
		}
	}
	return true
}
