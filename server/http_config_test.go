package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/server/payments"
)

// ORDER_EXPIRY, PUBLISH_INTERVAL and WALLET_ENABLED: defaults, values,
// refusals.
func TestConfigOrdersAndWallet(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cfg, err := LoadConfig(env(nil))
	if err != nil || cfg.OrderExpiry != 30*time.Minute || cfg.PublishInterval != 15*time.Second || !cfg.WalletEnabled {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	cfg, err = LoadConfig(env(map[string]string{"ORDER_EXPIRY": "2h", "PUBLISH_INTERVAL": "2s", "WALLET_ENABLED": "false"}))
	if err != nil || cfg.OrderExpiry != 2*time.Hour || cfg.PublishInterval != 2*time.Second || cfg.WalletEnabled {
		t.Fatalf("set: %+v %v", cfg, err)
	}
	for _, bad := range []string{"soon", "-5m", "0s"} {
		if _, err := LoadConfig(env(map[string]string{"ORDER_EXPIRY": bad})); err == nil {
			t.Errorf("ORDER_EXPIRY=%s accepted", bad)
		}
		if _, err := LoadConfig(env(map[string]string{"PUBLISH_INTERVAL": bad})); err == nil {
			t.Errorf("PUBLISH_INTERVAL=%s accepted", bad)
		}
		if _, err := LoadConfig(env(map[string]string{"RENDER_TIMEOUT": bad})); err == nil {
			t.Errorf("RENDER_TIMEOUT=%s accepted", bad)
		}
	}
	if cfg.RenderTimeout != 3*time.Second {
		t.Errorf("RENDER_TIMEOUT default %s", cfg.RenderTimeout)
	}
	if cfg, err := LoadConfig(env(map[string]string{"RENDER_TIMEOUT": "10s"})); err != nil || cfg.RenderTimeout != 10*time.Second {
		t.Errorf("RENDER_TIMEOUT=10s: %s %v", cfg.RenderTimeout, err)
	}
}

// With the wallet off, the config says so and checkout refuses the method.
func TestWalletOff(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	ts.payments = payments.NewRegistry()
	shop := loadShop(t, ts)
	buyer := ts.as(t, follower)
	base := "/api/store/" + shop.demo
	cfg := dataOf(buyer.must(200, "GET", base+"/stripe-payments/config", ""))
	if cfg["crypto"].(map[string]any)["enabled"] != false || len(cfg["methods"].([]any)) != 0 {
		t.Fatalf("config %v", cfg)
	}
	buyer.must(200, "POST", base+"/cart/items", addBody(shop.items["PIN-SET-01"], "", 1))
	out := buyer.must(400, "POST", base+"/orders/checkout", `{"paymentMethod":"musepay"}`)
	if out["message"] != msgMethodOff {
		t.Fatalf("answer %v", out)
	}
}

// TLS_ACME and its settings (issue 42 item 4): off by default with Let's
// Encrypt's directory and :443; a wrong TLS_ADDR, a CA that is not an https
// URL and a CA root file without a certificate stop the start.
func TestConfigACME(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cfg, err := LoadConfig(env(nil))
	if err != nil || cfg.TLSACME || cfg.TLSAddr != ":443" || cfg.ACMECA != "https://acme-v02.api.letsencrypt.org/directory" || cfg.ACMECARoots != nil {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	root := filepath.Join("testdata", "pebble", "pebble.minica.pem")
	cfg, err = LoadConfig(env(map[string]string{"TLS_ACME": "true", "TLS_ADDR": "127.0.0.1:8443", "ACME_CA": "https://127.0.0.1:14000/dir",
		"ACME_EMAIL": "ops@example.test", "ACME_CA_ROOT": root}))
	if err != nil || !cfg.TLSACME || cfg.TLSAddr != "127.0.0.1:8443" || cfg.ACMECA != "https://127.0.0.1:14000/dir" || cfg.ACMEEmail != "ops@example.test" || cfg.ACMECARoots == nil {
		t.Fatalf("set: %+v %v", cfg, err)
	}
	for name, kv := range map[string]map[string]string{
		"TLS_ACME":     {"TLS_ACME": "maybe"},
		"TLS_ADDR":     {"TLS_ADDR": "443"},
		"ACME_CA":      {"ACME_CA": "http://ca.example/dir"},
		"ACME_CA_ROOT": {"ACME_CA_ROOT": filepath.Join("testdata", "pebble", "missing.pem")},
	} {
		if _, err := LoadConfig(env(kv)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: %v, want an error naming %s", kv, err, name)
		}
	}
	bad := filepath.Join(t.TempDir(), "empty.pem")
	_ = os.WriteFile(bad, []byte("not a certificate"), 0o644)
	if _, err := LoadConfig(env(map[string]string{"ACME_CA_ROOT": bad})); err == nil || !strings.Contains(err.Error(), "ACME_CA_ROOT") {
		t.Errorf("a root file without a certificate: %v", err)
	}
}
