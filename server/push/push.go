// Package push delivers notifications to browsers through the Web Push
// protocol (RFC 8030) with VAPID (RFC 8292) and aes128gcm payloads (RFC 8291).
package push

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"marquee/server/access"
	"marquee/server/outbound"
	"marquee/store"
)

// Keys is the server's VAPID key pair, base64url as browsers take them.
type Keys struct {
	Public  string `json:"public"`
	Private string `json:"private"`
}

const secretName = "vapid-keys"

// Sender loads the VAPID keys once (generating and storing them on the very
// first use) and sends notifications to every subscription of their
// recipients. It runs inside the push job (server/jobs), never in a request.
type Sender struct {
	Store *store.Storage
	// Subscriber is the VAPID contact (mailto: or https:) push services may
	// use to reach the operator.
	Subscriber string
	// Client sends the requests; nil is outbound.Client: public addresses
	// only, checked on every connection (an endpoint stored before the
	// check, or a name re-pointed inside since, is refused at dial time).
	Client webpush.HTTPClient
	Logger *slog.Logger
	// AppBase answers where an app lives, absolute: its verified custom
	// domain's origin, or the main site's /apps/{name} (the server's
	// appBaseURL). A notice's link is made absolute on it, so a click
	// opens the app's own address straight away, from a subscription of
	// either origin. Nil leaves links as stored (/apps/{name}/...).
	AppBase func(ctx context.Context, appID, appName string) string

	mu     sync.Mutex
	keys   *Keys
	client *http.Client
}

func (s *Sender) defaultClient() *http.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		s.client = outbound.Client(15 * time.Second)
	}
	return s.client
}

// Keys returns the stored key pair.
func (s *Sender) Keys(ctx context.Context) (Keys, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil {
		return *s.keys, nil
	}
	raw, err := s.Store.StoredSecret(ctx, secretName, func() (string, error) {
		priv, pub, err := webpush.GenerateVAPIDKeys()
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(Keys{Public: pub, Private: priv})
		return string(b), err
	})
	if err != nil {
		return Keys{}, err
	}
	var k Keys
	if err := json.Unmarshal([]byte(raw), &k); err != nil || k.Public == "" || k.Private == "" {
		return Keys{}, fmt.Errorf("stored VAPID keys are unreadable")
	}
	s.keys = &k
	return k, nil
}

// Payload is what the service worker receives (public/sw.js).
type Payload struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
	URL   string `json:"url"`
}

// Result counts one delivery.
type Result struct{ Sent, Gone, Failed int }

// Deliver sends every notification to its recipient's subscriptions in the
// notification's app: those of the app's current origin, or, for a member
// with none there, those of the other (byOrigin). Subscriptions the push service says are gone (404,
// 410) are deleted; other failures are logged and left for the next notice.
func (s *Sender) Deliver(ctx context.Context, rows []store.Notification) (Result, error) {
	var res Result
	if len(rows) == 0 {
		return res, nil
	}
	keys, err := s.Keys(ctx)
	if err != nil {
		return res, err
	}
	byApp := map[string][]store.Notification{}
	for _, n := range rows {
		byApp[n.AppID] = append(byApp[n.AppID], n)
	}
	for appID, list := range byApp {
		users := make([]string, 0, len(list))
		for _, n := range list {
			users = append(users, n.UserID)
		}
		subs, err := s.Store.PushSubscriptionsOf(ctx, appID, users)
		if err != nil {
			return res, err
		}
		if len(subs) == 0 {
			// Most notices reach members with no browser subscribed: they
			// cost one query, not the app's load.
			continue
		}
		title := "Notification"
		// The app's content, not its counts: every like moves those, and
		// rebuilding them for each delivery took 7% of the server under
		// 100 writes a second.
		app, err := s.Store.LandingContent(ctx, appID)
		if err == nil {
			title = app.Settings.Basic.DisplayName
			if title == "" {
				title = app.Name
			}
		}
		byUser := map[string][]store.PushSubscription{}
		for _, sub := range subs {
			byUser[sub.UserID] = append(byUser[sub.UserID], sub)
		}
		current := ""
		if s.AppBase != nil {
			name := ""
			if app != nil {
				name = app.Name
			}
			current = originOf(s.AppBase(ctx, appID, name))
		}
		for _, n := range list {
			text, link := n.Content, n.Link
			if app != nil && len(byUser[n.UserID]) > 0 {
				if text, link, err = s.noticeFor(ctx, app, n); err != nil {
					return res, err
				}
			}
			if app != nil && s.AppBase != nil {
				link = onAppBase(s.AppBase(ctx, app.ID, app.Name), app.Name, link)
			}
			body, _ := json.Marshal(Payload{ID: n.ID, Title: title, Body: text, URL: link})
			for _, group := range byOrigin(byUser[n.UserID], current) {
				reached := false
				for _, sub := range group {
					out, status, detail := s.send(ctx, keys, body, sub)
					switch out {
					case sent:
						res.Sent++
						reached = true
					case gone:
						res.Gone++
						if err := s.Store.DeletePushSubscription(ctx, sub.ID); err != nil {
							return res, err
						}
					default:
						res.Failed++
						// Tried: the other origin's would be a second copy
						// whenever this one arrives after all.
						reached = true
						// Recorded for the operator (`marquee jobs failed`);
						// the notification itself stays in the app.
						if err := s.Store.RecordPushFailure(ctx, sub, n.ID, status, detail); err != nil {
							s.logger().Warn("record push failure", "err", err)
						}
					}
				}
				if reached {
					break
				}
			}
		}
	}
	return res, nil
}

// byOrigin orders a member's subscriptions for one notice: those made on
// the app's current origin (its verified domain, else the main site), then
// the rest (the other origin's, and rows of no known origin). The first
// group with any is sent to; the next only when every one of the group is
// gone. So a browser subscribed on both origins (two service workers, two
// subscriptions) gets the notice once, and a member subscribed only on the
// origin the app has just left, or not yet reached, still gets it. With
// no current origin (no AppBase) all are one group.
func byOrigin(subs []store.PushSubscription, current string) [][]store.PushSubscription {
	if current == "" {
		return [][]store.PushSubscription{subs}
	}
	var here, elsewhere []store.PushSubscription
	for _, sub := range subs {
		if sub.Origin == current {
			here = append(here, sub)
		} else {
			elsewhere = append(elsewhere, sub)
		}
	}
	return [][]store.PushSubscription{here, elsewhere}
}

// originOf is scheme://host[:port] of an absolute URL ("" when it is not).
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// onAppBase makes a notice's link (/apps/{name}/path) absolute on the
// app's base URL: a custom domain's pages live at its root.
func onAppBase(base, appName, link string) string {
	rest, ok := strings.CutPrefix(link, "/apps/"+appName)
	if !ok || rest != "" && !strings.ContainsAny(rest[:1], "/?#") {
		return link
	}
	if !strings.Contains(base, "/apps/") && !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	return base + rest
}

type outcome int

const (
	sent outcome = iota
	gone
	failed
)

// send answers the outcome, and for a failure the push service's status
// (0 when it was not reached) and what went wrong.
func (s *Sender) send(ctx context.Context, keys Keys, body []byte, sub store.PushSubscription) (outcome, int, string) {
	client := s.Client
	if client == nil {
		client = s.defaultClient()
	}
	subscriber := s.Subscriber
	if subscriber == "" {
		subscriber = "mailto:push@marquee.invalid"
	}
	resp, err := webpush.SendNotificationWithContext(ctx, body,
		&webpush.Subscription{Endpoint: sub.Endpoint, Keys: webpush.Keys{P256dh: sub.P256dh, Auth: sub.Auth}},
		&webpush.Options{HTTPClient: client, Subscriber: strings.TrimPrefix(subscriber, "mailto:"), TTL: 24 * 60 * 60,
			Urgency: webpush.UrgencyNormal, VAPIDPublicKey: keys.Public, VAPIDPrivateKey: keys.Private})
	if err != nil {
		s.logger().Warn("push send failed", "subscription", sub.ID, "err", err)
		return failed, 0, err.Error()
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return gone, resp.StatusCode, ""
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return sent, resp.StatusCode, ""
	}
	s.logger().Warn("push service refused", "subscription", sub.ID, "status", resp.StatusCode)
	return failed, resp.StatusCode, "push service answered " + resp.Status
}

func (s *Sender) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// noticeFor is a notification's text and link as its recipient may read
// them now (access.ContentFor, the rule the notifications list applies): a
// member the subscription gate holds back is told there is something new
// for members, not what it says.
func (s *Sender) noticeFor(ctx context.Context, app *store.AppView, n store.Notification) (string, string, error) {
	if !store.GatesVisitors(app.Settings) || access.NoticeText(access.ContentTeaser, n.Kind, n.Content) == n.Content {
		return n.Content, n.Link, nil
	}
	role := store.RoleAuthenticated
	m, err := s.Store.MembershipOf(ctx, app.ID, n.UserID)
	if err != nil {
		return "", "", err
	}
	if m != nil {
		role = m.Role
	}
	subscribed := false
	if access.Gated(app.Settings, role, false) {
		if subscribed, err = s.Store.HasValidSubscription(ctx, app.ID, n.UserID, time.Now()); err != nil {
			return "", "", err
		}
	}
	text := access.NoticeText(access.ContentFor(app.Settings, role, subscribed), n.Kind, n.Content)
	if text == n.Content {
		return n.Content, n.Link, nil
	}
	return text, "/apps/" + app.Name, nil
}
