package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"marquee/server"
	"marquee/store"
	"marquee/store/storetest"
)

// TestTwoInstancesBehindNginx runs two instances behind nginx configured
// with the shipped site (deploy/nginx/marquee.conf: only the addresses,
// the ports and the certificate paths are changed) over TLS, and signs a
// member in on the auth host, buys from the store on the main host, and
// logs out, through it. Both instances answer some of it.
func TestTwoInstancesBehindNginx(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (apt-get install nginx)")
	}
	dir := t.TempDir()
	bin := testBinary(t)
	// nginx listens on Unix sockets in the test's folder, which the client
	// dials: no TCP port is picked and then bound, so no other process can
	// take it in between.
	httpsSock, httpSock := filepath.Join(dir, "https.sock"), filepath.Join(dir, "http.sock")
	mainHost, authHost, customHost := "marquee.example.com", "auth.marquee.example.com", "fans.example.test"
	mainURL, authURL := "https://"+mainHost, "https://"+authHost

	// Two serve processes, each DB_MAX_CONNS 3 and its job queue's 2.
	dbURL := storetest.URL(storetest.PostgresConns(t, 10))
	redisURL := os.Getenv("TEST_REDIS_URL")
	if redisURL == "" {
		redisURL = storetest.DefaultRedisURL
	}
	storetest.Redis(t)
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "DB_MAX_CONNS=3", "REDIS_URL="+redisURL, "S3_ENDPOINT=", "MEDIA_DIR="+filepath.Join(dir, "media"),
		"PORT=0", "AUTH_PORT=0", "PUBLIC_URL="+mainURL, "AUTH_URL="+authURL, "COOKIE_DOMAIN=.marquee.example.com",
		"TRUSTED_PROXIES=127.0.0.1", "SHUTDOWN_DELAY=0s", "BIND_ADDRESS=127.0.0.1")
	for _, args := range [][]string{{"seed-demo"}, {"wallet", "credit", "demo", "follower@demo.test", "500"},
		{"app", "domain", "add", "demo", customHost, "--verified"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	var mains, auths []string
	var logs []*syncWriter
	for i := 0; i < 2; i++ {
		cmd := exec.Command(bin, "serve")
		cmd.Env = env
		w := &syncWriter{w: &strings.Builder{}}
		logs = append(logs, w)
		startServe(t, cmd, w)
		m := regexp.MustCompile(`main_addr=(\S+) auth_addr=(\S+)`).FindStringSubmatch(w.String())
		if m == nil {
			t.Fatalf("no addresses in the log:\n%s", w)
		}
		mains, auths = append(mains, m[1]), append(auths, m[2])
	}

	// The shipped site, with this machine's addresses, ports and certificate.
	site, err := os.ReadFile("deploy/nginx/marquee.conf")
	if err != nil {
		t.Fatal(err)
	}
	cert, key := selfSigned(t, dir, mainHost, authHost)
	snippet, _ := filepath.Abs("deploy/nginx/marquee-proxy.conf")
	conf := string(site)
	for from, to := range map[string]string{
		"server 127.0.0.1:3000 ": "server " + mains[0] + " ", "server 127.0.0.1:3010 ": "server " + mains[1] + " ",
		"server 127.0.0.1:3002 ": "server " + auths[0] + " ", "server 127.0.0.1:3012 ": "server " + auths[1] + " ",
		"/etc/ssl/marquee/fullchain.pem": cert, "/etc/ssl/marquee/privkey.pem": key,
		"/etc/nginx/snippets/marquee-proxy.conf": snippet,
		"listen 443 ssl http2;":                  "listen unix:" + httpsSock + " ssl http2;",
		"listen 80;":                             "listen unix:" + httpSock + ";",
		"listen 443 ssl http2 default_server;":   "listen unix:" + httpsSock + " ssl http2 default_server;",
		"listen 80 default_server;":              "listen unix:" + httpSock + " default_server;",
	} {
		if !strings.Contains(conf, from) {
			t.Fatalf("the shipped site no longer has %q", from)
		}
		conf = strings.ReplaceAll(conf, from, to)
	}
	conf = regexp.MustCompile(`(?m)^\s*listen \[::\].*$`).ReplaceAllString(conf, "")
	if err := os.WriteFile(filepath.Join(dir, "site.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	mainConf := fmt.Sprintf(`%s
daemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    include %[2]s/site.conf;
}
`, user, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(mainConf), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(nginx, "-t", "-c", filepath.Join(dir, "nginx.conf")).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
	ng := exec.Command(nginx, "-c", filepath.Join(dir, "nginx.conf"))
	ngOut := &syncWriter{w: &strings.Builder{}}
	ng.Stdout, ng.Stderr = ngOut, ngOut
	if err := ng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ng.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = ng.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = ng.Process.Kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx:\n%s%s", ngOut, b)
			for i, l := range logs {
				t.Logf("instance %d:\n%s", i, l)
			}
		}
	})

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 20 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // our own test certificate
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", httpsSock)
			}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := func(method, u, ctype, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	waitFor(t, "nginx to answer", func() bool {
		res, err := client.Get(mainURL + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	// The demo app is on its custom domain: nginx passes any other host
	// on, both instances serve the app at the domain's root, and the main
	// host's /apps/demo sends visitors there. A host that is nobody's
	// answers 404 (never the main site, never an app).
	before := make([]int, len(logs))
	for i, l := range logs {
		before[i] = len(l.String())
	}
	for i := 0; i < 4; i++ {
		status, body := call("GET", "https://"+customHost+"/", "", "")
		if status != 200 || !strings.Contains(body, "Featured Items") || !strings.Contains(body, `rel="canonical" href="https://`+customHost) {
			t.Fatalf("the custom domain through nginx: %d %.300s", status, body)
		}
		if status, _ := call("GET", "https://"+customHost+"/community", "", ""); status != 200 {
			t.Fatalf("the custom domain's /community through nginx: %d", status)
		}
	}
	// Access lines are written within LOG_FLUSH (1s by default).
	served := regexp.MustCompile(`path=/apps/demo(/community)? status=200`)
	for i, l := range logs {
		waitFor(t, fmt.Sprintf("instance %d to have served one of the custom domain's pages", i), func() bool {
			return served.MatchString(l.String()[before[i]:])
		})
	}
	if status, _ := call("GET", "https://unknown.example.test/", "", ""); status != http.StatusNotFound {
		t.Errorf("an unknown host through nginx: %d, want 404", status)
	}
	if status, _ := call("GET", mainURL+"/apps/demo", "", ""); status != http.StatusMovedPermanently {
		t.Errorf("/apps/demo on the main host: %d, want 301 to the domain", status)
	}
	if status, _ := call("GET", mainURL+"/", "", ""); status >= 400 {
		t.Fatalf("the main site through nginx: %d", status)
	}
	status, _ := call("POST", authURL+"/authenticate/signin?app=demo", "application/x-www-form-urlencoded",
		url.Values{"email": {"follower@demo.test"}, "password": {"demo-password"}}.Encode())
	if status != http.StatusSeeOther && status != http.StatusFound {
		t.Fatalf("sign in through nginx: %d", status)
	}
	status, me := call("GET", mainURL+"/api/auth/me?appId=demo", "", "")
	if status != 200 || !strings.Contains(me, "follower@demo.test") {
		t.Fatalf("signed in on the auth host, unknown on the main host: %d %.200s", status, me)
	}

	db, err := store.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var storeID, itemID string
	if err := db.NewRaw(`SELECT s.id FROM stores s JOIN apps a ON a.id = s.app_id WHERE a.name = 'demo'`).Scan(context.Background(), &storeID); err != nil {
		t.Fatal(err)
	}
	if err := db.NewRaw(`SELECT id FROM store_items WHERE sku = 'PIN-SET-01'`).Scan(context.Background(), &itemID); err != nil {
		t.Fatal(err)
	}
	base := mainURL + "/api/store/" + storeID
	if status, body := call("POST", base+"/cart/items", "application/json", fmt.Sprintf(`{"storeItemId":%q,"variantId":null,"quantity":1}`, itemID)); status != 200 {
		t.Fatalf("add to cart: %d %s", status, body)
	}
	status, body := call("POST", base+"/orders/checkout", "application/json", `{"paymentMethod":"musepay","shippingAddress":{"firstName":"Ada","lastName":"Lovelace","address":"1 Main St","city":"Portland","state":"OR","zipCode":"97201"}}`)
	var order struct{ Data struct{ ID string } }
	if status != 201 || json.Unmarshal([]byte(body), &order) != nil || order.Data.ID == "" {
		t.Fatalf("checkout: %d %s", status, body)
	}
	if status, body := call("POST", base+"/musepay/process", "application/json", `{"orderId":"`+order.Data.ID+`"}`); status != 200 {
		t.Fatalf("pay: %d %s", status, body)
	}
	var paid string
	if err := db.NewRaw(`SELECT status FROM orders WHERE id = ?`, order.Data.ID).Scan(context.Background(), &paid); err != nil || paid != "PAID" {
		t.Errorf("order after paying through nginx: %q %v", paid, err)
	}
	if status, body := call("POST", mainURL+"/api/auth/logout", "application/json", `{}`); status != 200 {
		t.Fatalf("logout: %d %s", status, body)
	}
	if status, _ := call("GET", mainURL+"/api/auth/me?appId=demo", "", ""); status != 401 {
		t.Errorf("after logout, /api/auth/me answers %d", status)
	}
	// Both instances served, and saw the client, not nginx, as the client.
	for i, l := range logs {
		waitFor(t, fmt.Sprintf("instance %d's access lines", i), func() bool { return strings.Contains(l.String(), "msg=request") })
		if strings.Contains(l.String(), "level=ERROR") {
			t.Errorf("instance %d logged an error", i)
		}
	}
}

// selfSigned writes a certificate for hosts and its key, answering paths.
func selfSigned(t *testing.T, dir string, hosts ...string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// The compose file runs PostgreSQL, Redis, MinIO, two instances and nginx;
// secrets come from files; its nginx site is the shipped one with the
// containers as upstreams, nothing else changed.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
		Secrets map[string]any `yaml:"secrets"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for _, s := range []string{"postgres", "redis", "minio", "app1", "app2", "nginx"} {
		if _, ok := doc.Services[s]; !ok {
			t.Errorf("compose.yaml has no %s", s)
		}
	}
	for _, app := range []string{"app1", "app2"} {
		env := doc.Services[app].Environment
		if env["DATABASE_URL_FILE"] == "" || env["DATABASE_URL"] != "" || env["REDIS_URL"] == "" || env["TRUSTED_PROXIES"] == "" {
			t.Errorf("%s environment: %v", app, env)
		}
	}
	site, _ := os.ReadFile("deploy/nginx/marquee.conf")
	compose, _ := os.ReadFile("deploy/nginx/compose.conf")
	want := string(site)
	for from, to := range map[string]string{"server 127.0.0.1:3000 ": "server app1:3000 ", "server 127.0.0.1:3010 ": "server app2:3000 ",
		"server 127.0.0.1:3002 ": "server app1:3002 ", "server 127.0.0.1:3012 ": "server app2:3002 "} {
		want = strings.Replace(want, from, to, 1)
	}
	want = regexp.MustCompile(`(?m)^# deploy_test.go .*$`).ReplaceAllString(want, "# Generated from marquee.conf for deploy/compose.yaml (upstreams are the app containers).")
	if string(compose) != want {
		t.Error("deploy/nginx/compose.conf differs from marquee.conf beyond its upstreams: regenerate it (see its header)")
	}
}

// The server keeps an idle connection open longer than nginx's upstream
// keepalive_timeout in deploy/ (issue 41 item 13): nginx then always closes
// first and never reuses a connection the instance is closing (a 502).
func TestIdleTimeoutOutlastsNginx(t *testing.T) {
	t.Parallel()
	cfg, err := server.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s*keepalive_timeout\s+(\d+)s;`)
	for _, f := range []string{"deploy/nginx/marquee.conf", "deploy/nginx/compose.conf"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found := re.FindAllStringSubmatch(string(b), -1)
		if len(found) < 2 {
			t.Errorf("%s: each upstream should set keepalive_timeout (found %d)", f, len(found))
		}
		for _, m := range found {
			n, _ := strconv.Atoi(m[1])
			if time.Duration(n)*time.Second >= cfg.IdleTimeout {
				t.Errorf("%s: keepalive_timeout %ss is not shorter than HTTP_IDLE_TIMEOUT %s", f, m[1], cfg.IdleTimeout)
			}
		}
	}
}
