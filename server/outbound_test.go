package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"marquee/server/outbound"
	"marquee/store"
)

// Push endpoints on the server's own network are refused when a member
// subscribes, and the push job never connects to one even when it is
// stored (from before the check, or a name re-pointed inside since): the
// job's dialer checks every address it dials.
func TestPushNeverReachesPrivateAddresses(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	follower := commUser(t, ts, "follower@demo.test")
	for _, endpoint := range []string{
		"https://127.0.0.1/push", "https://127.0.0.1:8443/push", "https://[::1]/push", "https://localhost/push",
		"https://push.localhost/x", "https://0.0.0.0/x", "https://10.1.2.3/x", "https://192.168.0.10/x",
		"https://172.16.5.4/x", "https://169.254.169.254/latest/meta-data", "https://[fd00:ec2::254]/x",
		"https://100.100.100.200/x", "https://[::ffff:127.0.0.1]/x", "https://metadata.google.internal/x",
		"https://2130706433/x", "http://push.example/x",
	} {
		r := ts.do(t, "POST", "/api/notifications/enable-push/demo",
			strings.NewReader(pushBody(endpoint)), follower)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Push endpoint must be a public https URL") {
			t.Errorf("enable-push %s: %d %s, want 400", endpoint, r.Status, r.Body)
		}
	}
	if n, _ := db.NewSelect().Model((*store.PushSubscription)(nil)).Count(context.Background()); n != 0 {
		t.Errorf("%d subscriptions stored from refused endpoints", n)
	}

	// A listener on loopback, counting every connection it is offered.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	appID := demoAppID(t, ts)
	followerID := idOfUser(t, ts, "follower@demo.test")
	for _, endpoint := range []string{
		fmt.Sprintf("https://127.0.0.1:%d/a", port), fmt.Sprintf("https://localhost:%d/b", port),
		fmt.Sprintf("https://[::ffff:127.0.0.1]:%d/c", port),
	} {
		if _, err := ts.store.SavePushSubscription(context.Background(), appID, followerID, ts.cfg.PublicURL, endpoint,
			"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM", "tBHItJI5svbpez7KI4CCXg"); err != nil {
			t.Fatal(err)
		}
	}
	logs := &lockedBuffer{}
	ts.push.Logger = slog.New(slog.NewTextHandler(logs, nil))
	startJobs(t, ts, db)
	ids := commLoad(t, ts)
	creator := commUser(t, ts, "creator@demo.test")
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Doors open at 7", "type": "POST", "communityId": ids.demoCommunity}), creator)
	if r.Status != 201 {
		t.Fatal(r.Body)
	}
	eventually(t, "the push job's three refused deliveries", func() bool {
		return strings.Count(logs.String(), outbound.ErrNotPublic.Error()) >= 3
	})
	if n := accepted.Load(); n != 0 {
		t.Errorf("the push job connected %d times to a loopback listener", n)
	}
}

func demoAppID(t *testing.T, ts *testServer) string {
	t.Helper()
	var id string
	if err := ts.store.DB().NewSelect().TableExpr("apps").Column("id").Where("name = 'demo'").Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
