package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// net/http writes a response through a 4 KB buffer: a 9 KB cached page
// leaves in three writes, each its own trip through the kernel's TCP stack
// and its own wake-up of the client, where nginx sends headers and body in
// one writev. Those extra writes were a third of what a cached page cost
// (CPU profile of scripts/bench), so an answer that is already whole in
// memory (a cached or rendered page, a JSON answer, a bundle) asks its
// connection to hold what net/http writes and send it in one piece once the
// response is finished. Answers that stream (downloads, exports) never ask,
// and go out as net/http writes them.

// Serve serves srv on ln with connections that can send an answer in one
// piece (Run, and scripts/bench, which measures what `marquee serve` does).
func Serve(srv *http.Server, ln net.Listener) error {
	prevContext, prevState := srv.ConnContext, srv.ConnState
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevContext != nil {
			ctx = prevContext(ctx, c)
		}
		if oc, ok := c.(*onePieceConn); ok {
			ctx = context.WithValue(ctx, onePieceKey{}, oc)
		}
		return ctx
	}
	srv.ConnState = func(c net.Conn, state http.ConnState) {
		// Idle: net/http has written and flushed the whole response.
		if oc, ok := c.(*onePieceConn); ok && state == http.StateIdle {
			_ = oc.release()
		}
		if prevState != nil {
			prevState(c, state)
		}
	}
	return srv.Serve(onePieceListener{ln})
}

type onePieceKey struct{}

// sendInOnePiece asks the request's connection to hold the response's bytes
// until it is finished. The whole answer must be in memory (it is held).
func sendInOnePiece(r *http.Request) {
	if oc, ok := r.Context().Value(onePieceKey{}).(*onePieceConn); ok {
		oc.hold()
	}
}

type onePieceListener struct{ net.Listener }

func (l onePieceListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &onePieceConn{Conn: c}, nil
}

// onePieceConn holds writes while a response asked for it (holding), and
// sends them in one write when net/http is done with the response, before
// the connection closes, and before anything it did not hold.
type onePieceConn struct {
	net.Conn
	mu      sync.Mutex
	holding bool
	held    *[]byte
	err     error
}

// heldLimit bounds what one connection holds: past it, the bytes go out.
const heldLimit = 1 << 20

var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func (c *onePieceConn) hold() {
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

func (c *onePieceConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if !c.holding {
		if err := c.sendLocked(); err != nil {
			return 0, err
		}
		return c.Conn.Write(p)
	}
	if c.held == nil {
		c.held = heldBuffers.Get().(*[]byte)
	}
	*c.held = append(*c.held, p...)
	if len(*c.held) > heldLimit {
		if err := c.sendLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// release sends what is held and stops holding.
func (c *onePieceConn) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	return c.sendLocked()
}

// sendLocked writes the held bytes. A failed write is kept and answered to
// every later write: net/http then closes the connection as it would have.
func (c *onePieceConn) sendLocked() error {
	if c.held == nil {
		return c.err
	}
	b := c.held
	c.held = nil
	_, err := c.Conn.Write(*b)
	if cap(*b) <= 64<<10 {
		*b = (*b)[:0]
		heldBuffers.Put(b)
	}
	if err != nil && c.err == nil {
		c.err = err
	}
	return err
}

func (c *onePieceConn) Close() error {
	_ = c.release()
	return c.Conn.Close()
}

// CloseWrite half-closes after what is held (net/http's lingering close).
func (c *onePieceConn) CloseWrite() error {
	if err := c.release(); err != nil {
		return err
	}
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the kernel's sendfile for files (net/http uses it when the
// connection has ReadFrom), after what is held.
func (c *onePieceConn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.release(); err != nil {
		return 0, err
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}
