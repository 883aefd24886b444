package paymentstest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// stripeCall sends a form request to the fake with the secret key and an
// optional Idempotency-Key, and answers the status and decoded body.
func stripeCall(t *testing.T, s *Stripe, method, path, key string, form url.Values) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Authorization", "Bearer sk_test_x")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, res.Header
}

// Card trials on the fake (issue 40 item 5), as strict as Stripe: Checkout
// in subscription mode refuses what Stripe refuses (an unknown price or
// coupon, a trial out of range, a fee without a destination, a destination
// that takes no charges), answers unknown sessions and subscriptions 404,
// replays a key's answer and refuses the key with another body; the hosted
// page's card makes a trialing subscription with the card, and the trial's
// end charges it, fails, or cancels it.
func TestStripeFakeCardTrial(t *testing.T) {
	s := StartStripe(t, "whsec_x")
	code, price, _ := stripeCall(t, s, "POST", "/v1/prices", "", url.Values{"unit_amount": {"1500"}, "currency": {"usd"},
		"recurring[interval]": {"month"}, "product_data[name]": {"Backstage Pass"}, "metadata[planId]": {"p_1"}})
	if code != 200 {
		t.Fatalf("price: %d %v", code, price)
	}
	session := func(extra url.Values) url.Values {
		v := url.Values{"mode": {"subscription"}, "success_url": {"http://x/ok?s={CHECKOUT_SESSION_ID}"}, "cancel_url": {"http://x/no"},
			"line_items[0][price]": {price["id"].(string)}, "line_items[0][quantity]": {"1"}, "customer_email": {"fan@example.com"},
			"payment_method_collection": {"always"}, "subscription_data[trial_period_days]": {"7"},
			"subscription_data[trial_settings][end_behavior][missing_payment_method]": {"cancel"},
			"subscription_data[metadata][kind]":                                       {"card_trial"}, "metadata[kind]": {"card_trial"}}
		for k, vs := range extra {
			v[k] = vs
		}
		return v
	}
	for name, extra := range map[string]url.Values{
		"unknown price":               {"line_items[0][price]": {"price_nope"}},
		"trial of 0 days":             {"subscription_data[trial_period_days]": {"0"}},
		"trial of 731 days":           {"subscription_data[trial_period_days]": {"731"}},
		"fee without a destination":   {"subscription_data[application_fee_percent]": {"5"}},
		"destination without charges": {"subscription_data[transfer_data][destination]": {"acct_nope"}},
		"unknown coupon":              {"discounts[0][coupon]": {"nope"}},
		"bad end behaviour":           {"subscription_data[trial_settings][end_behavior][missing_payment_method]": {"later"}},
	} {
		if code, body, _ := stripeCall(t, s, "POST", "/v1/checkout/sessions", "", session(extra)); code != 400 {
			t.Fatalf("%s: %d %v", name, code, body)
		}
	}
	for _, path := range []string{"/v1/checkout/sessions/cs_test_nope", "/v1/subscriptions/sub_nope"} {
		if code, _, _ := stripeCall(t, s, "GET", path, "", nil); code != 404 {
			t.Fatalf("GET %s: %d", path, code)
		}
	}
	if code, _, _ := stripeCall(t, s, "DELETE", "/v1/subscriptions/sub_nope", "", nil); code != 404 {
		t.Fatalf("DELETE an unknown subscription: %d", code)
	}

	// One key, one session; the key with another body is refused.
	code, cs, _ := stripeCall(t, s, "POST", "/v1/checkout/sessions", "trial-1", session(nil))
	if code != 200 || cs["amount_total"] != float64(0) || cs["status"] != "open" || cs["subscription"] != nil {
		t.Fatalf("session: %d %v", code, cs)
	}
	code, again, h := stripeCall(t, s, "POST", "/v1/checkout/sessions", "trial-1", session(nil))
	if code != 200 || again["id"] != cs["id"] || h.Get("Idempotent-Replayed") != "true" || s.CheckoutSessionCount() != 1 {
		t.Fatalf("replay: %d %v", code, again)
	}
	code, conflict, _ := stripeCall(t, s, "POST", "/v1/checkout/sessions", "trial-1", session(url.Values{"subscription_data[trial_period_days]": {"14"}}))
	if e, _ := conflict["error"].(map[string]any); code != 400 || e["type"] != "idempotency_error" {
		t.Fatalf("the key with another body: %d %v", code, conflict)
	}

	// A declined card leaves the session open; a good one makes the
	// subscription, trialing with the card, and the events.
	id := cs["id"].(string)
	if msg := s.PayCheckoutWith(id, "pm_card_chargeDeclined"); msg == "" || s.CheckoutSession(id)["status"] != "open" {
		t.Fatalf("a declined card: %q", msg)
	}
	if msg := s.PayCheckoutWith(id, "pm_card_visa"); msg != "" {
		t.Fatal(msg)
	}
	done := s.CheckoutSession(id)
	sub := s.Subscription(done["subscription"].(string))
	end := int64(sub["trial_end"].(float64))
	if done["status"] != "complete" || done["payment_status"] != "no_payment_required" || sub["status"] != "trialing" ||
		sub["default_payment_method"] != "pm_card_visa" || end < time.Now().Add(7*24*time.Hour-time.Minute).Unix() {
		t.Fatalf("after the card: %v %v", done, sub)
	}
	if msg := s.PayCheckoutWith(id, "pm_card_visa"); msg == "" || len(s.SubscriptionIDs()) != 1 {
		t.Fatalf("a completed session took a second card")
	}
	if ev := s.EndTrial(sub["id"].(string)); ev.Type != "invoice.paid" || s.Subscription(sub["id"].(string))["status"] != "active" {
		t.Fatalf("the trial's end: %s", ev.Type)
	}
	if ev := s.EndTrial(sub["id"].(string)); ev.Type != "" {
		t.Fatalf("a second end of a trial over: %s", ev.Type)
	}
}
