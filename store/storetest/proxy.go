package storetest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
)

// Proxy forwards TCP connections to a server until Cut, which closes every
// connection and refuses new ones: a dependency outage, for real.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	cut    bool
	// stalled: bytes are read and dropped both ways, connections stay
	// open (Stall).
	stalled atomic.Bool
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.Cut)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	p.mu.Lock()
	ln := p.ln
	p.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { p.pipe(up, c); up.Close() }()
		go func() { p.pipe(c, up); c.Close() }()
	}
}

// pipe copies src to dst, dropping what arrives while the proxy is stalled.
func (p *Proxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.stalled.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Stall starts the other outage: every connection, open or new, stays open
// and nothing more passes, as when a database host hangs or a network path
// black-holes; Unstall lets bytes through again.
func (p *Proxy) Stall()   { p.stalled.Store(true) }
func (p *Proxy) Unstall() { p.stalled.Store(false) }

// Cut starts the outage: open connections drop and new ones are refused.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return
	}
	p.cut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}

// Resume ends the outage: the proxy listens again on the same address, so
// clients that kept it reconnect as they would to a restarted server.
func (p *Proxy) Resume(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		return
	}
	ln, err := net.Listen("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatalf("proxy resume: %v", err)
	}
	p.ln, p.cut, p.conns = ln, false, nil
	go p.accept()
}

// PostgresBehindProxy is Postgres(t) reached through a Proxy, so a test can
// take the database away mid-test.
func PostgresBehindProxy(t testing.TB) (*bun.DB, *Proxy) {
	t.Helper()
	direct := Postgres(t)
	var name string
	if err := direct.QueryRow("SELECT current_database()").Scan(&name); err != nil {
		t.Fatalf("current database: %v", err)
	}
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := NewProxy(t, u.Host)
	u.Host, u.Path = proxy.Addr(), "/"+name
	db, err := store.Open(u.String())
	if err != nil {
		t.Fatalf("open through proxy: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, proxy
}
