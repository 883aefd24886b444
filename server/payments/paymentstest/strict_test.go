package paymentstest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, target, auth, keyHeader, key, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set(keyHeader, key)
	if strings.HasPrefix(body, "{") {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// sameKeyTwice sends a request that the fake holds (its key in flight),
// then, once the fake says it waits, a second with the same key; then
// lets the first go. Nothing depends on how fast either is sent.
func sameKeyTwice(t *testing.T, hold func() func(), held func() int, send func() int) (first, second int) {
	release := hold()
	defer release()
	done := make(chan int, 1)
	go func() { done <- send() }()
	for deadline := time.Now().Add(time.Minute); held() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first request never reached the fake")
		}
	}
	second = send()
	release()
	return <-done, second
}

// The Stripe fake keeps idempotency as Stripe does: a stored 500 is
// replayed to its key, a fresh key goes through, and a key still in flight
// is refused with 409.
func TestStripeFakeIdempotency(t *testing.T) {
	s := StartStripe(t, "whsec_x")
	const auth = "Bearer sk_test_x"
	form := url.Values{"amount": {"500"}, "currency": {"usd"}}.Encode()
	s.FailNext("/v1/payment_intents", 1)
	if code := post(t, s.URL+"/v1/payment_intents", auth, "Idempotency-Key", "k1", form); code != 500 {
		t.Fatalf("first: %d", code)
	}
	if code := post(t, s.URL+"/v1/payment_intents", auth, "Idempotency-Key", "k1", form); code != 500 {
		t.Fatalf("the stored 500 was not replayed: %d", code)
	}
	if code := post(t, s.URL+"/v1/payment_intents", auth, "Idempotency-Key", "k2", form); code != 200 || s.IntentCount() != 1 {
		t.Fatalf("fresh key: %d, %d intents", code, s.IntentCount())
	}
	if code := post(t, s.URL+"/v1/payment_intents", auth, "Idempotency-Key", "k2", "amount=600&currency=usd"); code != 400 {
		t.Fatalf("reused key with other parameters: %d", code)
	}
	first, second := sameKeyTwice(t, func() func() { return s.Hold("/v1/payment_intents") }, func() int { return s.Held("/v1/payment_intents") },
		func() int { return post(t, s.URL+"/v1/payment_intents", auth, "Idempotency-Key", "k3", form) })
	if first != 200 || second != 409 || s.IntentCount() != 2 {
		t.Fatalf("same key in flight: first %d, second %d, %d intents", first, second, s.IntentCount())
	}
}

// The PayPal fake does the same with PayPal-Request-Id.
func TestPayPalFakeIdempotency(t *testing.T) {
	p := StartPayPal(t, "id", "secret", "WH")
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/oauth2/token", strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth("id", "secret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var tok string
	for k := range p.tokens {
		tok = k
	}
	auth := "Bearer " + tok
	order := `{"intent":"CAPTURE","purchase_units":[{"custom_id":"o1","amount":{"currency_code":"USD","value":"5.00"}}],
		"payment_source":{"paypal":{"experience_context":{"return_url":"http://x/ok","cancel_url":"http://x/no"}}}}`
	bad := `{"intent":"CAPTURE","purchase_units":[]}`
	refused := post(t, p.URL+"/v2/checkout/orders", auth, "PayPal-Request-Id", "r1", bad)
	if refused < 400 {
		t.Fatalf("an order without units: %d", refused)
	}
	if code := post(t, p.URL+"/v2/checkout/orders", auth, "PayPal-Request-Id", "r1", order); code != refused || p.OrderCount() != 0 {
		t.Fatalf("the stored failure was not replayed: %d, %d orders", code, p.OrderCount())
	}
	if code := post(t, p.URL+"/v2/checkout/orders", auth, "PayPal-Request-Id", "r2", order); code >= 300 || p.OrderCount() != 1 {
		t.Fatalf("fresh id: %d", code)
	}
	first, second := sameKeyTwice(t, func() func() { return p.Hold("/v2/checkout/orders") }, func() int { return p.Held("/v2/checkout/orders") },
		func() int { return post(t, p.URL+"/v2/checkout/orders", auth, "PayPal-Request-Id", "r3", order) })
	if first >= 300 || second != 409 || p.OrderCount() != 2 {
		t.Fatalf("same id in flight: first %d, second %d, %d orders", first, second, p.OrderCount())
	}
}

// The PayPal fake holds purchase units to PayPal's documented rules for the
// payee and payment_instruction.platform_fees (Orders v2).
func TestPayPalFakePayeeShapes(t *testing.T) {
	p := StartPayPal(t, "id", "secret", "WH")
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/oauth2/token", strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth("id", "secret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	bn := "MARQUEE_SP"
	order := func(unitExtra string) int {
		body := `{"intent":"CAPTURE","purchase_units":[{"custom_id":"o1","amount":{"currency_code":"USD","value":"10.00"}` + unitExtra +
			`}],"payment_source":{"paypal":{"experience_context":{"return_url":"http://x/r","cancel_url":"http://x/c"}}}}`
		return post(t, p.URL+"/v2/checkout/orders", "Bearer "+tok.AccessToken, "PayPal-Partner-Attribution-Id", bn, body)
	}
	fee := func(v, cur string) string {
		return `,"payment_instruction":{"disbursement_mode":"INSTANT","platform_fees":[{"amount":{"currency_code":"` + cur + `","value":"` + v + `"}}]}`
	}
	p.PlatformFeesAllowed = true
	for _, c := range []struct {
		name  string
		extra string
		want  int
	}{
		{"merchant id", `,"payee":{"merchant_id":"ABCDEFGHJKLMN"}`, 200},
		{"e-mail", `,"payee":{"email_address":"luna@example.com"}`, 200},
		{"merchant id with a letter PayPal never uses", `,"payee":{"merchant_id":"ABCDEFGHIJKLM"}`, 422},
		{"short merchant id", `,"payee":{"merchant_id":"ABC"}`, 422},
		{"empty payee", `,"payee":{}`, 422},
		{"fee", `,"payee":{"merchant_id":"ABCDEFGHJKLMN"}` + fee("1.00", "USD"), 200},
		{"fee without payee", fee("1.00", "USD"), 422},
		{"fee in another currency", `,"payee":{"merchant_id":"ABCDEFGHJKLMN"}` + fee("1.00", "EUR"), 422},
		{"fee above the amount", `,"payee":{"merchant_id":"ABCDEFGHJKLMN"}` + fee("10.01", "USD"), 422},
		{"zero fee", `,"payee":{"merchant_id":"ABCDEFGHJKLMN"}` + fee("0.00", "USD"), 422},
		{"bad disbursement mode", `,"payee":{"merchant_id":"ABCDEFGHJKLMN"},"payment_instruction":{"disbursement_mode":"SOON"}`, 422},
	} {
		if got := order(c.extra); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// Without the platform's BN code PayPal refuses a fee; paying another
	// account, or the caller's own, needs none.
	bn = ""
	if got := order(`,"payee":{"merchant_id":"ABCDEFGHJKLMN"}` + fee("1.00", "USD")); got != 403 {
		t.Errorf("fee without PayPal-Partner-Attribution-Id: %d, want 403", got)
	}
	if got := order(`,"payee":{"merchant_id":"ABCDEFGHJKLMN"}`); got != 200 {
		t.Errorf("payee without PayPal-Partner-Attribution-Id: %d, want 200", got)
	}
	if got := order(""); got != 200 {
		t.Errorf("own order without attribution: %d", got)
	}
	bn = "MARQUEE_SP"
	p.PlatformFeesAllowed = false
	if got := order(`,"payee":{"merchant_id":"ABCDEFGHJKLMN"}` + fee("1.00", "USD")); got != 403 {
		t.Errorf("fee on an account not allowed fees: %d", got)
	}
}
