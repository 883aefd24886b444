package server

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/crypto/hkdf"

	"marquee/server/jobs"
	"marquee/store"
	"marquee/store/storetest"
)

// startJobs runs the product's job queue (fan-out, push) for a test server.
func startJobs(t *testing.T, ts *testServer, db *bun.DB) {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db, storetest.URL(db), ts.logger); err != nil {
		t.Fatalf("migrate jobs: %v", err)
	}
	q, err := jobs.New(ctx, jobs.Options{DB: db, DatabaseURL: storetest.URL(db), MaxConns: storetest.JobConns, Logger: ts.logger, PollInterval: 20 * time.Millisecond,
		Work: jobs.Product(jobs.Deps{Store: ts.store, Files: ts.files, Logger: ts.logger, Push: ts.push, CardRenewals: ts.CardRenewals(), StrayRefunds: ts.StrayRefunds()})})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		q.Stop(stop)
	})
}

// eventually retries check for up to 15 s (jobs run in the background).
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if check() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestNotificationCalls(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	startJobs(t, ts, db)
	ids := commLoad(t, ts)
	ctx := context.Background()
	creator, follower := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "follower@demo.test")
	member, moderator := commUser(t, ts, "member@demo.test"), commUser(t, ts, "moderator@demo.test")
	demo, _ := ts.store.AppByIDOrName(ctx, "demo")
	acme, _ := ts.store.AppByIDOrName(ctx, "acme")
	otherPriv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := base64.RawURLEncoding.EncodeToString(otherPriv.PublicKey().Bytes())
	otherAuth := base64.RawURLEncoding.EncodeToString([]byte("another 16 bytes"))
	unread := func(h map[string]string, app string, q string) (int, map[string]any) {
		r := ts.do(t, "GET", "/api/notifications/unread/"+app+q, nil, h)
		var out map[string]any
		commJSON(t, r, &out)
		return r.Status, out
	}

	// The creator posts: every member hears of it, with sender and link.
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Live tonight at 8", "type": "POST",
		"communityId": ids.demoCommunity}), creator)
	if r.Status != 201 {
		t.Fatalf("creator post: %d %s", r.Status, r.Body)
	}
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	eventually(t, "the fan-out", func() bool {
		n, _ := ts.store.UnreadCount(ctx, demo.ID, idOfUser(t, ts, "moderator@demo.test"))
		return n == 1
	})
	status, out := unread(follower, demo.ID, "?page=1&limit=20")
	if status != 200 {
		t.Fatalf("unread: %d %v", status, out)
	}
	data := out["data"].(map[string]any)
	list := data["notifications"].([]any)
	first := list[0].(map[string]any)
	if len(list) != 1 || first["content"] != "New post: Live tonight at 8" ||
		first["sender"].(map[string]any)["username"] != "creator" || first["link"] != "/apps/demo/posts/"+created.Data.ID {
		t.Fatalf("follower's notifications: %v", list)
	}
	if p := data["pagination"].(map[string]any); p["total"] != 1.0 || p["limit"] != 20.0 || out["pagination"] == nil {
		t.Errorf("pagination: %v", p)
	}
	// limit=1 (the client's health check) and the app's name both work.
	if status, out = unread(follower, "demo", "?limit=1"); status != 200 || len(out["data"].(map[string]any)["notifications"].([]any)) != 1 {
		t.Errorf("limit=1: %d %v", status, out)
	}

	ts.run(t, []scenario{
		{name: "visitor", path: "/api/notifications/unread/demo", status: 401},
		{name: "non-member", path: "/api/notifications/unread/demo", as: "member@demo.test", status: 403},
		{name: "not a member of acme", path: "/api/notifications/unread/acme", as: "follower@demo.test", status: 403},
		{name: "acme creator sees nothing of demo", path: "/api/notifications/unread/acme", as: "creator@acme.test", status: 200,
			json: map[string]any{"data.notifications": arrayLen(0), "pagination.total": 0.0}},
		{name: "creator did not notify themself", path: "/api/notifications/unread/demo", as: "creator@demo.test", status: 200,
			json: map[string]any{"data.notifications": arrayLen(0)}},
		{name: "bad page", path: "/api/notifications/unread/demo?page=x", as: "follower@demo.test", status: 400},
		{name: "read needs something", method: "POST", path: "/api/notifications/read/demo", as: "follower@demo.test", body: "{}", status: 400},
		{name: "mark all", method: "POST", path: "/api/notifications/read/demo", as: "follower@demo.test", body: `{"markAll":true}`,
			status: 200, json: map[string]any{"data.marked": 1.0, "data.unreadCount": 0.0, "success": true}},
		{name: "none left", path: "/api/notifications/unread/demo", as: "follower@demo.test", status: 200,
			json: map[string]any{"data.notifications": arrayLen(0), "data.pagination.total": 0.0}},
		{name: "moderator still unread", path: "/api/notifications/unread/demo", as: "moderator@demo.test", status: 200,
			json: map[string]any{"data.notifications": arrayLen(1)}},
		// A fan is offered the kinds a fan receives; the creator every kind.
		{name: "prefs default", path: "/api/notifications/preferences/demo", as: "follower@demo.test", status: 200,
			json: map[string]any{"data.mutedAll": false, "data.mutedKinds": arrayLen(0),
				"data.kinds": arrayLen(len(slices.DeleteFunc(slices.Clone(store.NotificationKinds), store.StaffNotificationKind)))}},
		{name: "the creator's prefs", path: "/api/notifications/preferences/demo", as: "creator@demo.test", status: 200,
			json: map[string]any{"data.kinds": arrayLen(len(store.NotificationKinds))}},
		{name: "unknown kind", method: "PUT", path: "/api/notifications/preferences/demo", as: "follower@demo.test",
			body: `{"mutedKinds":["NOPE"]}`, status: 400},
		{name: "mute new posts", method: "PUT", path: "/api/notifications/preferences/demo", as: "follower@demo.test",
			body: `{"mutedKinds":["NEW_POST"]}`, status: 200, json: map[string]any{"data.mutedKinds.0": "NEW_POST"}},
		{name: "vapid key", path: "/api/notifications/vapid-key", status: 200, json: map[string]any{"data.publicKey": present{}, "publicKey": present{}}},
		{name: "push needs following", method: "POST", path: "/api/notifications/enable-push/demo", as: "member@demo.test",
			body: pushBody("https://push.example/x"), status: 403,
			contains: []string{"You must follow the app before enabling push notifications"}},
		{name: "push needs keys", method: "POST", path: "/api/notifications/enable-push/demo", as: "follower@demo.test",
			body: `{"endpoint":"https://push.example/x","p256dh":"","auth":"b"}`, status: 400,
			contains: []string{"Failed to setup push subscription - missing keys"}},
		{name: "push needs https", method: "POST", path: "/api/notifications/enable-push/demo", as: "follower@demo.test",
			body: pushBody("http://10.0.0.1/x"), status: 400},
		{name: "push stored", method: "POST", path: "/api/notifications/enable-push/demo", as: "follower@demo.test",
			body: pushBody("https://push.example/x"), status: 201, json: map[string]any{"data.id": present{}}},
		{name: "push again replaces", method: "POST", path: "/api/notifications/enable-push/demo", as: "follower@demo.test",
			body: fmt.Sprintf(`{"endpoint":"https://push.example/x","p256dh":%q,"auth":%q}`, otherKey, otherAuth), status: 201},
		// Pages.
		{name: "notifications page", path: "/apps/demo/notifications", as: "moderator@demo.test", status: 200,
			contains: []string{"Notifications", "Live tonight at 8", "from @creator", "Mark All as Read"}},
		{name: "notifications page for visitors", path: "/apps/demo/notifications", status: 302},
		{name: "chat placeholder", path: "/apps/demo/chat", status: 200, contains: []string{"Chat is coming soon", "app-header"}},
		{name: "search page", path: "/apps/demo/search?q=live+tonight", as: "follower@demo.test", status: 200,
			contains: []string{"Live tonight at 8", "/apps/demo/posts/" + created.Data.ID}},
		{name: "search api: visitor", path: "/api/search/apps/demo?q=live", status: 401},
	})
	// One row per endpoint, keys replaced.
	var subs []store.PushSubscription
	if err := db.NewSelect().Model(&subs).Where("app_id = ?", demo.ID).Scan(ctx); err != nil || len(subs) != 1 || subs[0].P256dh != otherKey {
		t.Fatalf("subscriptions: %+v %v", subs, err)
	}

	// Muted kind: another post does not reach the follower, but does the moderator.
	if r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Second", "type": "POST", "communityId": ids.demoCommunity}), creator); r.Status != 201 {
		t.Fatal(r.Body)
	}
	eventually(t, "the second fan-out", func() bool {
		_, out := unread(moderator, "demo", "")
		return len(out["data"].(map[string]any)["notifications"].([]any)) == 2
	})
	if _, out := unread(follower, "demo", ""); len(out["data"].(map[string]any)["notifications"].([]any)) != 0 {
		t.Errorf("muted follower got %v", out["data"])
	}
	_ = member
	_ = acme

	// Unfollowing drops the member's push subscriptions in the app.
	if r := ts.do(t, "POST", "/api/notifications/unfollow/demo", nil, follower); r.Status != 200 {
		t.Fatalf("unfollow: %d %s", r.Status, r.Body)
	}
	if n, _ := db.NewSelect().Model((*store.PushSubscription)(nil)).Where("app_id = ?", demo.ID).Count(ctx); n != 0 {
		t.Errorf("%d subscriptions left after unfollow", n)
	}
}

func TestSearchScopedByViewer(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	demo, _ := ts.store.Landing(ctx, "demo")
	items, err := ts.store.Items(ctx, demo.Store.ID, store.ItemFilter{Page: 1, Limit: 1})
	if err != nil || len(items.Items) == 0 {
		t.Fatalf("items: %v", err)
	}
	name := items.Items[0].Name
	word := strings.Fields(name)[0]
	ts.run(t, []scenario{
		{name: "follower finds items", path: "/api/search/apps/demo?q=" + word, as: "follower@demo.test", status: 200,
			contains: []string{name, "/apps/demo/store/items/"}},
		// A signed-in non-member may not open the store, so finds no items.
		{name: "non-member finds no items", path: "/api/search/apps/demo?q=" + word, as: "member@demo.test", status: 200,
			json: map[string]any{"data.items": arrayLen(0)}},
		{name: "nothing of another app", path: "/api/search/apps/acme?q=" + word, as: "admin@demo.test", status: 200,
			absent: []string{name}},
		{name: "empty query", path: "/api/search/apps/demo?q=", as: "follower@demo.test", status: 200,
			json: map[string]any{"data.posts": arrayLen(0), "data.items": arrayLen(0), "data.events": arrayLen(0)}},
	})
}

// TestVapidKeyStable: the key pair is generated once and kept, so a restart
// (a new server on the same database) answers the same public key.
func TestVapidKeyStable(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	key := func(ts *testServer) string {
		var out struct{ Data struct{ PublicKey string } }
		commJSON(t, ts.do(t, "GET", "/api/notifications/vapid-key", nil, nil), &out)
		return out.Data.PublicKey
	}
	k1 := key(ts)
	raw, err := base64.RawURLEncoding.DecodeString(k1)
	if err != nil || len(raw) != 65 || raw[0] != 4 {
		t.Fatalf("public key %q is not an uncompressed P-256 point", k1)
	}
	opts := ts.storeOptions
	opts.Cache = store.NewMemoryCache()
	restarted := &testServer{Server: New(Deps{Config: ts.cfg, Store: store.New(opts), Renderer: ts.renderer, Files: ts.files, Logger: ts.logger}),
		files: ts.files}
	if k2 := key(restarted); k2 != k1 {
		t.Fatalf("key changed across restart: %s vs %s", k1, k2)
	}
}

// pushReceiver is a local push service: it checks the VAPID JWT against the
// key in the Authorization header and decrypts the RFC 8291 payload with the
// subscription's private key.
type pushReceiver struct {
	srv      *httptest.Server
	priv     *ecdh.PrivateKey
	auth     []byte
	mu       sync.Mutex
	payloads []string
	// paths is the endpoint path of each delivery (beside payloads).
	paths    []string
	vapidKey string
	errs     []string
}

func newPushReceiver(t *testing.T) *pushReceiver {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pr := &pushReceiver{priv: priv, auth: make([]byte, 16)}
	rand.Read(pr.auth)
	pr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone" {
			w.WriteHeader(http.StatusGone)
			return
		}
		b, _ := io.ReadAll(r.Body)
		pr.mu.Lock()
		defer pr.mu.Unlock()
		key, err := pr.checkVAPID(r)
		if err != nil {
			pr.errs = append(pr.errs, "vapid: "+err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		pr.vapidKey = key
		if r.Header.Get("Content-Encoding") != "aes128gcm" || r.Header.Get("TTL") == "" {
			pr.errs = append(pr.errs, "headers: "+fmt.Sprint(r.Header))
		}
		msg, err := pr.decrypt(b)
		if err != nil {
			pr.errs = append(pr.errs, "decrypt: "+err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		pr.payloads = append(pr.payloads, string(msg))
		pr.paths = append(pr.paths, r.URL.Path)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(pr.srv.Close)
	return pr
}

func (pr *pushReceiver) p256dh() string {
	return base64.RawURLEncoding.EncodeToString(pr.priv.PublicKey().Bytes())
}

func (pr *pushReceiver) checkVAPID(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "vapid ") {
		return "", fmt.Errorf("authorization %q", h)
	}
	var token, key string
	for _, part := range strings.Split(strings.TrimPrefix(h, "vapid "), ",") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, "t="); ok {
			token = v
		}
		if v, ok := strings.CutPrefix(part, "k="); ok {
			key = v
		}
	}
	pub, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return "", err
	}
	pk, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub)
	if err != nil {
		return "", fmt.Errorf("bad key: %w", err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("jwt has %d parts", len(parts))
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return "", fmt.Errorf("signature")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pk, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "", fmt.Errorf("signature does not verify")
	}
	var header struct{ Alg string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	json.Unmarshal(hb, &header)
	var claims struct {
		Aud, Sub string
		Exp      int64
	}
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(cb, &claims); err != nil {
		return "", err
	}
	if header.Alg != "ES256" || claims.Aud != pr.srv.URL || !strings.HasPrefix(claims.Sub, "mailto:") ||
		claims.Exp < time.Now().Unix() || claims.Exp > time.Now().Add(24*time.Hour).Unix() {
		return "", fmt.Errorf("claims %+v alg %s", claims, header.Alg)
	}
	return key, nil
}

// decrypt undoes RFC 8291 (aes128gcm, one record).
func (pr *pushReceiver) decrypt(b []byte) ([]byte, error) {
	if len(b) < 21 {
		return nil, fmt.Errorf("short body")
	}
	salt, rs, idlen := b[:16], binary.BigEndian.Uint32(b[16:20]), int(b[20])
	if rs < 18 || len(b) < 21+idlen {
		return nil, fmt.Errorf("header")
	}
	asPublic, ciphertext := b[21:21+idlen], b[21+idlen:]
	senderKey, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, err
	}
	secret, err := pr.priv.ECDH(senderKey)
	if err != nil {
		return nil, err
	}
	read := func(secret, salt, info []byte, n int) []byte {
		out := make([]byte, n)
		io.ReadFull(hkdf.New(sha256.New, secret, salt, info), out)
		return out
	}
	keyInfo := append(append([]byte("WebPush: info\x00"), pr.priv.PublicKey().Bytes()...), asPublic...)
	ikm := read(secret, pr.auth, keyInfo, 32)
	cek := read(ikm, salt, []byte("Content-Encoding: aes128gcm\x00"), 16)
	nonce := read(ikm, salt, []byte("Content-Encoding: nonce\x00"), 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, err
	}
	// The last record ends with 0x02 then zero padding.
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 || plain[i] != 2 {
		return nil, fmt.Errorf("padding delimiter")
	}
	return plain[:i], nil
}

func TestPushRoundTrip(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ts.cfg.PushAllowLoopbackHTTP = true
	// The receiver is on loopback, which the push job's own client refuses
	// (TestPushNeverReachesPrivateAddresses): this test lets it through.
	ts.push.Client = &http.Client{Timeout: 15 * time.Second}
	startJobs(t, ts, db)
	ids := commLoad(t, ts)
	pr := newPushReceiver(t)
	creator, follower, admin := commUser(t, ts, "creator@demo.test"), commUser(t, ts, "follower@demo.test"), commUser(t, ts, "admin@demo.test")
	auth := base64.RawURLEncoding.EncodeToString(pr.auth)
	for _, x := range []struct {
		who      map[string]string
		endpoint string
	}{{follower, pr.srv.URL + "/follower"}, {admin, pr.srv.URL + "/gone"}} {
		r := ts.do(t, "POST", "/api/notifications/enable-push/demo", body(map[string]string{"endpoint": x.endpoint, "p256dh": pr.p256dh(), "auth": auth}), x.who)
		if r.Status != 201 {
			t.Fatalf("enable push: %d %s", r.Status, r.Body)
		}
	}
	r := ts.do(t, "POST", "/api/messages", body(map[string]any{"content": "Doors open at 7", "type": "POST", "communityId": ids.demoCommunity}), creator)
	if r.Status != 201 {
		t.Fatal(r.Body)
	}
	var created struct{ Data store.MessageView }
	commJSON(t, r, &created)
	eventually(t, "the push and the dead subscription's removal", func() bool {
		pr.mu.Lock()
		got := len(pr.payloads) + len(pr.errs)
		pr.mu.Unlock()
		n, _ := db.NewSelect().Model((*store.PushSubscription)(nil)).Count(context.Background())
		return got > 0 && n == 1
	})

	pr.mu.Lock()
	defer pr.mu.Unlock()
	if len(pr.errs) > 0 {
		t.Fatalf("receiver: %v", pr.errs)
	}
	if len(pr.payloads) != 1 {
		t.Fatalf("payloads: %v", pr.payloads)
	}
	var p struct{ ID, Title, Body, URL string }
	if err := json.Unmarshal([]byte(pr.payloads[0]), &p); err != nil {
		t.Fatal(err)
	}
	if p.Body != "New post: Doors open at 7" || p.URL != "http://main.test/apps/demo/posts/"+created.Data.ID || p.Title == "" || p.ID == "" {
		t.Errorf("payload: %+v", p)
	}
	var key struct{ Data struct{ PublicKey string } }
	commJSON(t, ts.do(t, "GET", "/api/notifications/vapid-key", nil, nil), &key)
	if pr.vapidKey != key.Data.PublicKey {
		t.Errorf("signed with %s, the API gives %s", pr.vapidKey, key.Data.PublicKey)
	}
	// The push service said 410 for the admin's endpoint: it is gone.
	var left []store.PushSubscription
	db.NewSelect().Model(&left).Scan(context.Background())
	if len(left) != 1 || !strings.HasSuffix(left[0].Endpoint, "/follower") {
		t.Errorf("subscriptions after a 410: %+v", left)
	}
}

func idOfUser(t *testing.T, ts *testServer, email string) string {
	t.Helper()
	var u store.User
	if err := ts.store.DB().NewSelect().Model(&u).Where("email = ?", email).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return u.ID
}
