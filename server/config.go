package server

import (
	"net"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config comes from the environment; every field has a default that runs the
// product on one machine with no other servers.
type Config struct {
	// Port and AuthPort are the two sites' ports; 0 asks the kernel for a
	// free one (tests), and Listen records the port it got.
	Port        int
	AuthPort    int
	DatabaseURL string
	RedisURL    string
	MediaDir    string
	S3          S3Config
	PublicURL   string
	AuthURL     string
	// publicURLFromPort and authURLFromPort: the URL was not configured, so
	// it is http://localhost:<port> and follows the port Listen binds.
	publicURLFromPort, authURLFromPort bool
	SecretKey                          string
	// CookieDomain lets the main and auth hosts share the session cookie in
	// production (e.g. ".example.com"); empty means host-only.
	CookieDomain string
	// PushAllowLoopbackHTTP accepts http://127.0.0.1 push endpoints (tests
	// run a local push receiver); never set from the environment.
	PushAllowLoopbackHTTP bool
	// TrustedProxies (TRUSTED_PROXIES, comma-separated CIDRs or addresses)
	// are the reverse proxies whose X-Forwarded-For names the client; empty
	// means the connection's address is the client (no proxy is believed).
	TrustedProxies []*net.IPNet
	// PushSubscriber is the VAPID contact (PUSH_SUBSCRIBER, mailto: or https:).
	PushSubscriber string
	// OrderExpiry is how long an unpaid order holds its stock before it is
	// cancelled (ORDER_EXPIRY, a Go duration, default 30m).
	OrderExpiry time.Duration
	// WalletEnabled turns the member wallet payment method on (WALLET_ENABLED,
	// default true).
	WalletEnabled bool
	Stripe        StripeConfig
	PayPal        PayPalConfig
	// DrainDelay is how long a shutdown keeps serving after /healthz turned
	// 503, so load balancers stop sending before the listeners close.
	DrainDelay time.Duration
	// MaxInFlight caps requests handled at once (MAX_IN_FLIGHT; 0 is 64
	// per CPU); more wait up to InFlightWait, then answer 503 (inflight.go).
	MaxInFlight  int64
	InFlightWait time.Duration
	// Limits are the brute-force and write limits; zero fields take
	// DefaultLimits (tests lower them).
	Limits Limits
}

// StripeConfig: the card method is offered only with a secret and a
// publishable key; webhooks are accepted only with the signing secret.
type StripeConfig struct {
	SecretKey      string
	PublishableKey string
	WebhookSecret  string
	// APIBase points the client at stripe-mock or a fake in tests; empty
	// means Stripe itself.
	APIBase string
}

func (s StripeConfig) Enabled() bool { return s.SecretKey != "" && s.PublishableKey != "" }

// PayPalConfig: PayPal is offered only with a client id and secret.
// WebhookID is the id PayPal gave the webhook subscription; its
// verify-webhook-signature call needs it.
type PayPalConfig struct {
	ClientID     string
	ClientSecret string
	APIBase      string
	WebhookID    string
}

func (p PayPalConfig) Enabled() bool { return p.ClientID != "" && p.ClientSecret != "" }

// PayPalSandbox is the default PAYPAL_API_BASE: nobody is charged by
// mistake until a live base is configured on purpose.
const PayPalSandbox = "https://api-m.sandbox.paypal.com"

type S3Config struct {
	Endpoint  string
	AccessKey string
	SecretKey string
	Bucket    string
	Region    string
	UseSSL    bool
}

func (s S3Config) Enabled() bool { return s.Endpoint != "" && s.Bucket != "" }

func LoadConfig(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	get := func(key, def string) string {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			return v
		}
		return def
	}
	port, err := strconv.Atoi(get("PORT", "3000"))
	if err != nil {
		return Config{}, fmt.Errorf("PORT: %w", err)
	}
	authPort, err := strconv.Atoi(get("AUTH_PORT", "3002"))
	if err != nil {
		return Config{}, fmt.Errorf("AUTH_PORT: %w", err)
	}
	drain, err := time.ParseDuration(get("SHUTDOWN_DELAY", "3s"))
	if err != nil || drain < 0 {
		return Config{}, fmt.Errorf("SHUTDOWN_DELAY: want a duration such as 3s, got %q", get("SHUTDOWN_DELAY", ""))
	}
	cfg := Config{
		DrainDelay:  drain,
		Port:        port,
		AuthPort:    authPort,
		DatabaseURL: get("DATABASE_URL", "data/marquee.db"),
		RedisURL:    get("REDIS_URL", ""),
		MediaDir:    get("MEDIA_DIR", "data/media"),
		S3: S3Config{
			Endpoint:  get("S3_ENDPOINT", ""),
			AccessKey: get("S3_ACCESS_KEY", ""),
			SecretKey: get("S3_SECRET_KEY", ""),
			Bucket:    get("S3_BUCKET", ""),
			Region:    get("S3_REGION", "us-east-1"),
			UseSSL:    get("S3_USE_SSL", "false") == "true",
		},
		PublicURL:      strings.TrimRight(get("PUBLIC_URL", fmt.Sprintf("http://localhost:%d", port)), "/"),
		AuthURL:        strings.TrimRight(get("AUTH_URL", fmt.Sprintf("http://localhost:%d", authPort)), "/"),
		SecretKey:      get("SECRET_KEY", ""),
		PushSubscriber: get("PUSH_SUBSCRIBER", ""),
		CookieDomain:   get("COOKIE_DOMAIN", ""),
	}
	cfg.publicURLFromPort = strings.TrimSpace(getenv("PUBLIC_URL")) == ""
	cfg.authURLFromPort = strings.TrimSpace(getenv("AUTH_URL")) == ""
	if cfg.MaxInFlight, err = strconv.ParseInt(get("MAX_IN_FLIGHT", "0"), 10, 64); err != nil || cfg.MaxInFlight < 0 {
		return Config{}, fmt.Errorf("MAX_IN_FLIGHT: want a number of requests, got %q", get("MAX_IN_FLIGHT", ""))
	}
	cfg.OrderExpiry, err = time.ParseDuration(get("ORDER_EXPIRY", "30m"))
	if err != nil || cfg.OrderExpiry <= 0 {
		return Config{}, fmt.Errorf("ORDER_EXPIRY: want a positive duration like 30m, got %q", get("ORDER_EXPIRY", ""))
	}
	if cfg.TrustedProxies, err = parseTrustedProxies(get("TRUSTED_PROXIES", "")); err != nil {
		return Config{}, err
	}
	cfg.WalletEnabled = get("WALLET_ENABLED", "true") != "false"
	cfg.Stripe = StripeConfig{
		SecretKey:      get("STRIPE_SECRET_KEY", ""),
		PublishableKey: get("STRIPE_PUBLISHABLE_KEY", ""),
		WebhookSecret:  get("STRIPE_WEBHOOK_SECRET", ""),
		APIBase:        strings.TrimRight(get("STRIPE_API_BASE", ""), "/"),
	}
	cfg.PayPal = PayPalConfig{
		ClientID:     get("PAYPAL_CLIENT_ID", ""),
		ClientSecret: get("PAYPAL_CLIENT_SECRET", ""),
		APIBase:      strings.TrimRight(get("PAYPAL_API_BASE", PayPalSandbox), "/"),
		WebhookID:    get("PAYPAL_WEBHOOK_ID", ""),
	}
	return cfg, nil
}

// SecureCookies is true when the site is served over https.
func (c Config) SecureCookies() bool { return strings.HasPrefix(c.PublicURL, "https://") }

// parseTrustedProxies reads TRUSTED_PROXIES: CIDRs ("10.0.0.0/8") or single
// addresses ("127.0.0.1"), comma-separated.
func parseTrustedProxies(v string) ([]*net.IPNet, error) {
	var nets []*net.IPNet
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip := net.ParseIP(part)
			if ip == nil {
				return nil, fmt.Errorf("TRUSTED_PROXIES: %q is not an address or a CIDR", part)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			nets = append(nets, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("TRUSTED_PROXIES: %q is not an address or a CIDR", part)
		}
		nets = append(nets, n)
	}
	return nets, nil
}
