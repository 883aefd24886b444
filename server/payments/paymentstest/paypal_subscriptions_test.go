package paymentstest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// ppCall sends a JSON call to the fake and answers the status and the
// decoded answer.
func ppCall(t *testing.T, p *PayPal, auth, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, p.URL+path, rd)
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("PayPal-Request-Id", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]any{}
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out
}

// issueOf answers the first detail's issue (and field) of a PayPal error.
func issueOf(a map[string]any) string {
	ds, _ := a["details"].([]any)
	if len(ds) == 0 {
		return ""
	}
	d := ds[0].(map[string]any)
	if f, _ := d["field"].(string); f != "" {
		return d["issue"].(string) + " " + f
	}
	return d["issue"].(string)
}

// The fake's Subscriptions API refuses what PayPal refuses, in PayPal's
// shapes: a missing or malformed field is 400 INVALID_REQUEST naming it, a
// call the state does not allow is 422 UNPROCESSABLE_ENTITY with its issue,
// an unknown id 404 RESOURCE_NOT_FOUND; a repeated PayPal-Request-Id
// answers the first answer.
func TestPayPalFakeSubscriptionsStrict(t *testing.T) {
	p := StartPayPal(t, "id", "secret", "WH")
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/oauth2/token", strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth("id", "secret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tokAnswer struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(res.Body).Decode(&tokAnswer)
	res.Body.Close()
	auth := "Bearer " + tokAnswer.AccessToken
	expect := func(name string, status int, a map[string]any, wantStatus int, wantName, wantIssue string) {
		t.Helper()
		if status != wantStatus || a["name"] != wantName || issueOf(a) != wantIssue {
			t.Errorf("%s: %d %v %q, want %d %s %q", name, status, a["name"], issueOf(a), wantStatus, wantName, wantIssue)
		}
	}

	// Products.
	s, a := ppCall(t, p, auth, "POST", "/v1/catalogs/products", "", `{"type":"SERVICE"}`)
	expect("product without name", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER /name")
	s, a = ppCall(t, p, auth, "POST", "/v1/catalogs/products", "", `{"name":"Tiers","type":"MAGIC"}`)
	expect("product of an unknown type", s, a, 400, "INVALID_REQUEST", "INVALID_PARAMETER_VALUE /type")
	s, a = ppCall(t, p, auth, "POST", "/v1/catalogs/products", "", `not json`)
	expect("not JSON", s, a, 400, "INVALID_REQUEST", "MALFORMED_REQUEST_JSON /")
	s, prod := ppCall(t, p, auth, "POST", "/v1/catalogs/products", "prod-1", `{"name":"Tiers","type":"SERVICE"}`)
	_, again := ppCall(t, p, auth, "POST", "/v1/catalogs/products", "prod-1", `{"name":"Tiers","type":"SERVICE"}`)
	if s != 201 || prod["id"] == nil || again["id"] != prod["id"] || p.ProductCount() != 1 {
		t.Fatalf("product: %d %v, replay %v, %d products", s, prod, again, p.ProductCount())
	}
	productID := prod["id"].(string)

	// Plans.
	cycle := func(tenure string, seq, total int, price string) string {
		return `{"frequency":{"interval_unit":"MONTH","interval_count":1},"tenure_type":"` + tenure + `","sequence":` + itoa(seq) +
			`,"total_cycles":` + itoa(total) + `,"pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"` + price + `"}}}`
	}
	plan := func(product, cycles string) string {
		return `{"product_id":"` + product + `","name":"Circle","billing_cycles":[` + cycles + `],"payment_preferences":{"payment_failure_threshold":3}}`
	}
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/plans", "", plan("PROD-NOPE", cycle("REGULAR", 1, 0, "8.00")))
	expect("plan of an unknown product", s, a, 422, "UNPROCESSABLE_ENTITY", "INVALID_PRODUCT_ID")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/plans", "", plan(productID, ""))
	expect("plan without cycles", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER /billing_cycles")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/plans", "", plan(productID, cycle("REGULAR", 1, 0, "8.00")+","+cycle("TRIAL", 2, 1, "4.00")))
	expect("a trial after the regular cycle", s, a, 400, "INVALID_REQUEST", "INVALID_PARAMETER_VALUE /billing_cycles/1/total_cycles")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/plans", "", plan(productID, cycle("REGULAR", 1, 0, "8.0.0")))
	expect("a malformed price", s, a, 400, "INVALID_REQUEST", "INVALID_PARAMETER_VALUE /billing_cycles/0/pricing_scheme/fixed_price")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/plans", "", `{"product_id":"`+productID+`","name":"Circle","billing_cycles":[`+cycle("REGULAR", 1, 0, "8.00")+`]}`)
	expect("plan without payment preferences", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER /payment_preferences")
	s, pl := ppCall(t, p, auth, "POST", "/v1/billing/plans", "plan-1", plan(productID, cycle("TRIAL", 1, 1, "4.00")+","+cycle("REGULAR", 2, 0, "8.00")))
	if s != 201 || pl["status"] != "ACTIVE" {
		t.Fatalf("plan: %d %v", s, pl)
	}
	planID := pl["id"].(string)

	// Subscriptions.
	sub := func(plan, override string) string {
		b := `{"plan_id":"` + plan + `","custom_id":"order-1","application_context":{"return_url":"https://app.test/ok","cancel_url":"https://app.test/no"}`
		if override != "" {
			b += `,"plan":{"billing_cycles":[` + override + `]}`
		}
		return b + "}"
	}
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "", `{"custom_id":"x"}`)
	expect("subscription without plan", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER /plan_id")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "", sub("P-NOPE", ""))
	expect("subscription to an unknown plan", s, a, 404, "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "", sub(planID, `{"sequence":7,"total_cycles":2}`))
	expect("override of a cycle the plan lacks", s, a, 422, "UNPROCESSABLE_ENTITY", "BILLING_CYCLE_SEQUENCE_INVALID")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "", `{"plan_id":"`+planID+`","application_context":{"return_url":"not a url","cancel_url":"https://app.test/no"}}`)
	expect("a return URL that is none", s, a, 400, "INVALID_REQUEST", "INVALID_PARAMETER_SYNTAX /application_context/return_url")
	s, created := ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "sub-1", sub(planID, ""))
	_, replay := ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "sub-1", sub(planID, ""))
	if s != 201 || created["status"] != "APPROVAL_PENDING" || replay["id"] != created["id"] || p.SubscriptionCount() != 1 {
		t.Fatalf("subscription: %d %v, replay %v", s, created, replay)
	}
	id := created["id"].(string)
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/cancel", "", `{"reason":"x"}`)
	expect("cancel before approval", s, a, 422, "UNPROCESSABLE_ENTITY", "SUBSCRIPTION_STATUS_INVALID")
	if !p.ApproveSubscription(id) {
		t.Fatal("not approved")
	}
	if s, got := ppCall(t, p, auth, "GET", "/v1/billing/subscriptions/"+id, "", ""); s != 200 || got["status"] != "ACTIVE" {
		t.Fatalf("after approval: %d %v", s, got)
	}
	if sales := p.SubscriptionSales(id); len(sales) != 1 || sales[0].Amount.Value != "4.00" {
		t.Fatalf("first payment: %+v", sales)
	}
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/cancel", "", `{}`)
	expect("cancel without reason", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER /reason")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/revise", "", `{"plan_id":"P-NOPE"}`)
	expect("revise to an unknown plan", s, a, 404, "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID")
	if s, _ := ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/cancel", "cancel-1", `{"reason":"Member left"}`); s != 204 {
		t.Fatalf("cancel: %d", s)
	}
	// The same key answers the first answer; a fresh one meets the state.
	if s, _ := ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/cancel", "cancel-1", `{"reason":"Member left"}`); s != 204 {
		t.Fatalf("cancel replay: %d", s)
	}
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/cancel", "cancel-2", `{"reason":"Member left"}`)
	expect("cancel of a cancelled subscription", s, a, 422, "UNPROCESSABLE_ENTITY", "SUBSCRIPTION_STATUS_INVALID")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/revise", "", `{"plan_id":"`+planID+`"}`)
	expect("revise of a cancelled subscription", s, a, 422, "UNPROCESSABLE_ENTITY", "SUBSCRIPTION_STATUS_INVALID")
	s, a = ppCall(t, p, auth, "GET", "/v1/billing/subscriptions/I-NOPE", "", "")
	expect("unknown subscription", s, a, 404, "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID")
	if p.RenewSubscription(id) != nil {
		t.Fatal("a cancelled subscription was billed")
	}
	// What PayPal said about it, in order, each signed.
	var types []string
	for _, ev := range p.Events() {
		types = append(types, ev.Type)
		if ev.Header.Get("PAYPAL-TRANSMISSION-SIG") == "" {
			t.Fatalf("unsigned event %s", ev.Type)
		}
	}
	if got := strings.Join(types, ","); got != "BILLING.SUBSCRIPTION.CREATED,BILLING.SUBSCRIPTION.ACTIVATED,PAYMENT.SALE.COMPLETED,BILLING.SUBSCRIPTION.CANCELLED" {
		t.Fatalf("events: %s", got)
	}
	// Without a token nothing is answered.
	if s, a := ppCall(t, p, "Bearer nope", "GET", "/v1/billing/subscriptions/"+id, "", ""); s != 401 || a["name"] != "AUTHENTICATION_FAILURE" {
		t.Fatalf("no token: %d %v", s, a)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// ppToken answers a bearer token of the fake.
func ppToken(t *testing.T, p *PayPal) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/oauth2/token", strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth("id", "secret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return "Bearer " + out.AccessToken
}

// The fake's revise and sale refund are as strict as PayPal's: revise
// needs an active subscription (422 SUBSCRIPTION_STATUS_INVALID), a known
// plan (404) of the same product (422 PLAN_PRODUCT_NOT_COMPATIBLE), an
// unknown subscription is 404, and a repeated PayPal-Request-Id answers
// the first answer without revising again; a sale refunds once in full
// (a second full refund is 422 TRANSACTION_REFUSED), an unknown sale is
// 404, and the subscription's transactions need their time range.
func TestPayPalFakeReviseAndSaleRefundStrict(t *testing.T) {
	p := StartPayPal(t, "id", "secret", "WH")
	auth := ppToken(t, p)
	expect := func(name string, status int, a map[string]any, wantStatus int, wantName, wantIssue string) {
		t.Helper()
		if status != wantStatus || a["name"] != wantName || issueOf(a) != wantIssue {
			t.Errorf("%s: %d %v %q, want %d %s %q", name, status, a["name"], issueOf(a), wantStatus, wantName, wantIssue)
		}
	}
	product := func(key string) string {
		_, a := ppCall(t, p, auth, "POST", "/v1/catalogs/products", key, `{"name":"Tiers","type":"SERVICE"}`)
		return a["id"].(string)
	}
	plan := func(productID, price string) string {
		_, a := ppCall(t, p, auth, "POST", "/v1/billing/plans", "", `{"product_id":"`+productID+`","name":"Tier","billing_cycles":[{"frequency":{"interval_unit":"MONTH","interval_count":1},"tenure_type":"REGULAR","sequence":1,"total_cycles":0,"pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"`+price+`"}}}],"payment_preferences":{"payment_failure_threshold":3}}`)
		return a["id"].(string)
	}
	mine, other := product("p1"), product("p2")
	circle, backstage, foreign := plan(mine, "8.00"), plan(mine, "15.00"), plan(other, "15.00")
	_, created := ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "", `{"plan_id":"`+circle+`","custom_id":"order-1","application_context":{"return_url":"https://app.test/ok","cancel_url":"https://app.test/no"}}`)
	id := created["id"].(string)
	revise := func(key, planID string) (int, map[string]any) {
		return ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/revise", key,
			`{"plan_id":"`+planID+`","application_context":{"return_url":"https://app.test/changed","cancel_url":"https://app.test/no"}}`)
	}
	s, a := revise("", backstage)
	expect("revise before approval", s, a, 422, "UNPROCESSABLE_ENTITY", "SUBSCRIPTION_STATUS_INVALID")
	p.ApproveSubscription(id)
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/I-NOPE/revise", "", `{"plan_id":"`+backstage+`"}`)
	expect("revise of an unknown subscription", s, a, 404, "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID")
	s, a = revise("", foreign)
	expect("revise to a plan of another product", s, a, 422, "UNPROCESSABLE_ENTITY", "PLAN_PRODUCT_NOT_COMPATIBLE")
	s, a = ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/revise", "", `{}`)
	expect("revise without a plan", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER /plan_id")
	s, first := revise("rev-1", backstage)
	_, again := revise("rev-1", backstage)
	links, _ := first["links"].([]any)
	if s != 200 || len(links) == 0 || first["plan_id"] != backstage || again["plan_id"] != backstage || p.RevisionCount(id) != 1 {
		t.Fatalf("revise: %d %v, replay %v, %d revisions", s, first, again, p.RevisionCount(id))
	}
	if plan, _ := p.SubscriptionPlan(id); plan != circle {
		t.Fatalf("revised before the subscriber approved: %s", plan)
	}

	// Sales: the subscription's first payment.
	sales := p.SubscriptionSales(id)
	if len(sales) != 1 {
		t.Fatalf("sales: %+v", sales)
	}
	sale := sales[0].ID
	s, a = ppCall(t, p, auth, "GET", "/v1/billing/subscriptions/"+id+"/transactions", "", "")
	expect("transactions without a range", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER start_time")
	s, txs := ppCall(t, p, auth, "GET", "/v1/billing/subscriptions/"+id+"/transactions?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z", "", "")
	if list, _ := txs["transactions"].([]any); s != 200 || len(list) != 1 || list[0].(map[string]any)["id"] != sale {
		t.Fatalf("transactions: %d %v", s, txs)
	}
	s, a = ppCall(t, p, auth, "POST", "/v1/payments/sale/SALE-NOPE/refund", "", `{}`)
	expect("refund of an unknown sale", s, a, 404, "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID")
	s, a = ppCall(t, p, auth, "POST", "/v1/payments/sale/"+sale+"/refund", "", `{"amount":{"total":"9.00","currency":"USD"}}`)
	expect("refund above the sale", s, a, 422, "TRANSACTION_REFUSED", "REFUND_EXCEEDED_TRANSACTION_AMOUNT")
	s, rf := ppCall(t, p, auth, "POST", "/v1/payments/sale/"+sale+"/refund", "ref-1", `{}`)
	_, replay := ppCall(t, p, auth, "POST", "/v1/payments/sale/"+sale+"/refund", "ref-1", `{}`)
	if s != 201 || rf["state"] != "completed" || replay["id"] != rf["id"] || len(p.SaleRefunds(sale)) != 1 {
		t.Fatalf("refund: %d %v, replay %v, refunds %v", s, rf, replay, p.SaleRefunds(sale))
	}
	s, a = ppCall(t, p, auth, "POST", "/v1/payments/sale/"+sale+"/refund", "ref-2", `{}`)
	expect("a second full refund", s, a, 422, "TRANSACTION_REFUSED", "TRANSACTION_ALREADY_REFUNDED")
	if _, got := ppCall(t, p, auth, "GET", "/v1/payments/sale/"+sale, "", ""); got["state"] != "refunded" {
		t.Fatalf("sale after the refund: %v", got)
	}
}
