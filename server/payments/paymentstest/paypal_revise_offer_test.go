package paymentstest

import (
	"net/http"
	"net/url"
	"testing"
)

// A revision as PayPal takes one for an upgrade with an offer code: the
// plan revised to bills from the next billing time, from its first cycle
// (its TRIAL cycles at their price, then the REGULAR one), and nothing is
// charged on approval. Revise's plan override is held to PayPal's rules:
// it prices or counts a cycle of the new plan named by its sequence (an
// unknown sequence, another tenure or frequency is 422
// BILLING_CYCLE_SEQUENCE_INVALID; a price in another currency, a trial
// without end or an empty list is 400 naming the field); a replayed
// PayPal-Request-Id revises once; once approved, the subscription bills
// the override's prices and says plan_overridden.
func TestPayPalFakeReviseToTrialPlanAndOverride(t *testing.T) {
	p := StartPayPal(t, "id", "secret", "WH")
	auth := ppToken(t, p)
	expect := func(name string, status int, a map[string]any, wantStatus int, wantName, wantIssue string) {
		t.Helper()
		if status != wantStatus || a["name"] != wantName || issueOf(a) != wantIssue {
			t.Errorf("%s: %d %v %q, want %d %s %q", name, status, a["name"], issueOf(a), wantStatus, wantName, wantIssue)
		}
	}
	_, prod := ppCall(t, p, auth, "POST", "/v1/catalogs/products", "", `{"name":"Tiers","type":"SERVICE"}`)
	const month = `"frequency":{"interval_unit":"MONTH","interval_count":1}`
	plan := func(cycles string) string {
		s, a := ppCall(t, p, auth, "POST", "/v1/billing/plans", "", `{"product_id":"`+prod["id"].(string)+`","name":"Tier","billing_cycles":[`+cycles+`],"payment_preferences":{"payment_failure_threshold":3}}`)
		if s != 201 {
			t.Fatalf("plan: %d %v", s, a)
		}
		return a["id"].(string)
	}
	circle := plan(`{` + month + `,"tenure_type":"REGULAR","sequence":1,"total_cycles":0,"pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"8.00"}}}`)
	intro := plan(`{` + month + `,"tenure_type":"TRIAL","sequence":1,"total_cycles":2,"pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"7.50"}}},` +
		`{` + month + `,"tenure_type":"REGULAR","sequence":2,"total_cycles":0,"pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"15.00"}}}`)
	subscribe := func(custom string) string {
		_, a := ppCall(t, p, auth, "POST", "/v1/billing/subscriptions", "", `{"plan_id":"`+circle+`","custom_id":"`+custom+`","application_context":{"return_url":"https://app.test/ok","cancel_url":"https://app.test/no"}}`)
		id := a["id"].(string)
		p.ApproveSubscription(id)
		return id
	}
	agree := func(approval string) {
		t.Helper()
		u, _ := url.Parse(approval)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.PostForm(p.URL+"/webapps/billing/subscriptions", url.Values{"ba_token": {u.Query().Get("ba_token")}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("agree: %d", res.StatusCode)
		}
	}
	approveLink := func(a map[string]any) string {
		links, _ := a["links"].([]any)
		for _, l := range links {
			if m := l.(map[string]any); m["rel"] == "approve" {
				return m["href"].(string)
			}
		}
		t.Fatalf("no approve link: %v", a)
		return ""
	}
	renewals := func(id string, want ...string) {
		t.Helper()
		for i, w := range want {
			if sale := p.RenewSubscription(id); sale == nil || sale.Amount.Value != w {
				t.Fatalf("renewal %d of %s: %+v, want %s", i+1, id, sale, w)
			}
		}
	}
	ac := `"application_context":{"return_url":"https://app.test/changed","cancel_url":"https://app.test/no"}`

	// To a plan with TRIAL cycles: they run first, from the next billing.
	id := subscribe("order-1")
	_, before := ppCall(t, p, auth, "GET", "/v1/billing/subscriptions/"+id, "", "")
	s, rev := ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/revise", "r-1", `{"plan_id":"`+intro+`",`+ac+`}`)
	if s != 200 || rev["plan_overridden"] != false {
		t.Fatalf("revise: %d %v", s, rev)
	}
	agree(approveLink(rev))
	_, after := ppCall(t, p, auth, "GET", "/v1/billing/subscriptions/"+id, "", "")
	next := func(a map[string]any) any { return a["billing_info"].(map[string]any)["next_billing_time"] }
	if len(p.SubscriptionSales(id)) != 1 || after["plan_id"] != intro || next(after) != next(before) {
		t.Fatalf("after the approval: %d sales, %v", len(p.SubscriptionSales(id)), after)
	}
	renewals(id, "7.50", "7.50", "15.00", "15.00")

	// Revise's plan override.
	id = subscribe("order-2")
	override := func(key, cycles string) (int, map[string]any) {
		return ppCall(t, p, auth, "POST", "/v1/billing/subscriptions/"+id+"/revise", key, `{"plan_id":"`+intro+`","plan":{"billing_cycles":[`+cycles+`]},`+ac+`}`)
	}
	s, a := override("", `{"sequence":3,"pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"5.00"}}}`)
	expect("an override of a cycle the plan lacks", s, a, 422, "UNPROCESSABLE_ENTITY", "BILLING_CYCLE_SEQUENCE_INVALID")
	s, a = override("", `{"sequence":1,"tenure_type":"REGULAR","pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"5.00"}}}`)
	expect("an override changing a cycle's tenure", s, a, 422, "UNPROCESSABLE_ENTITY", "BILLING_CYCLE_SEQUENCE_INVALID")
	s, a = override("", `{"sequence":1,"pricing_scheme":{"fixed_price":{"currency_code":"EUR","value":"5.00"}}}`)
	expect("an override in another currency", s, a, 400, "INVALID_REQUEST", "INVALID_PARAMETER_VALUE /plan/billing_cycles/0/pricing_scheme/fixed_price")
	s, a = override("", `{"sequence":1,"total_cycles":0}`)
	expect("a trial without end", s, a, 400, "INVALID_REQUEST", "INVALID_PARAMETER_VALUE /plan/billing_cycles/0/total_cycles")
	s, a = override("", `{"sequence":1,"total_cycles":1},{"sequence":1,"total_cycles":2}`)
	expect("a cycle named twice", s, a, 400, "INVALID_REQUEST", "INVALID_PARAMETER_VALUE /plan/billing_cycles/1/sequence")
	s, a = override("", ``)
	expect("an empty override", s, a, 400, "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER /plan/billing_cycles")
	if n := p.RevisionCount(id); n != 0 {
		t.Fatalf("refused overrides revised %d times", n)
	}
	cycles := `{"sequence":1,"total_cycles":1,"pricing_scheme":{"fixed_price":{"currency_code":"USD","value":"5.00"}}}`
	s, first := override("o-1", cycles)
	_, replay := override("o-1", cycles)
	if s != 200 || first["plan_overridden"] != true || replay["plan_overridden"] != true || p.RevisionCount(id) != 1 {
		t.Fatalf("override: %d %v, replay %v, %d revisions", s, first, replay, p.RevisionCount(id))
	}
	agree(approveLink(first))
	if _, got := ppCall(t, p, auth, "GET", "/v1/billing/subscriptions/"+id, "", ""); got["plan_overridden"] != true {
		t.Fatalf("the overridden subscription: %v", got)
	}
	renewals(id, "5.00", "15.00")
}
