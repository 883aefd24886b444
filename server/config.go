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
	// DrainDelay is how long a shutdown keeps serving after /healthz turned
	// 503, so load balancers stop sending before the listeners close.
	DrainDelay time.Duration
	// Limits are the brute-force and write limits; zero fields take
	// DefaultLimits (tests lower them).
	Limits Limits
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
		PublicURL:    strings.TrimRight(get("PUBLIC_URL", fmt.Sprintf("http://localhost:%d", port)), "/"),
		AuthURL:      strings.TrimRight(get("AUTH_URL", fmt.Sprintf("http://localhost:%d", authPort)), "/"),
		SecretKey:    get("SECRET_KEY", ""),
		CookieDomain: get("COOKIE_DOMAIN", ""),
	}
	return cfg, nil
}

// SecureCookies is true when the site is served over https.
func (c Config) SecureCookies() bool { return strings.HasPrefix(c.PublicURL, "https://") }
