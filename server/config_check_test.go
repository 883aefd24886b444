package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every mistake an operator can make in the environment stops the start
// with one line naming the variable, and no line repeats a secret.
func TestConfigRefusesMistakes(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	cases := []struct {
		env  map[string]string
		want string // in the error
	}{
		{map[string]string{"DATABASE_URL": "Postgres://u:" + secret + "@db/marquee"}, "DATABASE_URL"},
		{map[string]string{"DATABASE_URL": "postgres:/u:" + secret + "@db/marquee"}, "DATABASE_URL"},
		{map[string]string{"DATABASE_URL": "postgres://u:" + secret + "@db:54x2/marquee"}, "DATABASE_URL"},
		{map[string]string{"DATABASE_URL": "postgres://u:" + secret + "@db:5432"}, "DATABASE_URL"},
		{map[string]string{"DATABASE_URL": "mysql://u:" + secret + "@db/marquee"}, "DATABASE_URL"},
		{map[string]string{"REDIS_URL": "redis://:" + secret + "@cache:63x9/0"}, "REDIS_URL"},
		{map[string]string{"REDIS_URL": "cache:6379"}, "REDIS_URL"},
		{map[string]string{"PORT": "80a"}, "PORT"},
		{map[string]string{"AUTH_PORT": "70000"}, "AUTH_PORT"},
		{map[string]string{"WALLET_ENABLED": "maybe"}, "WALLET_ENABLED"},
		{map[string]string{"PAYPAL_PLATFORM_FEES": "true"}, "PAYPAL_BN_CODE"},
		{map[string]string{"S3_USE_SSL": "yes please"}, "S3_USE_SSL"},
		{map[string]string{"S3_ENDPOINT": "minio:9000", "S3_ACCESS_KEY": "k", "S3_SECRET_KEY": secret}, "S3_BUCKET"},
		{map[string]string{"STRIPE_SECRET_KEY": "pk_test_abc", "STRIPE_PUBLISHABLE_KEY": "sk_test_" + secret}, "STRIPE_PUBLISHABLE_KEY"},
		{map[string]string{"STRIPE_SECRET_KEY": "sk_live_" + secret}, "STRIPE_PUBLISHABLE_KEY"},
		{map[string]string{"STRIPE_SECRET_KEY": "sk_live_" + secret, "STRIPE_PUBLISHABLE_KEY": "pk_test_abc"}, "live"},
		{map[string]string{"PAYPAL_CLIENT_ID": "id"}, "PAYPAL_CLIENT_SECRET"},
		{map[string]string{"PUBLIC_URL": "example.com"}, "PUBLIC_URL"},
		{map[string]string{"BIND_ADDRESS": "localhost:80"}, "BIND_ADDRESS"},
		{map[string]string{"DB_MAX_CONNS": "0"}, "DB_MAX_CONNS"},
		{map[string]string{"REDIS_POOL_SIZE": "-1"}, "REDIS_POOL_SIZE"},
		{map[string]string{"REDIS_POOL_SIZE": "lots"}, "REDIS_POOL_SIZE"},
		{map[string]string{"MIGRATION_LOCK_TIMEOUT": "5"}, "MIGRATION_LOCK_TIMEOUT"},
		{map[string]string{"DB_CONNECT_TIMEOUT": "3"}, "DB_CONNECT_TIMEOUT"},
		{map[string]string{"DB_QUERY_TIMEOUT": "-1s"}, "DB_QUERY_TIMEOUT"},
		{map[string]string{"NOTIFICATION_RETENTION": "90d"}, "NOTIFICATION_RETENTION"},
		{map[string]string{"JOB_RETENTION": "0s"}, "JOB_RETENTION"},
		{map[string]string{"DOWNLOAD_MAX_MB": "2GB"}, "DOWNLOAD_MAX_MB"},
		{map[string]string{"DOWNLOAD_PART_MB": "4"}, "DOWNLOAD_PART_MB"},
		{map[string]string{"SECRET_KEY": secret, "SECRET_KEY_FILE": "/nonexistent"}, "SECRET_KEY"},
		{map[string]string{"STRIPE_SECRET_KEY_FILE": "/nonexistent/" + "key"}, "STRIPE_SECRET_KEY_FILE"},
	}
	for _, tc := range cases {
		_, err := LoadConfig(func(k string) string { return tc.env[k] })
		if err == nil {
			t.Errorf("%v accepted", tc.env)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
			t.Errorf("%v: %q (want one line naming %s, no secret)", tc.env, msg, tc.want)
		}
	}
}

func TestConfigAcceptsWhatIsRight(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "stripe-key")
	if err := os.WriteFile(keyFile, []byte("sk_test_fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"DATABASE_URL": "postgres://marquee:pw@db.internal:5432/marquee?sslmode=disable", "REDIS_URL": "redis://cache:6379/1",
		"WALLET_ENABLED": "no", "S3_USE_SSL": "1", "BIND_ADDRESS": "127.0.0.1", "DB_MAX_CONNS": "40",
		"REDIS_POOL_SIZE": "25", "MIGRATION_LOCK_TIMEOUT": "90s", "DOWNLOAD_MAX_MB": "4096", "DOWNLOAD_PART_MB": "16",
		"STRIPE_SECRET_KEY_FILE": keyFile, "STRIPE_PUBLISHABLE_KEY": "pk_test_abc",
		"S3_ENDPOINT": "minio:9000", "S3_BUCKET": "media", "S3_ACCESS_KEY": "k", "S3_SECRET_KEY": "s",
	}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WalletEnabled || !cfg.S3.UseSSL || cfg.BindAddress != "127.0.0.1" || cfg.DBMaxConns != 40 || cfg.RedisPoolSize != 25 || cfg.MigrationLockTimeout != 90*time.Second ||
		cfg.Stripe.SecretKey != "sk_test_fromfile" || !cfg.S3.Enabled() || cfg.DownloadMaxBytes != 4<<30 || cfg.DownloadPartBytes != 16<<20 {
		t.Errorf("parsed %+v", cfg)
	}
	for _, path := range []string{"data/marquee.db", "/var/lib/marquee/m.db", "sqlite:///tmp/m.db", "file:m.db", "C:/m.db"} {
		if _, err := LoadConfig(func(k string) string { return map[string]string{"DATABASE_URL": path}[k] }); err != nil {
			t.Errorf("SQLite path %s refused: %v", path, err)
		}
	}
}

// APP_ENV=production refuses what a production deployment cannot mean
// (issue 41 item 11), each with one line naming the setting and no
// secret; the same settings start without it.
func TestProductionRefusesWhatCannotBeMeant(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-hunter2"
	long := strings.Repeat("k", 32)
	dir := t.TempDir()
	emptyFile := filepath.Join(dir, "empty")
	if err := os.WriteFile(emptyFile, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		"APP_ENV": "production", "DATABASE_URL": "postgres://m:pw@db:5432/marquee", "SECRET_KEY": long, "METRICS_TOKEN": long,
		"PUBLIC_URL": "https://example.com", "AUTH_URL": "https://auth.example.com", "COOKIE_DOMAIN": ".example.com",
		"TRUSTED_PROXIES": "127.0.0.1,10.0.0.0/8", "PUSH_SUBSCRIBER": "mailto:ops@example.com",
		"STRIPE_SECRET_KEY": "sk_test_abc", "STRIPE_PUBLISHABLE_KEY": "pk_test_abc", "STRIPE_WEBHOOK_SECRET": "whsec_abc",
	}
	with := func(changes map[string]string) map[string]string {
		env := map[string]string{}
		for k, v := range good {
			env[k] = v
		}
		for k, v := range changes {
			env[k] = v
		}
		return env
	}
	load := func(env map[string]string) (Config, error) {
		return LoadConfig(func(k string) string { return env[k] })
	}
	if _, err := load(good); err != nil {
		t.Fatalf("good production settings refused: %v", err)
	}
	for _, db := range []string{"sqlite:///var/lib/marquee/m.db", "/var/lib/marquee/m.db", "file:/var/lib/marquee/m.db"} {
		if _, err := load(with(map[string]string{"DATABASE_URL": db})); err != nil {
			t.Errorf("SQLite asked for by %s refused: %v", db, err)
		}
	}
	cases := []struct {
		env  map[string]string
		want string
	}{
		{with(map[string]string{"DATABASE_URL": ""}), "DATABASE_URL"},
		{with(map[string]string{"DATABASE_URL": "db.internal:5432/marquee"}), "DATABASE_URL"},
		{with(map[string]string{"DATABASE_URL": "data/marquee.db"}), "DATABASE_URL"},
		{with(map[string]string{"DATABASE_URL": "", "DATABASE_URL_FILE": emptyFile}), "DATABASE_URL_FILE"},
		{with(map[string]string{"SECRET_KEY": secret}), "SECRET_KEY"},
		{with(map[string]string{"METRICS_TOKEN": secret}), "METRICS_TOKEN"},
		{with(map[string]string{"TRUSTED_PROXIES": "127.0.0.1,0.0.0.0/0"}), "TRUSTED_PROXIES"},
		{with(map[string]string{"TRUSTED_PROXIES": "::/0"}), "TRUSTED_PROXIES"},
		{with(map[string]string{"COOKIE_DOMAIN": ".example.org"}), "COOKIE_DOMAIN"},
		{with(map[string]string{"COOKIE_DOMAIN": "ample.com"}), "COOKIE_DOMAIN"},
		{with(map[string]string{"AUTH_URL": "https://auth.example.net"}), "COOKIE_DOMAIN"},
		{with(map[string]string{"PUSH_SUBSCRIBER": "ops@example.com"}), "PUSH_SUBSCRIBER"},
		{with(map[string]string{"PUSH_SUBSCRIBER": "http://example.com/contact"}), "PUSH_SUBSCRIBER"},
		{with(map[string]string{"STRIPE_WEBHOOK_SECRET": ""}), "STRIPE_WEBHOOK_SECRET"},
		{with(map[string]string{"APP_ENV": "prod"}), "APP_ENV"},
	}
	for _, tc := range cases {
		_, err := load(tc.env)
		if err == nil {
			t.Errorf("production accepted %v", tc.env)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
			t.Errorf("%v: %q (want one line naming %s, no secret)", tc.env, msg, tc.want)
		}
		// Outside production the same settings start (APP_ENV itself aside).
		if tc.want == "APP_ENV" || tc.want == "DATABASE_URL_FILE" {
			continue
		}
		dev := with(tc.env)
		dev["APP_ENV"] = ""
		if _, err := load(dev); err != nil {
			t.Errorf("development refused %v: %v", tc.env, err)
		}
	}
}

// The mail and media folders are checked at start (any APP_ENV): one that
// cannot be written stops the start naming it.
func TestFoldersMustBeWritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Config{MailDir: filepath.Join(dir, "mail"), MediaDir: filepath.Join(dir, "media")}
	if err := ok.CheckFolders(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ok.MailDir, ok.MediaDir} {
		if entries, err := os.ReadDir(d); err != nil || len(entries) != 0 {
			t.Errorf("%s: %v %v (want created and left empty)", d, entries, err)
		}
	}
	bad := filepath.Join(blocker, "sub")
	for name, cfg := range map[string]Config{
		"MAIL_DIR":  {MailDir: bad, MediaDir: ok.MediaDir},
		"MEDIA_DIR": {MailDir: ok.MailDir, MediaDir: bad},
	} {
		err := cfg.CheckFolders()
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s unwritable: %v", name, err)
		}
	}
	// Folders the configuration does not write to are not checked.
	elsewhere := Config{MailDir: bad, SMTPURL: "smtp://mail:587", MediaDir: bad, S3: S3Config{Endpoint: "s3:9000", Bucket: "b"}}
	if err := elsewhere.CheckFolders(); err != nil {
		t.Errorf("SMTP and S3: %v", err)
	}
}
