package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Rate limits key on the client's address. Behind a configured proxy that
// is the address the proxy forwards; from anyone else X-Forwarded-For is
// ignored, so a client cannot dodge a limit by naming another address, and
// one client's failures never lock out the others behind the same proxy.
func TestClientAddressBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	limit := DefaultLimits().SignInAddress.Limit
	failFrom := func(ts *testServer, forwarded string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			// A different unknown account each time: only the address
			// counter can run out.
			body := url.Values{"email": {"nobody" + strings.Repeat("x", i+1) + "@demo.test"}, "password": {"wrong"}}.Encode()
			res := ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(body),
				map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": forwarded})
			if res.Status != http.StatusUnauthorized {
				t.Fatalf("failed sign-in %d from %s: %d", i+1, forwarded, res.Status)
			}
		}
	}
	signIn := func(ts *testServer, forwarded string) int {
		body := url.Values{"email": {"follower@demo.test"}, "password": {demoPassword}}.Encode()
		return ts.do(t, "POST", "/authenticate/signin?app=demo", strings.NewReader(body),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": forwarded}).Status
	}

	t.Run("behind the proxy", func(t *testing.T) {
		// httptest requests come from 192.0.2.1, the proxy here.
		cfg, err := LoadConfig(func(k string) string { return map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1"}[k] })
		if err != nil {
			t.Fatal(err)
		}
		ts := newTestServerWith(t, demoDB(t), func(c *Config) { c.TrustedProxies = cfg.TrustedProxies })
		failFrom(ts, "198.51.100.7", limit)
		if got := signIn(ts, "198.51.100.7"); got != http.StatusTooManyRequests {
			t.Errorf("the client that failed %d times: %d, want 429", limit, got)
		}
		if got := signIn(ts, "203.0.113.9"); got != http.StatusSeeOther {
			t.Errorf("another client behind the same proxy: %d, want 303", got)
		}
		// The proxy appends what it saw; what the client wrote before
		// it counts for nothing.
		if got := signIn(ts, "203.0.113.9, 198.51.100.7"); got != http.StatusTooManyRequests {
			t.Errorf("the failing client naming another address first: %d, want 429", got)
		}
	})

	t.Run("no proxy configured", func(t *testing.T) {
		ts := newTestServer(t, demoDB(t))
		failFrom(ts, "198.51.100.7", limit)
		if got := signIn(ts, "203.0.113.9"); got != http.StatusTooManyRequests {
			t.Errorf("a client naming another address in X-Forwarded-For: %d, want 429", got)
		}
	})
}

func TestTrustedProxiesConfig(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(func(k string) string { return map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8,::1, 127.0.0.1"}[k] })
	if err != nil || len(cfg.TrustedProxies) != 3 || cfg.TrustedProxies[2].String() != "127.0.0.1/32" || cfg.TrustedProxies[1].String() != "::1/128" {
		t.Fatalf("parsed %v, %v", cfg.TrustedProxies, err)
	}
	for _, bad := range []string{"nginx", "10.0.0.0/33", "10.0.0.1/8/2"} {
		if _, err := LoadConfig(func(k string) string { return map[string]string{"TRUSTED_PROXIES": bad}[k] }); err == nil || !strings.Contains(err.Error(), "TRUSTED_PROXIES") {
			t.Errorf("TRUSTED_PROXIES=%q: %v", bad, err)
		}
	}
}
