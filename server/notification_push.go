package server

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/outbound"
)

// GET /api/notifications/vapid-key: the public half of the server's VAPID
// key pair, generated once and kept in the database so every process and
// every restart signs with the key browsers subscribed with.
func (s *Server) apiVapidKey(c echo.Context) error {
	keys, err := s.push.Keys(c.Request().Context())
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, VapidKey{PublicKey: keys.Public})
}

type enablePushRequest struct {
	Endpoint string `json:"endpoint"`
	P256dh   string `json:"p256dh"`
	Auth     string `json:"auth"`
}

// POST /api/notifications/enable-push/:appId stores the browser's push
// subscription for the member (SPEC.md section 5: following comes first,
// and both keys are required), with the origin it was made on (the app's
// verified domain or the main site: each has its own service worker, and
// the push job prefers the app's current one). The same endpoint again
// replaces its keys and origin.
func (s *Server) apiEnablePush(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	if !sc.Can.CanNotifications {
		return forbidden("You must follow the app before enabling push notifications")
	}
	var req enablePushRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	req.P256dh, req.Auth = strings.TrimSpace(req.P256dh), strings.TrimSpace(req.Auth)
	if req.P256dh == "" || req.Auth == "" {
		return badRequest("Failed to setup push subscription - missing keys")
	}
	if len(req.P256dh) > 200 || len(req.Auth) > 100 || len(req.Endpoint) > 2000 {
		return badRequest("Push subscription is too long")
	}
	if err := checkPushKeys(req.P256dh, req.Auth); err != nil {
		return err
	}
	if !s.pushEndpointOK(c.Request().Context(), req.Endpoint) {
		return badRequest("Push endpoint must be a public https URL")
	}
	sub, err := s.store.SavePushSubscription(c.Request().Context(), sc.App.ID, sc.User.ID, s.requestOrigin(c.Request()),
		req.Endpoint, req.P256dh, req.Auth)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusCreated, PushEnabled{Endpoint: sub.Endpoint, ID: sub.ID, Origin: sub.Origin},
		"Push notifications enabled")
}

// pushEndpointOK accepts https URLs on public hosts (push services are
// public https endpoints; the push job will POST to whatever is stored):
// an address or a name of the server's own network is refused here, and
// the push job's dialer refuses it again on every connection
// (server/outbound). Plain http on a loopback address is allowed only when
// the config says so (tests run a local push receiver).
func (s *Server) pushEndpointOK(ctx context.Context, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return false
	}
	if u.Scheme == "https" {
		return outbound.CheckHost(ctx, u.Hostname()) == nil
	}
	if u.Scheme == "http" && s.cfg.PushAllowLoopbackHTTP {
		ip := net.ParseIP(u.Hostname())
		return ip != nil && ip.IsLoopback()
	}
	return false
}

const (
	msgBadP256dh   = "p256dh must be a P-256 public key (65 bytes, base64url)"
	msgBadPushAuth = "auth must be a 16-byte secret (base64url)"
)

// checkPushKeys refuses keys no push could ever be encrypted to (RFC
// 8291): p256dh must be an uncompressed point on P-256 (crypto/ecdh checks
// it is on the curve), auth a 16-byte secret. Both are decoded as the push
// library decodes them (base64, URL or standard alphabet, padding optional).
func checkPushKeys(p256dh, auth string) error {
	key, err := decodePushKey(p256dh)
	if err != nil {
		return badRequest(msgBadP256dh)
	}
	if _, err := ecdh.P256().NewPublicKey(key); err != nil {
		return badRequest(msgBadP256dh)
	}
	if secret, err := decodePushKey(auth); err != nil || len(secret) != 16 {
		return badRequest(msgBadPushAuth)
	}
	return nil
}

func decodePushKey(key string) ([]byte, error) {
	key = strings.TrimRight(key, "=")
	if b, err := base64.RawURLEncoding.DecodeString(key); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(key)
}

// VapidKey is data of GET /api/notifications/vapid-key.
type VapidKey struct {
	atTop
	PublicKey string `json:"publicKey"`
}

// PushEnabled is data of POST /api/notifications/enable-push/:appId.
type PushEnabled struct {
	Endpoint string `json:"endpoint"`
	ID       string `json:"id"`
	Origin   string `json:"origin"`
}
