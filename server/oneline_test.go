package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"marquee/store"
)

// One-line fields refuse control characters at input with a 400 naming
// the field (issue 41 item 7): a CR or LF in an app's display name stopped
// all of its mail, and event and item names with line breaks ended up in
// subjects. Multi-line text (a donation message) keeps its lines but not
// other control characters.
func TestOneLineFieldsRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo, err := ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	creator := withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/json")
	follower := withSession(sessionFor(t, ts, "follower@demo.test"), "Content-Type", "application/json")
	start := "2030-01-01T18:00:00Z"
	jsonOf := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	event := func(name, location string) string {
		b, _ := json.Marshal(map[string]string{"name": name, "location": location, "startDate": start, "endDate": "2030-01-01T20:00:00Z"})
		return string(b)
	}
	item := func(name string) string {
		b, _ := json.Marshal(map[string]any{"name": name, "type": "DIGITAL", "price": 100})
		return string(b)
	}
	for _, bad := range []string{"Evil\r\nBcc: victim@example.com", "Launch\nparty", "tab\there", "esc\x1b[31m", "line\u2028sep", "c1\u0085c1"} {
		for _, c := range []struct {
			name, target, body, field string
			h                         map[string]string
		}{
			{"new app's display name", "/api/apps", jsonOf(map[string]string{"name": "ol-app", "displayName": bad}), "displayName", creator},
			{"event name", "/api/events/apps/" + demo.ID + "/events", event(bad, ""), "name", creator},
			{"event location", "/api/events/apps/" + demo.ID + "/events", event("Launch", bad), "location", creator},
			{"item name", "/api/store/" + demo.Store.ID + "/items", item(bad), "name", creator},
		} {
			r := ts.do(t, "POST", c.target, strings.NewReader(c.body), c.h)
			var out struct {
				Fields map[string]string `json:"fields"`
			}
			_ = json.Unmarshal([]byte(r.Body), &out)
			if r.Status != http.StatusBadRequest || out.Fields[c.field] == "" {
				t.Errorf("%s %q: %d %s, want 400 on %s", c.name, bad, r.Status, r.Body, c.field)
			}
		}
		form := withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/x-www-form-urlencoded")
		if r := ts.do(t, "POST", "/apps/demo/studio/profile", strings.NewReader("displayName="+url.QueryEscape(bad)+"&lang=en&version=1.0.0"), form); r.Status != http.StatusBadRequest {
			t.Errorf("studio display name %q: %d", bad, r.Status)
		}
		if err := ts.store.SetAppField(ctx, "demo", "basic.displayName", bad); err == nil {
			t.Errorf("app set basic.displayName %q: taken", bad)
		}
	}
	if app, _ := ts.store.AppByIDOrName(ctx, "demo"); !store.OneLine(app.Settings.Basic.DisplayName) {
		t.Errorf("display name stored: %q", app.Settings.Basic.DisplayName)
	}
	// A donation message keeps its lines, not an escape sequence.
	donate := func(msg string) response {
		b, _ := json.Marshal(map[string]any{"appId": demo.ID, "amount": 500, "currency": "USD", "message": msg})
		return ts.do(t, "POST", "/api/donations/create", strings.NewReader(string(b)), follower)
	}
	if r := donate("Thank you!\nSee you Friday."); r.Status != http.StatusCreated {
		t.Errorf("two-line donation message: %d %s", r.Status, r.Body)
	}
	if r := donate("hi\x1b[2J"); r.Status != http.StatusBadRequest {
		t.Errorf("donation message with an escape: %d %s", r.Status, r.Body)
	}
}
