package server

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"marquee/store"
)

// TestFailedPushDeliveriesAreRecorded: a push service that answers 500, and
// one that cannot be reached, leave a row each in push_failures (what
// `marquee jobs failed` shows); a delivery that works leaves none, and the
// subscriptions stay (only 404/410 remove one).
func TestFailedPushDeliveriesAreRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ts := newTestServer(t, demoDB(t))
	ts.push.Client = &http.Client{Timeout: 15 * time.Second} // loopback receivers
	pr := newPushReceiver(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer broken.Close()
	unreachable := httptest.NewServer(http.NotFoundHandler())
	unreachable.Close()

	app, err := ts.store.AppByIDOrName(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	auth := base64.RawURLEncoding.EncodeToString(pr.auth)
	var rows []store.Notification
	for _, x := range []struct{ email, endpoint string }{
		{"follower@demo.test", pr.srv.URL + "/ok"},
		{"subscriber@demo.test", broken.URL + "/push"},
		{"admin@demo.test", unreachable.URL + "/push"},
	} {
		u, err := ts.store.UserByEmail(ctx, x.email)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.store.SavePushSubscription(ctx, app.ID, u.ID, ts.cfg.PublicURL, x.endpoint, pr.p256dh(), auth); err != nil {
			t.Fatal(err)
		}
		n := store.Notification{ID: store.NewID(), AppID: app.ID, UserID: u.ID, Content: "hello", Kind: store.KindSystem, CreatedAt: time.Now()}
		if _, err := ts.store.DB().NewInsert().Model(&n).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, n)
	}
	res, err := ts.push.Deliver(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 1 || res.Failed != 2 {
		t.Fatalf("delivery: %+v", res)
	}
	failures, err := ts.store.RecentPushFailures(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(failures) != 2 {
		t.Fatalf("recorded failures: %+v", failures)
	}
	byNote := map[string]store.PushFailure{}
	for _, f := range failures {
		byNote[f.NotificationID] = f
	}
	if f := byNote[rows[1].ID]; f.Status != 500 || f.AppID != app.ID || f.UserID != rows[1].UserID || f.EndpointHost == "" {
		t.Errorf("the 500: %+v", f)
	}
	if f := byNote[rows[2].ID]; f.Status != 0 || f.Error == "" {
		t.Errorf("the unreachable one: %+v", f)
	}
	if n, _ := ts.store.DB().NewSelect().Model((*store.PushSubscription)(nil)).Count(ctx); n != 3 {
		t.Errorf("%d subscriptions left, want 3", n)
	}
}
