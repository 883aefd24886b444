package outbound

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestPublic(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true, "142.250.0.1": true,
		"127.0.0.1": false, "::1": false, "10.0.0.1": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fd00:ec2::254": false, "100.100.100.200": false,
		"0.0.0.0": false, "::": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "64:ff9b::7f00:1": false,
		"2002:7f00:1::": false, "224.0.0.1": false, "255.255.255.255": false, "198.18.0.1": false,
	} {
		if got := Public(net.ParseIP(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

// The client refuses at dial time: a loopback server is never connected
// to, whether named by address or by a name that resolves to it, and a
// redirect from a public page cannot lead inside either.
func TestClientNeverDialsInside(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := Client(5e9)
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/"} {
		_, err := c.Get(u)
		if !errors.Is(err, ErrNotPublic) {
			t.Errorf("GET %s: %v, want ErrNotPublic", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
	for host, ok := range map[string]bool{"127.0.0.1": false, "localhost": false, "x.internal": false, "10.0.0.1": false,
		"push.example": true, "8.8.8.8": true} {
		if err := CheckHost(context.Background(), host); (err == nil) != ok {
			t.Errorf("CheckHost(%s) = %v", host, err)
		}
	}
}
