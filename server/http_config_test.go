package server

import (
	"testing"
	"time"

	"marquee/server/payments"
)

// ORDER_EXPIRY and WALLET_ENABLED: defaults, values, refusals.
func TestConfigOrdersAndWallet(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cfg, err := LoadConfig(env(nil))
	if err != nil || cfg.OrderExpiry != 30*time.Minute || !cfg.WalletEnabled {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	cfg, err = LoadConfig(env(map[string]string{"ORDER_EXPIRY": "2h", "WALLET_ENABLED": "false"}))
	if err != nil || cfg.OrderExpiry != 2*time.Hour || cfg.WalletEnabled {
		t.Fatalf("set: %+v %v", cfg, err)
	}
	for _, bad := range []string{"soon", "-5m", "0s"} {
		if _, err := LoadConfig(env(map[string]string{"ORDER_EXPIRY": bad})); err == nil {
			t.Errorf("ORDER_EXPIRY=%s accepted", bad)
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
