package paymentstest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// form posts a form to the fake with a secret key and answers the status
// and the decoded body.
func formPost(t *testing.T, s *Stripe, path, key string, v url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(v.Encode()))
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
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out
}

func errMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// The fake refuses what Stripe refuses about Connect, and keeps
// idempotency as Stripe does: a replayed account creation answers the same
// account, the key reused with other parameters is refused.
func TestFakeConnectIsStrict(t *testing.T) {
	s := StartStripe(t, "whsec_x")
	s.ConnectWebhookSecret = "whsec_connect"
	acct := url.Values{"type": {"express"}, "capabilities[transfers][requested]": {"true"}}
	code, a := formPost(t, s, "/v1/accounts", "acct-key", acct)
	if code != 200 {
		t.Fatalf("create account: %d %v", code, a)
	}
	id := a["id"].(string)
	if code, again := formPost(t, s, "/v1/accounts", "acct-key", acct); code != 200 || again["id"] != id {
		t.Fatalf("replayed key made another account: %d %v", code, again)
	}
	if code, body := formPost(t, s, "/v1/accounts", "acct-key", url.Values{"type": {"custom"}}); code != 400 || !strings.Contains(errMessage(body), "same parameters") {
		t.Fatalf("key reused with other parameters: %d %v", code, body)
	}
	if got := len(s.AccountIDs()); got != 1 { // (a second is made below)
		t.Fatalf("accounts: %d", got)
	}
	if code, _ := formPost(t, s, "/v1/accounts", "", url.Values{"type": {"premium"}}); code != 400 {
		t.Fatalf("unknown account type: %d", code)
	}
	// Account links need both URLs; login links need a finished onboarding.
	if code, body := formPost(t, s, "/v1/account_links", "", url.Values{"account": {id}, "type": {"account_onboarding"}, "refresh_url": {"https://x.test/r"}}); code != 400 || !strings.Contains(errMessage(body), "return_url") {
		t.Fatalf("link without return_url: %d %v", code, body)
	}
	if code, body := formPost(t, s, "/v1/accounts/"+id+"/login_links", "", nil); code != 400 || !strings.Contains(errMessage(body), "onboarding") {
		t.Fatalf("login link before onboarding: %d %v", code, body)
	}
	// A destination that cannot take transfers, and a fee without one.
	pi := url.Values{"amount": {"1000"}, "currency": {"usd"}, "transfer_data[destination]": {id}, "application_fee_amount": {"50"}}
	if code, body := formPost(t, s, "/v1/payment_intents", "", pi); code != 400 || !strings.Contains(errMessage(body), "capabilities") {
		t.Fatalf("charge to an account not onboarded: %d %v", code, body)
	}
	if code, _ := formPost(t, s, "/v1/payment_intents", "", url.Values{"amount": {"1000"}, "currency": {"usd"}, "application_fee_amount": {"50"}}); code != 400 {
		t.Fatalf("fee without destination: %d", code)
	}
	ev := s.CompleteOnboarding(id)
	var got struct {
		Account string `json:"account"`
		Type    string `json:"type"`
		Data    struct {
			Object map[string]any `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ev.Payload, &got); err != nil || got.Account != id || got.Type != "account.updated" || got.Data.Object["charges_enabled"] != true {
		t.Fatalf("account.updated: %+v %v", got, err)
	}
	if !strings.Contains(ev.Header, "v1=") || ev.Header == s.Sign(ev.Payload, ev.At()) {
		t.Fatalf("the Connect event is not signed with the Connect secret: %s", ev.Header)
	}
	if code, body := formPost(t, s, "/v1/payment_intents", "", url.Values{"amount": {"1000"}, "currency": {"usd"}, "transfer_data[destination]": {id}, "application_fee_amount": {"1001"}}); code != 400 || !strings.Contains(errMessage(body), "greater") {
		t.Fatalf("fee above the amount: %d %v", code, body)
	}
	// on_behalf_of must name an account that takes cards, and the same
	// account as the destination.
	if code, body := formPost(t, s, "/v1/payment_intents", "", url.Values{"amount": {"1000"}, "currency": {"usd"}, "transfer_data[destination]": {id}, "on_behalf_of": {"acct_other"}}); code != 400 || !strings.Contains(errMessage(body), "acct_other") {
		t.Fatalf("on_behalf_of another account: %d %v", code, body)
	}
	_, second := formPost(t, s, "/v1/accounts", "", acct)
	if code, body := formPost(t, s, "/v1/payment_intents", "", url.Values{"amount": {"1000"}, "currency": {"usd"}, "transfer_data[destination]": {id}, "on_behalf_of": {second["id"].(string)}}); code != 400 || !strings.Contains(errMessage(body), "card_payments") {
		t.Fatalf("on_behalf_of an account without card payments: %d %v", code, body)
	}
	pi.Set("on_behalf_of", id)
	code, intent := formPost(t, s, "/v1/payment_intents", "", pi)
	if code != 200 {
		t.Fatalf("destination charge: %d %v", code, intent)
	}
	s.Succeed(intent["id"].(string))
	if intent["on_behalf_of"] != id {
		t.Fatalf("on_behalf_of not kept: %v", intent)
	}
	if tr, fees := s.Transfers(), s.ApplicationFees(); len(tr) != 1 || tr[0].Amount != 1000 || tr[0].Destination != id || len(fees) != 1 || fees[0].Amount != 50 {
		t.Fatalf("transfer %+v fees %+v", tr, fees)
	}
	// Refunds: reverse_transfer is for destination charges only; the
	// transfer and fee come back in proportion, all of them at the end.
	plain := url.Values{"amount": {"700"}, "currency": {"usd"}}
	_, p := formPost(t, s, "/v1/payment_intents", "", plain)
	s.Succeed(p["id"].(string))
	if code, body := formPost(t, s, "/v1/refunds", "", url.Values{"payment_intent": {p["id"].(string)}, "reverse_transfer": {"true"}}); code != 400 || !strings.Contains(errMessage(body), "transfer") {
		t.Fatalf("reverse_transfer on a plain charge: %d %v", code, body)
	}
	rev := url.Values{"payment_intent": {intent["id"].(string)}, "amount": {"300"}, "reverse_transfer": {"true"}, "refund_application_fee": {"true"}}
	if code, body := formPost(t, s, "/v1/refunds", "", rev); code != 200 || body["transfer_reversal_amount"] != float64(300) || body["application_fee_refund_amount"] != float64(15) {
		t.Fatalf("partial refund: %d %v", code, body)
	}
	rest := url.Values{"payment_intent": {intent["id"].(string)}, "reverse_transfer": {"true"}, "refund_application_fee": {"true"}}
	if code, body := formPost(t, s, "/v1/refunds", "", rest); code != 200 || body["transfer_reversal_amount"] != float64(700) || body["application_fee_refund_amount"] != float64(35) {
		t.Fatalf("rest refunded: %d %v", code, body)
	}
	if tr, fees := s.Transfers(), s.ApplicationFees(); tr[0].Reversed != 1000 || fees[0].Refunded != 50 {
		t.Fatalf("after the full refund: transfer %+v fee %+v", tr[0], fees[0])
	}
}
