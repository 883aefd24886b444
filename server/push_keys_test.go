package server

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

var (
	pushKeysOnce             sync.Once
	testP256dh, testPushAuth string
)

// validPushKeys are a browser's subscription keys: a P-256 public key and
// a 16-byte auth secret, base64url without padding.
func validPushKeys() (p256dh, auth string) {
	pushKeysOnce.Do(func() {
		priv, err := ecdh.P256().GenerateKey(rand.Reader)
		if err != nil {
			panic(err)
		}
		testP256dh = base64.RawURLEncoding.EncodeToString(priv.PublicKey().Bytes())
		testPushAuth = base64.RawURLEncoding.EncodeToString([]byte("sixteen byte key"))
	})
	return testP256dh, testPushAuth
}

// pushBody is an enable-push body for endpoint with valid keys.
func pushBody(endpoint string) string {
	p256dh, auth := validPushKeys()
	return fmt.Sprintf(`{"endpoint":%q,"p256dh":%q,"auth":%q}`, endpoint, p256dh, auth)
}

// enable-push refuses keys no push could be encrypted to (issue 41 item
// 15): a p256dh that is not a point on P-256, and an auth secret that is
// not 16 bytes; keys in any base64 form browsers send are taken.
func TestEnablePushRefusesBadKeys(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	follower := commUser(t, ts, "follower@demo.test")
	p256dh, auth := validPushKeys()
	raw, _ := base64.RawURLEncoding.DecodeString(p256dh)
	offCurve := append([]byte{}, raw...)
	offCurve[64] ^= 1 // the same x with another y: not on the curve
	compressed := append([]byte{2 + raw[64]&1}, raw[1:33]...)
	b64 := base64.RawURLEncoding.EncodeToString
	send := func(key, secret string) response {
		return ts.do(t, "POST", "/api/notifications/enable-push/demo",
			strings.NewReader(fmt.Sprintf(`{"endpoint":"https://push.example/k","p256dh":%q,"auth":%q}`, key, secret)), follower)
	}
	for name, key := range map[string]string{
		"one letter": "a", "not base64": "!!!!", "off the curve": b64(offCurve), "compressed": b64(compressed),
		"64 bytes": b64(raw[1:]), "the point at infinity": b64([]byte{0}), "all zero": b64(make([]byte, 65)),
	} {
		if r := send(key, auth); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, msgBadP256dh) {
			t.Errorf("p256dh %s: %d %s", name, r.Status, r.Body)
		}
	}
	for name, secret := range map[string]string{"one letter": "b", "15 bytes": b64(make([]byte, 15)), "17 bytes": b64(make([]byte, 17))} {
		if r := send(p256dh, secret); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, msgBadPushAuth) {
			t.Errorf("auth %s: %d %s", name, r.Status, r.Body)
		}
	}
	for name, key := range map[string]string{
		"base64url": p256dh, "padded": base64.URLEncoding.EncodeToString(raw), "standard": base64.StdEncoding.EncodeToString(raw),
	} {
		if r := send(key, auth); r.Status != http.StatusCreated {
			t.Errorf("valid p256dh %s: %d %s", name, r.Status, r.Body)
		}
	}
}
