package store_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

// fullPostgres stands before the test PostgreSQL and refuses the first
// refusals connections as a server at max_connections does (FATAL 53300
// "sorry, too many clients already"), then forwards the rest to it.
func fullPostgres(t *testing.T, refusals int64) (dsn string, refused *atomic.Int64) {
	t.Helper()
	direct := storetest.Postgres(t)
	var name string
	if err := direct.QueryRow("SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused = new(atomic.Int64)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if refused.Load() < refusals {
				refused.Add(1)
				go refuseTooMany(c)
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	u.Host, u.Path = ln.Addr().String(), "/"+name
	return u.String(), refused
}

// refuseTooMany reads the startup message and answers PostgreSQL's
// ErrorResponse for a server at max_connections.
func refuseTooMany(c net.Conn) {
	defer c.Close()
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return
	}
	if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(n[:]))-4); err != nil {
		return
	}
	var fields []byte
	for _, f := range []struct {
		code  byte
		value string
	}{{'S', "FATAL"}, {'V', "FATAL"}, {'C', "53300"}, {'M', "sorry, too many clients already"}} {
		fields = append(append(append(fields, f.code), f.value...), 0)
	}
	fields = append(fields, 0)
	msg := []byte{'E', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(msg[1:], uint32(len(fields)+4))
	_, _ = c.Write(append(msg, fields...))
}

// TestRefusedConnectionIsRetried: PostgreSQL at max_connections refuses a
// new connection for a moment. The query waits and succeeds within its
// budget instead of failing, and the refusal does not open the breaker
// (which answered 503 to every request for a second).
func TestRefusedConnectionIsRetried(t *testing.T) {
	t.Parallel()
	dsn, refused := fullPostgres(t, 3)
	db, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := store.Ping(ctx, db); err != nil {
		t.Fatalf("a query while the server refused %d connections for too many clients: %v", refused.Load(), err)
	}
	if refused.Load() != 3 {
		t.Fatalf("the server refused %d connections, want 3", refused.Load())
	}
	// A second connection at once: not refused by a breaker.
	conn1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn1.Close()
	conn2, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("a second connection after the refusals: %v", err)
	}
	conn2.Close()
}

// TestIdleConnectionsAreReleased: connections a burst opened are closed
// once they have waited unused for MaxIdleTime, instead of being held
// until the process ends (three idle instances held 62 of PostgreSQL's
// 100).
func TestIdleConnectionsAreReleased(t *testing.T) {
	t.Parallel()
	direct := storetest.Postgres(t)
	var name string
	if err := direct.QueryRow("SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	db, err := store.OpenWith(u.String(), store.DBOptions{MaxIdleTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.ExecContext(ctx, "SELECT pg_sleep(0.2)"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if idle := db.Stats().Idle; idle < 2 {
		t.Fatalf("the burst left %d idle connections, want several", idle)
	}
	for deadline := time.Now().Add(time.Minute); db.Stats().Idle > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still idle after a minute", db.Stats().Idle)
		}
	}
	if closed := db.Stats().MaxIdleTimeClosed; closed < 2 {
		t.Errorf("%d connections closed for idleness, want the burst's", closed)
	}
}

// A connection that stalls once open (the database host hangs) holds a
// call for its query budget, not the 10 s query timeout (issue 41 item
// 12): web requests carry a budget (DB_REQUEST_TIMEOUT, 3 s); a context
// without one (jobs, the CLI) keeps the query timeout.
func TestStalledConnectionIsBoundedByTheBudget(t *testing.T) {
	t.Parallel()
	db, proxy := storetest.PostgresBehindProxy(t)
	ctx := context.Background()
	if err := store.Ping(ctx, db); err != nil {
		t.Fatal(err)
	}
	proxy.Stall()
	defer proxy.Unstall()
	start := time.Now()
	err := store.Ping(store.WithQueryBudget(ctx, time.Second), db)
	took := time.Since(start)
	if err == nil || took > 2500*time.Millisecond {
		t.Fatalf("stalled ping with a 1 s budget: %v after %s", err, took)
	}
	// A deadline of the caller's that is nearer still wins.
	near, cancel := context.WithTimeout(store.WithQueryBudget(ctx, time.Minute), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	if err := store.Ping(near, db); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("stalled ping with a nearer deadline: %v after %s", err, time.Since(start))
	}
}
