// Package outbound is the one way the server reaches other hosts on a
// user's or a creator's say (push endpoints, link icons): only public
// internet addresses, checked on the address actually dialled, after DNS
// and on every redirect, so a name that resolves (or later re-resolves)
// to the server's own network is refused too (server-side request forgery).
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// ErrNotPublic is the refusal of a loopback, private, link-local,
// metadata or otherwise non-public address.
var ErrNotPublic = errors.New("refusing a loopback, private, link-local or metadata address")

// reserved are blocks that are not public although net.IP's predicates do
// not say so.
var reserved = func() []*net.IPNet {
	var nets []*net.IPNet
	for _, c := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // carrier-grade NAT (and some clouds' metadata, 100.100.100.200)
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"240.0.0.0/4",     // reserved, and 255.255.255.255
		"64:ff9b::/96",    // NAT64: an IPv4 address in disguise
		"64:ff9b:1::/48",  // local-use NAT64
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4: an IPv4 address in disguise
		"100::/64",        // discard
	} {
		_, n, err := net.ParseCIDR(c)
		if err != nil {
			panic(err)
		}
		nets = append(nets, n)
	}
	return nets
}()

// Public reports whether ip is a public unicast address.
func Public(ip net.IP) bool {
	if ip == nil {
		return false
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4 // ::ffff:127.0.0.1 is 127.0.0.1
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, n := range reserved {
		if n.Contains(ip) {
			return false
		}
	}
	return true
}

// Dialer dials public addresses only: its Control runs on the resolved
// address of every connection, so no name can lead it inside.
func Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		if !Public(net.ParseIP(host)) {
			return fmt.Errorf("dial %s: %w", host, ErrNotPublic)
		}
		return nil
	}}
}

// Client is an http.Client on Dialer: no proxy from the environment (a
// proxy would dial for us), redirects followed at most 3 times and only to
// http(s), each through the same dialer.
func Client(timeout time.Duration) *http.Client {
	dialer := Dialer(10 * time.Second)
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil,
			TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 10 * time.Second,
			MaxIdleConns: 20, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
}

// CheckHost refuses, ahead of time, a host that is a non-public address,
// a local name, or a name that resolves to a non-public address. A name
// that does not resolve now is let through: the dialer checks again on
// every connection, which is what makes the rule hold.
func CheckHost(ctx context.Context, host string) error {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip := net.ParseIP(host); ip != nil {
		if !Public(ip) {
			return ErrNotPublic
		}
		return nil
	}
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") ||
		strings.HasSuffix(host, ".internal") || !strings.Contains(host, ".") {
		return ErrNotPublic
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if !Public(a.IP) {
			return ErrNotPublic
		}
	}
	return nil
}
