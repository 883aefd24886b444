package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/testproc"
)

// goBin finds a helper that `make services` installs with go install.
func goBin(t testing.TB, name, pkg string) string {
	t.Helper()
	if bin, err := exec.LookPath(name); err == nil {
		return bin
	}
	home, _ := os.UserHomeDir()
	bin := filepath.Join(home, "go", "bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s not found on PATH or in ~/go/bin (go install %s@latest; scripts/services.sh does it)", name, pkg)
	}
	return bin
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// pebbleCA is a Pebble ACME server (Let's Encrypt's test CA) for one test,
// with pebble-challtestsrv as its DNS server answering 127.0.0.1 for every
// name, so it validates challenges for fans.example.test against the
// server under test: HTTP-01 on httpPort, TLS-ALPN-01 on tlsPort.
type pebbleCA struct {
	dir   string // the ACME directory URL
	mgmt  string // the management API's address
	trust *x509.CertPool
	stop  func()
}

func startPebble(t *testing.T, httpPort, tlsPort int) *pebbleCA {
	t.Helper()
	chall := goBin(t, "pebble-challtestsrv", "github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv")
	pebble := goBin(t, "pebble", "github.com/letsencrypt/pebble/v2/cmd/pebble")
	var dns string
	testproc.Start(t, "pebble-challtestsrv", func(addr string) *exec.Cmd {
		dns = freeAddr(t)
		return exec.Command(chall, "-management", addr, "-dnsserver", dns, "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
			"-http01", "", "-https01", "", "-tlsalpn01", "", "-doh", "")
	}, func(addr string) bool {
		res, err := http.Get("http://" + addr + "/")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	pemBytes, err := os.ReadFile(filepath.Join("testdata", "pebble", "pebble.minica.pem"))
	if err != nil {
		t.Fatal(err)
	}
	trust := x509.NewCertPool()
	trust.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: trust}}}
	certs, _ := filepath.Abs(filepath.Join("testdata", "pebble"))
	var mgmt string
	var cmd *exec.Cmd
	addr := testproc.Start(t, "pebble", func(addr string) *exec.Cmd {
		mgmt = freeAddr(t)
		conf, _ := json.Marshal(map[string]any{"pebble": map[string]any{
			"listenAddress": addr, "managementListenAddress": mgmt,
			"certificate": filepath.Join(certs, "cert.pem"), "privateKey": filepath.Join(certs, "key.pem"),
			"httpPort": httpPort, "tlsPort": tlsPort, "ocspResponderURL": "", "externalAccountBindingRequired": false,
		}})
		path := filepath.Join(t.TempDir(), "pebble.json")
		if err := os.WriteFile(path, conf, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(pebble, "-config", path, "-dnsserver", dns)
		// No sleeping before validation, no nonces refused at random.
		cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
		return cmd
	}, func(addr string) bool {
		res, err := client.Get("https://" + addr + "/dir")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return &pebbleCA{dir: "https://" + addr + "/dir", mgmt: mgmt, trust: trust, stop: func() { _ = cmd.Process.Kill() }}
}

// issuerRoots are the roots of what Pebble issues (a new CA each start),
// from its management API.
func (p *pebbleCA) issuerRoots(t *testing.T) *x509.CertPool {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.trust}}}
	res, err := client.Get("https://" + p.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("pebble root: %d %s", res.StatusCode, b)
	}
	return pool
}

// startACMEServer runs a server over the test's database with TLS_ACME on
// its own ports (the main site's, which answers HTTP-01, and the HTTPS
// one); before it is built, ca (if not nil) is started with those ports.
func startACMEServer(t *testing.T, db *bun.DB, only string, ca func(httpPort, tlsPort int) (dir string, trust *x509.CertPool)) (*testServer, string) {
	t.Helper()
	var lns Listeners
	ts := newTestServerWith(t, db, func(c *Config) {
		c.Port, c.AuthPort, c.BindAddress = 0, 0, ""
		c.TLSACME, c.TLSAddr, c.ACMEEmail, c.acmeOnly = true, "127.0.0.1:0", "ops@example.test", only
		var err error
		if lns, err = Listen(c); err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(c.TLSAddr)
		tlsPort, _ := strconv.Atoi(p)
		c.ACMECA, c.ACMECARoots = ca(c.Port, tlsPort)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.Run(ctx, lns) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return ts, lns.TLS.Addr().String()
}

// The server obtains certificates for verified custom domains itself (issue
// 42 item 4, TLS_ACME=true) from a real ACME CA, Pebble, which validates the
// challenge against the server (TLS-ALPN-01 on the HTTPS listener, then
// HTTP-01 on the main one for a second domain obtained by another instance;
// Pebble resolves the names through pebble-challtestsrv):
// a handshake for fans.example.test gets a certificate for that name that
// verifies against Pebble's root, and GET / over it is the demo app's
// landing. An unverified domain and an unknown name get no certificate. A
// second instance on the same database, with Pebble gone, serves the same
// certificate (the storage is shared, nothing is issued again).
func TestACMECertificatesFromPebble(t *testing.T) {
	t.Parallel()
	// A CPU-hog run once failed the HTTP-01 handshake with "tls: internal
	// error" and nothing else to go on.
	keepServerLogs(t)
	db := demoDB(t)
	var ca *pebbleCA
	var once sync.Once
	a, addrA := startACMEServer(t, db, "tls-alpn-01", func(httpPort, tlsPort int) (string, *x509.CertPool) {
		once.Do(func() { ca = startPebble(t, httpPort, tlsPort) })
		return ca.dir, ca.trust
	})
	a.addVerifiedDomain(t, "demo", fans)
	if _, err := a.addDomain(context.Background(), mustApp(t, a, "acme").ID, "", "pending.example.test", false); err != nil {
		t.Fatal(err)
	}
	roots := ca.issuerRoots(t)

	handshake := func(addr, name string) (*x509.Certificate, error) {
		d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{ServerName: name, RootCAs: roots}}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return c.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
	}
	start := time.Now()
	leaf, err := handshake(addrA, fans)
	if err != nil {
		t.Fatalf("handshake for %s: %v", fans, err)
	}
	t.Logf("certificate obtained in %s", time.Since(start).Round(time.Millisecond))
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != fans || !strings.Contains(leaf.Issuer.CommonName, "Pebble") {
		t.Fatalf("certificate: names %v, issuer %q", leaf.DNSNames, leaf.Issuer.CommonName)
	}

	// GET / over HTTPS on the domain is the app's landing.
	get := func(addr string) (int, string) {
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
			ForceAttemptHTTP2: true,
		}}
		res, err := client.Get("https://" + fans + "/")
		if err != nil {
			t.Fatalf("GET https://%s/: %v", fans, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := get(addrA); status != http.StatusOK || !strings.Contains(body, "<title>Demo Studio</title>") {
		t.Fatalf("GET / on %s over HTTPS: %d %.500s", fans, status, body)
	} else if !strings.Contains(body, `rel="canonical" href="https://`+fans+`"`) {
		// With TLS_ACME the domain's URLs are https on port 443 (where
		// ACME checks it), whatever port TLS_ADDR names.
		t.Errorf("canonical over TLS_ACME is not https://%s: %.2000s", fans, body)
	}

	for _, name := range []string{"pending.example.test", "nobody.example.test", "main.test"} {
		if _, err := handshake(addrA, name); err == nil {
			t.Errorf("%s got a certificate", name)
		}
	}

	// HTTP-01, ordered by another instance: Pebble asks the first one (its
	// configured port), whose main listener answers it (in this one process
	// from certmagic's memory of the challenge; across processes from the
	// copy the other instance kept in the database).
	const shop = "shop.example.test"
	a.addVerifiedDomain(t, "acme", shop)
	_, addrC := startACMEServer(t, db, "http-01", func(int, int) (string, *x509.CertPool) { return ca.dir, ca.trust })
	if leafC, err := handshake(addrC, shop); err != nil || leafC.DNSNames[0] != shop {
		t.Fatalf("HTTP-01 through another instance, handshake for %s: %v", shop, err)
	}

	// Another instance, Pebble stopped: the certificate comes from the database.
	ca.stop()
	_, addrB := startACMEServer(t, db, "", func(int, int) (string, *x509.CertPool) { return ca.dir, ca.trust })
	leafB, err := handshake(addrB, fans)
	if err != nil {
		t.Fatalf("second instance, handshake for %s: %v", fans, err)
	}
	if leafB.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
		t.Fatalf("second instance serves serial %s, the first %s: a new issuance", leafB.SerialNumber, leaf.SerialNumber)
	}
	if status, _ := get(addrB); status != http.StatusOK {
		t.Fatalf("GET / on the second instance: %d", status)
	}
	if _, err := handshake(addrB, "pending.example.test"); err == nil {
		t.Error("the second instance issued for an unverified domain")
	}
}
