package server

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/certmagic"

	"marquee/server/auth"
	"marquee/server/mail"
	"marquee/server/payments/paypal"
)

// Config comes from the environment; every field has a default that runs the
// product on one machine with no other servers.
type Config struct {
	// Production (APP_ENV=production) refuses at start what a production
	// deployment cannot mean (checkProduction): an implicit SQLite file,
	// short secrets, a proxy list trusting everyone, a cookie domain the
	// site is not on, a push contact that is not mailto:/https:, Stripe
	// keys without their webhook secret.
	Production bool
	// DisableSelfServe keeps app creation to the CLI (SELF_SERVE_APPS=false;
	// by default a signed-in user may create an app from /apps).
	DisableSelfServe bool
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
	// DownloadTypes lists the file extensions a DIGITAL item may deliver
	// (DOWNLOAD_TYPES, comma separated; empty means defaultDownloadTypes).
	DownloadTypes string
	// DownloadMaxBytes (DOWNLOAD_MAX_MB, default 2048) is the largest file
	// a DIGITAL item may deliver; DownloadPartBytes (DOWNLOAD_PART_MB,
	// default 8, at least 5 as S3 wants) is the part size of a resumable
	// upload. Zero means the default (tests).
	DownloadMaxBytes  int64
	DownloadPartBytes int64
	// Custom domains (issue 42 item 3): CustomDomainTarget
	// (CUSTOM_DOMAIN_TARGET, default PUBLIC_URL's host) is the host a
	// creator's CNAME points at; CustomDomainIPs (CUSTOM_DOMAIN_IPS, comma
	// separated) the addresses of the A/AAAA records offered instead.
	// DNSResolver (DNS_RESOLVER, host:port, default the system's) is the
	// DNS server asked for the ownership TXT record, DNSTimeout
	// (DNS_TIMEOUT, default 5s) bounds one check.
	CustomDomainTarget string
	CustomDomainIPs    []string
	// Certificates for custom domains (issue 42 item 4): with TLSACME
	// (TLS_ACME=true) the server obtains them through ACME on demand, for
	// verified domains only, from ACMECA (ACME_CA, the CA's directory URL,
	// default Let's Encrypt's), with ACMEEmail (ACME_EMAIL) on the account,
	// and serves HTTPS on TLSAddr (TLS_ADDR, default :443). ACMECARoots
	// (ACME_CA_ROOT, a PEM file) are trusted for the CA's own HTTPS (a
	// test CA); nil is the system's roots.
	TLSACME     bool
	TLSAddr     string
	ACMECA      string
	ACMEEmail   string
	ACMECARoots *x509.CertPool
	// acmeOnly, in tests, leaves one challenge type: "http-01" or
	// "tls-alpn-01" (certmagic otherwise picks either).
	acmeOnly    string
	DNSResolver string
	DNSTimeout  time.Duration
	// PasswordCost is what hashing a new password costs; zero is the
	// production cost (auth.PasswordCost). Tests lower it; never set from
	// the environment.
	PasswordCost auth.PasswordCost
	// CookieDomain lets the main and auth hosts share the session cookie in
	// production (e.g. ".example.com"); empty means host-only.
	CookieDomain string
	// PushAllowLoopbackHTTP accepts http://127.0.0.1 push endpoints (tests
	// run a local push receiver); never set from the environment.
	PushAllowLoopbackHTTP bool
	// ServiceWorkerFile is the service worker's script (service_worker.go):
	// "" is public/sw.js in the working directory, as the server runs; tests
	// name the repository's, run from another folder. Never set from the
	// environment.
	ServiceWorkerFile string
	// BindAddress (BIND_ADDRESS) is the interface both sites listen on;
	// empty means every interface.
	BindAddress string
	// DBMaxConns (DB_MAX_CONNS, default 20) caps the PostgreSQL pool.
	DBMaxConns int
	// DBConnectTimeout (DB_CONNECT_TIMEOUT, default 3s) bounds opening one
	// PostgreSQL connection, handshake included; DBQueryTimeout
	// (DB_QUERY_TIMEOUT, default 10s) bounds waiting for one answer on it.
	// A database that accepts connections and never answers (black-holed)
	// costs a request these, then 503s at once while it stays so.
	DBConnectTimeout time.Duration
	DBQueryTimeout   time.Duration
	// DBRequestTimeout (DB_REQUEST_TIMEOUT, default 3s) bounds each
	// database call of a web request instead of DBQueryTimeout, so a
	// connection that stalls after it was opened holds a request this
	// long, then 503 (store.WithQueryBudget). Jobs and the CLI keep
	// DBQueryTimeout. Zero (tests) leaves requests at DBQueryTimeout.
	DBRequestTimeout time.Duration
	// DBMaxIdleTime (DB_MAX_IDLE_TIME, default 1m): a PostgreSQL connection
	// unused this long is closed, so idle instances hold few.
	DBMaxIdleTime time.Duration
	// NotificationRetention (NOTIFICATION_RETENTION, default 2160h = 90
	// days): the hourly prune deletes older notifications and failed push
	// deliveries; expired sessions go too. JobRetention (JOB_RETENTION,
	// default 24h): how long finished jobs stay in river_job.
	NotificationRetention time.Duration
	// IdleTimeout (HTTP_IDLE_TIMEOUT, default 75s) is how long a kept-alive
	// connection may sit idle before the server closes it: longer than the
	// proxy's own (nginx's upstream keepalive_timeout, 60s in deploy/), so
	// the proxy always closes first and never reuses a connection the
	// server is closing at that moment (a 502).
	IdleTimeout  time.Duration
	JobRetention time.Duration
	// RedisPoolSize (REDIS_POOL_SIZE, default 10 per CPU as go-redis)
	// caps the Redis connections of one process; 0 keeps go-redis's default.
	RedisPoolSize int
	// MigrationLockTimeout (MIGRATION_LOCK_TIMEOUT, default 5m) is how
	// long a start waits for another process's migrations.
	MigrationLockTimeout time.Duration
	// AllowNewerSchema (ALLOW_NEWER_SCHEMA, default false) lets a binary
	// start on a database migrated by a newer one (a rollback whose
	// schema the operator has checked); otherwise it refuses to start.
	AllowNewerSchema bool
	// TrustedProxies (TRUSTED_PROXIES, comma-separated CIDRs or addresses)
	// are the reverse proxies whose X-Forwarded-For names the client; empty
	// means the connection's address is the client (no proxy is believed).
	TrustedProxies []*net.IPNet
	// MetricsToken (METRICS_TOKEN) is the bearer token /metrics asks for;
	// unset, /metrics answers loopback connections only.
	MetricsToken string
	// PushSubscriber is the VAPID contact (PUSH_SUBSCRIBER, mailto: or https:).
	PushSubscriber string
	// OrderExpiry is how long an unpaid order holds its stock before it is
	// cancelled (ORDER_EXPIRY, a Go duration, default 30m).
	OrderExpiry time.Duration
	// PublishInterval is how often due scheduled posts are looked for
	// (PUBLISH_INTERVAL, a Go duration, default 15s): a post goes out at
	// most this late.
	PublishInterval time.Duration
	// RenderTimeout bounds one page render (RENDER_TIMEOUT, default 3s);
	// past it the visitor gets the fallback page with 503 and Retry-After.
	RenderTimeout time.Duration
	// PageCacheMB (PAGE_CACHE_MB, default 64) bounds the memory the page
	// cache holds; PageCacheDiskMB (PAGE_CACHE_DISK_MB, default 256, 0 for
	// none) the pages it spills to disk without Redis (in a directory of
	// its own under PageCacheDir, PAGE_CACHE_DIR, default the system's
	// temporary directory). Zero PageCacheMB means the default (tests).
	PageCacheMB     int
	PageCacheDiskMB int
	PageCacheDir    string
	// RenderAhead (RENDER_AHEAD, default true) renders an app's visitor
	// landing and community page in a job after each write that changes
	// its content, into the page cache's second tier, so that their first
	// visitor does not wait for a render (page_render.go). The zero Config
	// (tests) leaves it off.
	RenderAhead bool
	// WalletEnabled turns the member wallet payment method on (WALLET_ENABLED,
	// default true).
	WalletEnabled bool
	// WalletTopupAmounts are the amounts (minor units) a member may add to
	// their wallet by card or PayPal (WALLET_TOPUP_AMOUNTS, whole dollars,
	// default 10,25,50,100); nil is the default.
	WalletTopupAmounts []int64
	Stripe             StripeConfig
	PayPal             PayPalConfig
	// PayoutsRequired (PAYOUTS_REQUIRED, default true) offers card
	// payments of an app only once its Stripe Connect account can take
	// charges; false sends them to the platform's own Stripe account
	// while the app has none. The zero Config (tests) leaves it off.
	PayoutsRequired bool
	// PlatformFeeBP is the platform's fee on every payment in basis
	// points (PLATFORM_FEE_PERCENT, default 0, up to two decimals); the
	// operator may set another per app (marquee payouts fee).
	PlatformFeeBP int64
	// DrainDelay is how long a shutdown keeps serving after /healthz turned
	// 503, so load balancers stop sending before the listeners close.
	DrainDelay time.Duration
	// MaxInFlight caps requests handled at once (MAX_IN_FLIGHT; 0 is 64
	// per CPU); more wait up to InFlightWait, then answer 503 (inflight.go).
	MaxInFlight  int64
	InFlightWait time.Duration
	// SMTPURL (SMTP_URL) is where mail is sent; empty writes .eml files to
	// MailDir (MAIL_DIR, default data/mail). MailFrom (MAIL_FROM) is the
	// operator's sender address; each app's display name is its name.
	SMTPURL  string
	MailFrom string
	MailDir  string
	// NewsletterRate (NEWSLETTER_RATE, default 20) is how many newsletter
	// mails the deployment sends a second, all instances together; 0
	// sends as fast as the SMTP server takes them.
	NewsletterRate float64
	// RequireVerifiedEmail (REQUIRE_VERIFIED_EMAIL, default true) keeps
	// members whose address is not verified from paying, posting and
	// donating. The zero Config (tests) leaves it off.
	RequireVerifiedEmail bool
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
	// ConnectWebhookSecret signs the Connect endpoint's events
	// (STRIPE_CONNECT_WEBHOOK_SECRET): a Connect endpoint is a webhook
	// endpoint of its own in Stripe, with its own secret.
	ConnectWebhookSecret string
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
	// PlatformFees (PAYPAL_PLATFORM_FEES, default false): the operator's
	// PayPal account is a partner allowed to take platform fees, so an
	// order paid to a creator's PayPal carries the fee in
	// payment_instruction.platform_fees; otherwise the fee is recorded as
	// owed by the creator. The fee is the app's platform fee
	// (PLATFORM_FEE_PERCENT or the app's own, store.PlatformFee).
	PlatformFees bool
	// BNCode (PAYPAL_BN_CODE) is the platform's PayPal partner attribution
	// id, sent as PayPal-Partner-Attribution-Id on orders that name a
	// creator's payee. Without it no payee is named (PayPal requires it of
	// platforms) and PAYPAL_PLATFORM_FEES cannot be on.
	BNCode string
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
	// Secrets may come from files (NAME_FILE, as Docker and systemd
	// credentials provide them); a file that cannot be read is an error.
	var fileErr error
	get := func(key, def string) string {
		v := strings.TrimSpace(getenv(key))
		if path := strings.TrimSpace(getenv(key + "_FILE")); path != "" && secretVariables[key] {
			if v != "" && fileErr == nil {
				fileErr = fmt.Errorf("%s and %s_FILE are both set: keep one", key, key)
			}
			b, err := os.ReadFile(path)
			if err != nil && fileErr == nil {
				fileErr = fmt.Errorf("%s_FILE: cannot read %s: %w", key, path, errors.Unwrap(err))
			}
			v = strings.TrimSpace(string(b))
			if err == nil && v == "" && fileErr == nil {
				// An empty secret file is a mistake, never "use the
				// default" (an empty DATABASE_URL_FILE started on a new
				// SQLite file).
				fileErr = fmt.Errorf("%s_FILE: %s is empty", key, path)
			}
		}
		if v != "" {
			return v
		}
		return def
	}
	port, err := parsePort("PORT", get("PORT", "3000"))
	if err != nil {
		return Config{}, err
	}
	authPort, err := parsePort("AUTH_PORT", get("AUTH_PORT", "3002"))
	if err != nil {
		return Config{}, err
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
		},
		PublicURL:      strings.TrimRight(get("PUBLIC_URL", fmt.Sprintf("http://localhost:%d", port)), "/"),
		AuthURL:        strings.TrimRight(get("AUTH_URL", fmt.Sprintf("http://localhost:%d", authPort)), "/"),
		SecretKey:      get("SECRET_KEY", ""),
		PushSubscriber: get("PUSH_SUBSCRIBER", ""),
		CookieDomain:   get("COOKIE_DOMAIN", ""),
		MetricsToken:   get("METRICS_TOKEN", ""),
		DownloadTypes:  get("DOWNLOAD_TYPES", ""),
	}
	cfg.publicURLFromPort = strings.TrimSpace(getenv("PUBLIC_URL")) == ""
	switch env := strings.ToLower(get("APP_ENV", "development")); env {
	case "production":
		cfg.Production = true
	case "development", "test":
	default:
		return Config{}, fmt.Errorf("APP_ENV: want production or development, got %q", env)
	}
	// Whether DATABASE_URL was given at all (an empty secret file is an
	// error above): production never starts on the default SQLite file.
	databaseGiven := strings.TrimSpace(getenv("DATABASE_URL")) != "" || strings.TrimSpace(getenv("DATABASE_URL_FILE")) != ""
	cfg.authURLFromPort = strings.TrimSpace(getenv("AUTH_URL")) == ""
	if cfg.MaxInFlight, err = strconv.ParseInt(get("MAX_IN_FLIGHT", "0"), 10, 64); err != nil || cfg.MaxInFlight < 0 {
		return Config{}, fmt.Errorf("MAX_IN_FLIGHT: want a number of requests, got %q", get("MAX_IN_FLIGHT", ""))
	}
	cfg.OrderExpiry, err = time.ParseDuration(get("ORDER_EXPIRY", "30m"))
	if err != nil || cfg.OrderExpiry <= 0 {
		return Config{}, fmt.Errorf("ORDER_EXPIRY: want a positive duration like 30m, got %q", get("ORDER_EXPIRY", ""))
	}
	cfg.PublishInterval, err = time.ParseDuration(get("PUBLISH_INTERVAL", "15s"))
	if err != nil || cfg.PublishInterval <= 0 {
		return Config{}, fmt.Errorf("PUBLISH_INTERVAL: want a positive duration like 15s, got %q", get("PUBLISH_INTERVAL", ""))
	}
	cfg.RenderTimeout, err = time.ParseDuration(get("RENDER_TIMEOUT", "3s"))
	if err != nil || cfg.RenderTimeout <= 0 {
		return Config{}, fmt.Errorf("RENDER_TIMEOUT: want a positive duration like 3s, got %q", get("RENDER_TIMEOUT", ""))
	}
	for _, d := range []struct {
		name, def string
		min, max  int64
		to        *int64
	}{{"DOWNLOAD_MAX_MB", "2048", 1, 5 << 20, &cfg.DownloadMaxBytes}, {"DOWNLOAD_PART_MB", "8", 5, 512, &cfg.DownloadPartBytes}} {
		mb, err := strconv.ParseInt(get(d.name, d.def), 10, 64)
		if err != nil || mb < d.min || mb > d.max {
			return Config{}, fmt.Errorf("%s: want a number of megabytes from %d to %d, got %q", d.name, d.min, d.max, get(d.name, ""))
		}
		*d.to = mb << 20
	}
	if cfg.TrustedProxies, err = parseTrustedProxies(get("TRUSTED_PROXIES", "")); err != nil {
		return Config{}, err
	}
	if cfg.RenderAhead, err = parseSwitch("RENDER_AHEAD", get("RENDER_AHEAD", "true")); err != nil {
		return Config{}, err
	}
	if cfg.WalletEnabled, err = parseSwitch("WALLET_ENABLED", get("WALLET_ENABLED", "true")); err != nil {
		return Config{}, err
	}
	selfServe, err := parseSwitch("SELF_SERVE_APPS", get("SELF_SERVE_APPS", "true"))
	if err != nil {
		return Config{}, err
	}
	cfg.DisableSelfServe = !selfServe
	if cfg.S3.UseSSL, err = parseSwitch("S3_USE_SSL", get("S3_USE_SSL", "false")); err != nil {
		return Config{}, err
	}
	cfg.SMTPURL, cfg.MailDir = get("SMTP_URL", ""), get("MAIL_DIR", "data/mail")
	cfg.MailFrom = get("MAIL_FROM", "Marquee <no-reply@marquee.invalid>")
	if cfg.NewsletterRate, err = strconv.ParseFloat(get("NEWSLETTER_RATE", "20"), 64); err != nil || cfg.NewsletterRate < 0 {
		return Config{}, fmt.Errorf("NEWSLETTER_RATE: want mails per second (a number, 0 for no limit)")
	}
	if cfg.RequireVerifiedEmail, err = parseSwitch("REQUIRE_VERIFIED_EMAIL", get("REQUIRE_VERIFIED_EMAIL", "true")); err != nil {
		return Config{}, err
	}
	if cfg.AllowNewerSchema, err = parseSwitch("ALLOW_NEWER_SCHEMA", get("ALLOW_NEWER_SCHEMA", "false")); err != nil {
		return Config{}, err
	}
	cfg.BindAddress = get("BIND_ADDRESS", "")
	if cfg.BindAddress != "" && net.ParseIP(cfg.BindAddress) == nil {
		return Config{}, fmt.Errorf("BIND_ADDRESS: want an IP address such as 127.0.0.1, got %q", cfg.BindAddress)
	}
	if cfg.PageCacheMB, err = strconv.Atoi(get("PAGE_CACHE_MB", "64")); err != nil || cfg.PageCacheMB < 1 {
		return Config{}, fmt.Errorf("PAGE_CACHE_MB: want a number of megabytes, at least 1, got %q", get("PAGE_CACHE_MB", ""))
	}
	if cfg.PageCacheDiskMB, err = strconv.Atoi(get("PAGE_CACHE_DISK_MB", "256")); err != nil || cfg.PageCacheDiskMB < 0 {
		return Config{}, fmt.Errorf("PAGE_CACHE_DISK_MB: want a number of megabytes (0 for none), got %q", get("PAGE_CACHE_DISK_MB", ""))
	}
	cfg.PageCacheDir = get("PAGE_CACHE_DIR", "")
	cfg.CustomDomainTarget = strings.TrimSuffix(strings.ToLower(get("CUSTOM_DOMAIN_TARGET", "")), ".")
	for _, ip := range strings.Split(get("CUSTOM_DOMAIN_IPS", ""), ",") {
		if ip = strings.TrimSpace(ip); ip == "" {
			continue
		}
		if net.ParseIP(ip) == nil {
			return Config{}, fmt.Errorf("CUSTOM_DOMAIN_IPS: want IP addresses separated by commas, got %q", ip)
		}
		cfg.CustomDomainIPs = append(cfg.CustomDomainIPs, ip)
	}
	if cfg.TLSACME, err = parseSwitch("TLS_ACME", get("TLS_ACME", "false")); err != nil {
		return Config{}, err
	}
	cfg.TLSAddr, cfg.ACMECA, cfg.ACMEEmail = get("TLS_ADDR", ":443"), get("ACME_CA", certmagic.LetsEncryptProductionCA), get("ACME_EMAIL", "")
	if _, _, err := net.SplitHostPort(cfg.TLSAddr); err != nil {
		return Config{}, fmt.Errorf("TLS_ADDR: want [host]:port such as :443, got %q", cfg.TLSAddr)
	}
	if u, err := url.Parse(cfg.ACMECA); err != nil || u.Scheme != "https" || u.Host == "" {
		return Config{}, fmt.Errorf("ACME_CA: want the https URL of an ACME directory, got %q", cfg.ACMECA)
	}
	if root := get("ACME_CA_ROOT", ""); root != "" {
		pem, err := os.ReadFile(root)
		if err != nil {
			return Config{}, fmt.Errorf("ACME_CA_ROOT: %w", err)
		}
		cfg.ACMECARoots = x509.NewCertPool()
		if !cfg.ACMECARoots.AppendCertsFromPEM(pem) {
			return Config{}, fmt.Errorf("ACME_CA_ROOT: %s holds no PEM certificate", root)
		}
	}
	cfg.DNSResolver = get("DNS_RESOLVER", "")
	if cfg.DNSResolver != "" {
		if _, _, err := net.SplitHostPort(cfg.DNSResolver); err != nil {
			return Config{}, fmt.Errorf("DNS_RESOLVER: want host:port of a DNS server such as 1.1.1.1:53, got %q", cfg.DNSResolver)
		}
	}
	if cfg.DBMaxConns, err = strconv.Atoi(get("DB_MAX_CONNS", "20")); err != nil || cfg.DBMaxConns < 1 || cfg.DBMaxConns > 1000 {
		return Config{}, fmt.Errorf("DB_MAX_CONNS: want a number of connections from 1 to 1000, got %q", get("DB_MAX_CONNS", ""))
	}
	for _, d := range []struct {
		name, def string
		to        *time.Duration
	}{{"DB_CONNECT_TIMEOUT", "3s", &cfg.DBConnectTimeout}, {"DB_QUERY_TIMEOUT", "10s", &cfg.DBQueryTimeout}, {"DB_REQUEST_TIMEOUT", "3s", &cfg.DBRequestTimeout}, {"DB_MAX_IDLE_TIME", "1m", &cfg.DBMaxIdleTime},
		{"NOTIFICATION_RETENTION", "2160h", &cfg.NotificationRetention}, {"JOB_RETENTION", "24h", &cfg.JobRetention},
		{"HTTP_IDLE_TIMEOUT", "75s", &cfg.IdleTimeout}, {"DNS_TIMEOUT", "5s", &cfg.DNSTimeout}} {
		if *d.to, err = time.ParseDuration(get(d.name, d.def)); err != nil || *d.to <= 0 {
			return Config{}, fmt.Errorf("%s: want a positive duration such as %s, got %q", d.name, d.def, get(d.name, ""))
		}
	}
	if cfg.RedisPoolSize, err = strconv.Atoi(get("REDIS_POOL_SIZE", "0")); err != nil || cfg.RedisPoolSize < 0 || cfg.RedisPoolSize > 10000 {
		return Config{}, fmt.Errorf("REDIS_POOL_SIZE: want a number of connections from 1 to 10000 (0 for 10 per CPU), got %q", get("REDIS_POOL_SIZE", ""))
	}
	cfg.MigrationLockTimeout, err = time.ParseDuration(get("MIGRATION_LOCK_TIMEOUT", "5m"))
	if err != nil || cfg.MigrationLockTimeout <= 0 {
		return Config{}, fmt.Errorf("MIGRATION_LOCK_TIMEOUT: want a positive duration such as 5m, got %q", get("MIGRATION_LOCK_TIMEOUT", ""))
	}
	cfg.Stripe = StripeConfig{
		SecretKey:            get("STRIPE_SECRET_KEY", ""),
		PublishableKey:       get("STRIPE_PUBLISHABLE_KEY", ""),
		WebhookSecret:        get("STRIPE_WEBHOOK_SECRET", ""),
		ConnectWebhookSecret: get("STRIPE_CONNECT_WEBHOOK_SECRET", ""),
		APIBase:              strings.TrimRight(get("STRIPE_API_BASE", ""), "/"),
	}
	cfg.PayPal = PayPalConfig{
		ClientID:     get("PAYPAL_CLIENT_ID", ""),
		ClientSecret: get("PAYPAL_CLIENT_SECRET", ""),
		APIBase:      strings.TrimRight(get("PAYPAL_API_BASE", PayPalSandbox), "/"),
		WebhookID:    get("PAYPAL_WEBHOOK_ID", ""),
		BNCode:       get("PAYPAL_BN_CODE", ""),
	}
	if cfg.PayoutsRequired, err = parseSwitch("PAYOUTS_REQUIRED", get("PAYOUTS_REQUIRED", "true")); err != nil {
		return Config{}, err
	}
	if cfg.PlatformFeeBP, err = ParsePercentBP(get("PLATFORM_FEE_PERCENT", "0")); err != nil {
		return Config{}, fmt.Errorf("PLATFORM_FEE_PERCENT: %w", err)
	}
	if cfg.PayPal.PlatformFees, err = parseSwitch("PAYPAL_PLATFORM_FEES", get("PAYPAL_PLATFORM_FEES", "false")); err != nil {
		return Config{}, err
	}
	appsPerDay, err := strconv.Atoi(get("APPS_PER_DAY", strconv.Itoa(DefaultAppsPerDay)))
	if err != nil || appsPerDay < 1 || appsPerDay > 10000 {
		return Config{}, fmt.Errorf("APPS_PER_DAY: want a number of apps from 1 to 10000, got %q", get("APPS_PER_DAY", ""))
	}
	cfg.Limits.Apps = Rate{appsPerDay, 24 * time.Hour}
	if cfg.Limits.PendingTopups, err = strconv.Atoi(get("WALLET_PENDING_TOPUPS", strconv.Itoa(DefaultPendingTopups))); err != nil ||
		cfg.Limits.PendingTopups < 1 || cfg.Limits.PendingTopups > 1000 {
		return Config{}, fmt.Errorf("WALLET_PENDING_TOPUPS: want a number of top-ups from 1 to 1000, got %q", get("WALLET_PENDING_TOPUPS", ""))
	}
	if cfg.WalletTopupAmounts, err = parseTopupAmounts(get("WALLET_TOPUP_AMOUNTS", "10,25,50,100")); err != nil {
		return Config{}, err
	}
	if fileErr != nil {
		return Config{}, fileErr
	}
	if err := cfg.check(); err != nil {
		return Config{}, err
	}
	if cfg.Production {
		if err := cfg.checkProduction(databaseGiven); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// minSecretBytes is the shortest SECRET_KEY or METRICS_TOKEN production
// takes: 32 random bytes cannot be guessed.
const minSecretBytes = 32

// checkProduction refuses, with APP_ENV=production, settings that start
// fine but cannot be what a production operator meant. Each message names
// the variable and never repeats its value when it is a secret.
func (c Config) checkProduction(databaseGiven bool) error {
	if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		explicit := strings.HasPrefix(c.DatabaseURL, "sqlite:") || strings.HasPrefix(c.DatabaseURL, "file:") || filepath.IsAbs(c.DatabaseURL)
		if !databaseGiven || !explicit {
			return errors.New("DATABASE_URL: APP_ENV=production starts on SQLite only when asked for by a sqlite: URL or an absolute file path; set postgres://user:password@host:port/database")
		}
	}
	if c.SecretKey != "" && len(c.SecretKey) < minSecretBytes {
		return fmt.Errorf("SECRET_KEY: APP_ENV=production wants at least %d bytes (e.g. openssl rand -hex 32), or leave it unset to have one generated", minSecretBytes)
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < minSecretBytes {
		return fmt.Errorf("METRICS_TOKEN: APP_ENV=production wants at least %d bytes (e.g. openssl rand -hex 32)", minSecretBytes)
	}
	for _, n := range c.TrustedProxies {
		if ones, _ := n.Mask.Size(); ones == 0 {
			return fmt.Errorf("TRUSTED_PROXIES: %s trusts every address, so any client could name its own address to the rate limits; list the proxies' addresses", n)
		}
	}
	if c.CookieDomain != "" {
		domain := strings.ToLower(strings.TrimPrefix(c.CookieDomain, "."))
		for _, site := range []struct{ name, url string }{{"PUBLIC_URL", c.PublicURL}, {"AUTH_URL", c.AuthURL}} {
			u, _ := url.Parse(site.url)
			host := strings.ToLower(u.Hostname())
			if host != domain && !strings.HasSuffix(host, "."+domain) {
				return fmt.Errorf("COOKIE_DOMAIN: %q does not cover %s's host %q, so browsers would drop the session cookie", c.CookieDomain, site.name, host)
			}
		}
	}
	if p := c.PushSubscriber; p != "" && !strings.HasPrefix(p, "mailto:") && !strings.HasPrefix(p, "https://") {
		return fmt.Errorf("PUSH_SUBSCRIBER: want a mailto: or https: contact, got %q", p)
	}
	if c.Stripe.SecretKey != "" && c.Stripe.WebhookSecret == "" {
		return errors.New("STRIPE_WEBHOOK_SECRET: APP_ENV=production takes STRIPE_SECRET_KEY only with the signing secret of /api/webhooks/stripe, or paid orders would never be marked paid")
	}
	return nil
}

// CheckFolders makes sure the folders serve writes to exist and can be
// written: the mail folder when mail is written as files (no SMTP_URL)
// and the media folder when media stays on disk (no S3). A folder that
// cannot be written stops the start naming it, instead of every mail
// failing later (mkdir data: permission denied).
func (c Config) CheckFolders() error {
	type folder struct{ name, path, use string }
	var folders []folder
	if c.SMTPURL == "" {
		folders = append(folders, folder{"MAIL_DIR", c.MailDir, "mails are written there without SMTP_URL"})
	}
	if !c.S3.Enabled() {
		folders = append(folders, folder{"MEDIA_DIR", c.MediaDir, "uploads are kept there without S3"})
	}
	for _, f := range folders {
		abs, err := filepath.Abs(f.path)
		if err != nil {
			abs = f.path
		}
		err = os.MkdirAll(abs, 0o755)
		if err == nil {
			var probe *os.File
			if probe, err = os.CreateTemp(abs, ".write-check-*"); err == nil {
				probe.Close()
				err = os.Remove(probe.Name())
			}
		}
		if err != nil {
			return fmt.Errorf("%s: cannot write to %s (%v): %s; make it writable by this user or set %s elsewhere", f.name, abs, err, f.use, f.name)
		}
	}
	return nil
}

// secretVariables may be given as NAME_FILE instead.
var secretVariables = map[string]bool{
	"DATABASE_URL": true, "REDIS_URL": true, "SECRET_KEY": true, "S3_ACCESS_KEY": true, "S3_SECRET_KEY": true,
	"STRIPE_SECRET_KEY": true, "STRIPE_WEBHOOK_SECRET": true, "STRIPE_CONNECT_WEBHOOK_SECRET": true, "PAYPAL_CLIENT_SECRET": true, "SMTP_URL": true,
	"METRICS_TOKEN": true,
}

// parseTopupAmounts reads WALLET_TOPUP_AMOUNTS: whole dollars or dollars
// and cents ("5,12.50,100"), each from 1 to 10,000, in minor units.
func parseTopupAmounts(v string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		cents, err := paypal.Cents(part)
		if err != nil || cents < 100 || cents > 1_000_000 {
			return nil, fmt.Errorf("WALLET_TOPUP_AMOUNTS: want amounts in dollars from 1 to 10000 separated by commas, got %q", v)
		}
		out = append(out, cents)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("WALLET_TOPUP_AMOUNTS: want at least one amount, got %q", v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func parsePort(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("%s: want a port number from 0 to 65535, got %q", name, v)
	}
	return n, nil
}

// parseSwitch reads an on/off setting; anything else is a mistake, not off.
func parseSwitch(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s: want true or false, got %q", name, v)
}

// check refuses settings that would start a server doing something else
// than the operator meant. Messages name the variable and never repeat a
// secret or a URL that may hold a password.
func (c Config) check() error {
	if c.PayPal.PlatformFees && c.PayPal.BNCode == "" {
		return errors.New("PAYPAL_PLATFORM_FEES: PayPal takes platform fees only from a partner; set PAYPAL_BN_CODE to its BN code")
	}
	if c.SMTPURL != "" {
		if _, err := mail.NewSMTP(c.SMTPURL); err != nil {
			return err
		}
	}
	if _, addr := mail.FromAddress(c.MailFrom); !strings.Contains(addr, "@") {
		return fmt.Errorf("MAIL_FROM: want an address such as \"Studio <no-reply@example.com>\"")
	}
	if err := checkDatabaseURL(c.DatabaseURL); err != nil {
		return err
	}
	if c.RedisURL != "" {
		u, err := url.Parse(c.RedisURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return errors.New("REDIS_URL: want redis://[user:password@]host:port/db (or rediss://)")
		}
		if _, err := strconv.Atoi(u.Port()); u.Port() != "" && err != nil {
			return errors.New("REDIS_URL: the port is not a number")
		}
	}
	for name, v := range map[string]string{"PUBLIC_URL": c.PublicURL, "AUTH_URL": c.AuthURL} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: want an http:// or https:// address such as https://example.com, got %q", name, v)
		}
	}
	s3Set := c.S3.Endpoint != "" || c.S3.Bucket != "" || c.S3.AccessKey != "" || c.S3.SecretKey != ""
	if s3Set && (c.S3.Endpoint == "" || c.S3.Bucket == "" || c.S3.AccessKey == "" || c.S3.SecretKey == "") {
		missing := []string{}
		for name, v := range map[string]string{"S3_ENDPOINT": c.S3.Endpoint, "S3_BUCKET": c.S3.Bucket, "S3_ACCESS_KEY": c.S3.AccessKey, "S3_SECRET_KEY": c.S3.SecretKey} {
			if v == "" {
				missing = append(missing, name)
			}
		}
		sort.Strings(missing)
		return fmt.Errorf("S3: %s not set; media would silently stay on local disk (set all four, or none)", strings.Join(missing, ", "))
	}
	if st := c.Stripe; st.SecretKey != "" || st.PublishableKey != "" {
		switch {
		case strings.HasPrefix(st.PublishableKey, "sk_") || strings.HasPrefix(st.PublishableKey, "rk_"):
			return errors.New("STRIPE_PUBLISHABLE_KEY holds a secret key (sk_/rk_...): it would be sent to every browser; swap the two keys")
		case st.SecretKey == "" || st.PublishableKey == "":
			return errors.New("STRIPE_SECRET_KEY and STRIPE_PUBLISHABLE_KEY: set both, or neither")
		case !strings.HasPrefix(st.SecretKey, "sk_") && !strings.HasPrefix(st.SecretKey, "rk_"):
			return errors.New("STRIPE_SECRET_KEY: want a secret key starting sk_ or rk_")
		case !strings.HasPrefix(st.PublishableKey, "pk_"):
			return errors.New("STRIPE_PUBLISHABLE_KEY: want a publishable key starting pk_")
		case strings.Contains(st.SecretKey, "_live_") != strings.Contains(st.PublishableKey, "_live_"):
			return errors.New("STRIPE_SECRET_KEY and STRIPE_PUBLISHABLE_KEY: one is a live key and the other a test key")
		}
	}
	if (c.PayPal.ClientID == "") != (c.PayPal.ClientSecret == "") {
		return errors.New("PAYPAL_CLIENT_ID and PAYPAL_CLIENT_SECRET: set both, or neither")
	}
	return nil
}

// checkDatabaseURL: a PostgreSQL URL must be one store.Open recognises; a
// near miss (Postgres://, postgres:/) would otherwise open an empty SQLite
// file of that name and start healthy on no data.
func checkDatabaseURL(v string) error {
	scheme, rest, hasScheme := strings.Cut(v, ":")
	if !hasScheme || len(scheme) < 2 || strings.ContainsAny(scheme, "/\\. ") {
		return nil // a SQLite file path (one letter before ':' is a Windows drive)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		if scheme != strings.ToLower(scheme) || !strings.HasPrefix(rest, "//") {
			return errors.New("DATABASE_URL: write a PostgreSQL URL as postgres://user:password@host:port/database")
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return errors.New("DATABASE_URL: want postgres://user:password@host:port/database (host and database required)")
		}
		if p := u.Port(); p != "" {
			if _, err := parsePort("DATABASE_URL port", p); err != nil {
				return errors.New("DATABASE_URL: the port is not a number from 0 to 65535")
			}
		}
		return nil
	case "sqlite", "file":
		return nil
	}
	return fmt.Errorf("DATABASE_URL: unknown scheme %q: want postgres:// or a SQLite file path", scheme)
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

// Mailer is how this configuration sends mail: SMTP_URL, or .eml files in
// MAIL_DIR.
func (c Config) Mailer() *mail.Sender {
	var t mail.Transport = &mail.Dir{Path: c.MailDir}
	if c.SMTPURL != "" {
		if smtp, err := mail.NewSMTP(c.SMTPURL); err == nil {
			t = smtp
		}
	}
	return &mail.Sender{Transport: t, From: c.MailFrom, Sites: mail.Sites{Main: c.PublicURL, Auth: c.AuthURL}, NewsletterRate: c.NewsletterRate}
}

// ParsePercentBP reads a percentage from 0 to 100 with at most two decimals
// ("5", "2.5", "12.25") into basis points.
func ParsePercentBP(v string) (int64, error) {
	v = strings.TrimSuffix(strings.TrimSpace(v), "%")
	whole, frac, _ := strings.Cut(v, ".")
	if whole == "" || len(frac) > 2 {
		return 0, fmt.Errorf("want a percentage from 0 to 100 with at most two decimals, got %q", v)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	bp, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || bp < 0 || bp > 10000 || strings.HasPrefix(whole, "-") || strings.HasPrefix(whole, "+") {
		return 0, fmt.Errorf("want a percentage from 0 to 100 with at most two decimals, got %q", v)
	}
	return bp, nil
}
