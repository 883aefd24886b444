package server

import (
	"strings"
	"testing"
)

// directive returns the sources of one CSP directive.
func directive(policy, name string) string {
	for _, d := range strings.Split(policy, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, name+" ") {
			return d
		}
	}
	return ""
}

func TestContentSecurityPolicy(t *testing.T) {
	t.Parallel()
	base := Config{PublicURL: "http://localhost:3000", AuthURL: "http://localhost:3002"}
	local := contentSecurityPolicy(base)
	if directive(local, "script-src") != "script-src 'self'" || directive(local, "frame-ancestors") != "frame-ancestors 'none'" ||
		!strings.Contains(directive(local, "form-action"), "http://localhost:3002") {
		t.Fatalf("local policy: %s", local)
	}
	withS3 := base
	withS3.S3 = S3Config{Endpoint: "127.0.0.1:9000", Bucket: "media"}
	policy := contentSecurityPolicy(withS3)
	for _, name := range []string{"img-src", "media-src", "connect-src"} {
		if !strings.Contains(directive(policy, name), "http://127.0.0.1:9000") {
			t.Errorf("%s must allow the S3 endpoint: %s", name, policy)
		}
	}
	if directive(policy, "script-src") != "script-src 'self'" {
		t.Errorf("scripts must come from this site only: %s", policy)
	}
	if strings.Contains(policy, "stripe") || strings.Contains(policy, "paypal") || strings.Contains(policy, "frame-src") {
		t.Errorf("no payment hosts without payment keys: %s", policy)
	}

	// Cards: Stripe.js and its frames, nothing else from Stripe.
	withPay := base
	withPay.Stripe = StripeConfig{SecretKey: "sk", PublishableKey: "pk"}
	withPay.PayPal = PayPalConfig{ClientID: "id", ClientSecret: "secret", APIBase: "https://api-m.sandbox.paypal.com/"}
	policy = contentSecurityPolicy(withPay)
	if directive(policy, "script-src") != "script-src 'self' https://js.stripe.com" ||
		directive(policy, "frame-src") != "frame-src https://js.stripe.com https://hooks.stripe.com" {
		t.Errorf("card policy: %s", policy)
	}
	// PayPal: the no-JavaScript pay form is redirected to PayPal's approval page.
	if f := directive(policy, "form-action"); !strings.Contains(f, "https://www.sandbox.paypal.com") || !strings.Contains(f, "https://www.paypal.com") ||
		!strings.Contains(f, "https://api-m.sandbox.paypal.com") || strings.Contains(f, "paypal.com/") {
		t.Errorf("paypal form-action: %s", policy)
	}
	// Payouts: the studio's Connect and dashboard forms are redirected to
	// Stripe's hosted Connect pages.
	if f := directive(policy, "form-action"); !strings.Contains(f, "https://connect.stripe.com") {
		t.Errorf("connect form-action: %s", policy)
	}
}
