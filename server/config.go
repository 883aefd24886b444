package server

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config comes from the environment; every field has a default that runs the
// product on one machine with no other servers.
type Config struct {
	Port        int
	AuthPort    int
	DatabaseURL string
	RedisURL    string
	MediaDir    string
	S3          S3Config
	PublicURL   string
	AuthURL     string
	SecretKey   string
	// CookieDomain lets the main and auth hosts share the session cookie in
	// production (e.g. ".example.com"); empty means host-only.
	CookieDomain string
	// OrderExpiry is how long an unpaid order holds its stock before it is
	// cancelled (ORDER_EXPIRY, a Go duration, default 30m).
	OrderExpiry time.Duration
	// WalletEnabled turns the member wallet payment method on (WALLET_ENABLED,
	// default true).
	WalletEnabled bool
}

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
	cfg := Config{
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
		PublicURL:    strings.TrimRight(get("PUBLIC_URL", fmt.Sprintf("http://localhost:%d", port)), "/"),
		AuthURL:      strings.TrimRight(get("AUTH_URL", fmt.Sprintf("http://localhost:%d", authPort)), "/"),
		SecretKey:    get("SECRET_KEY", ""),
		CookieDomain: get("COOKIE_DOMAIN", ""),
	}
	cfg.OrderExpiry, err = time.ParseDuration(get("ORDER_EXPIRY", "30m"))
	if err != nil || cfg.OrderExpiry <= 0 {
		return Config{}, fmt.Errorf("ORDER_EXPIRY: want a positive duration like 30m, got %q", get("ORDER_EXPIRY", ""))
	}
	cfg.WalletEnabled = get("WALLET_ENABLED", "true") != "false"
	return cfg, nil
}

// SecureCookies is true when the site is served over https.
func (c Config) SecureCookies() bool { return strings.HasPrefix(c.PublicURL, "https://") }
