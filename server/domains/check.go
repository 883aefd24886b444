// Package domains proves a custom domain's ownership: the TXT record its
// owner was asked to publish, read through a resolver with a timeout.
package domains

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"marquee/store"
)

// Checker reads TXT records. Resolver is "host:port" of the DNS server to
// ask (DNS_RESOLVER), or "" for the system's; Timeout bounds one check
// (DNS_TIMEOUT, default 5 s).
type Checker struct {
	Resolver string
	Timeout  time.Duration
}

func (c Checker) resolver() *net.Resolver {
	if c.Resolver == "" {
		return &net.Resolver{PreferGo: true}
	}
	addr := c.Resolver
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// Check answers nil when the domain's TXT record carries the token, or an
// error whose text the creator can act on.
func (c Checker) Check(ctx context.Context, domain, token string) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name, want := store.DomainTXTName(domain), store.DomainTXTValue(token)
	records, err := c.resolver().LookupTXT(ctx, name)
	if err != nil {
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			return fmt.Errorf("no TXT record found at %s yet (DNS changes can take a while to appear)", name)
		case errors.As(err, &dnsErr) && dnsErr.IsTimeout, ctx.Err() != nil:
			return fmt.Errorf("the DNS lookup of %s timed out; we will try again", name)
		}
		return fmt.Errorf("the DNS lookup of %s failed; we will try again", name)
	}
	for _, r := range records {
		if strings.TrimSpace(r) == want {
			return nil
		}
	}
	if len(records) == 0 {
		return fmt.Errorf("no TXT record found at %s yet (DNS changes can take a while to appear)", name)
	}
	return fmt.Errorf("the TXT record at %s does not say %s", name, want)
}
