package server

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/server/jobs"
	"marquee/store"
)

// TestWeeklyDigest: a member who chooses the weekly digest gets, at the
// app's digest day and hour in the app's time zone, one mail with the new
// posts and events of the week, however many runs overlap; not before the
// hour, not hours late, nothing in a week with nothing new; no newsletter
// mail for each post meanwhile. Members without it, or with all e-mail
// off, get no digest.
func TestWeeklyDigest(t *testing.T) {
	t.Parallel()
	f := newsletterServer(t)
	ts, ctx := f.ts, context.Background()
	zone := "America/New_York"
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	// The digest's time is the next whole hour in New York.
	now := time.Now().In(loc)
	slot := time.Date(now.Year(), now.Month(), now.Day(), now.Hour(), 0, 0, 0, loc).Add(time.Hour)
	if err := ts.store.SetNewsletterSettings(ctx, f.app.ID, zone, store.NewsletterSettings{DigestDay: int(slot.Weekday()), DigestHour: slot.Hour()}); err != nil {
		t.Fatal(err)
	}

	sub := ts.as(t, subscriber)
	r := send(t, sub, "PUT", "/api/notifications/preferences/demo", `{"mutedAll":false,"mutedKinds":[],"emailDigest":true}`)
	if r.Status != 200 || !strings.Contains(r.Body, `"emailDigest":true`) {
		t.Fatalf("digest on: %d %s", r.Status, r.Body)
	}
	// The moderator takes it too, but switched all of the app's e-mail off.
	if r := send(t, ts.as(t, "moderator@demo.test"), "PUT", "/api/notifications/preferences/demo",
		`{"mutedAll":false,"mutedKinds":[],"emailDigest":true,"emailMutedAll":true}`); r.Status != 200 {
		t.Fatalf("moderator: %d %s", r.Status, r.Body)
	}

	// The week's news: a mailed post, a quiet post and an event.
	mailed := f.mailPost(t, "Digestphrase mailed post")
	body, _ := json.Marshal(map[string]any{"type": "POST", "communityId": f.cid, "content": "Digestphrase quiet post"})
	f.creator.must(201, "POST", "/api/messages", string(body))
	start := time.Now().Add(72 * time.Hour).UTC()
	body, _ = json.Marshal(map[string]any{"name": "Digestphrase listening party", "startDate": start.Format(time.RFC3339), "endDate": start.Add(time.Hour).Format(time.RFC3339)})
	f.creator.must(201, "POST", "/api/events/apps/demo/events", string(body))

	// The post's newsletter skips the digest's reader and reaches the others.
	runNewsletterJobs(t, ts)
	if n := f.mailsWith(t, subscriber, "Digestphrase"); n != 0 {
		t.Errorf("the digest's reader got %d mails for each post", n)
	}
	if n := f.mailsWith(t, follower, "Digestphrase mailed post"); n != 1 {
		t.Errorf("a follower without the digest got %d newsletter mails", n)
	}
	if st := recipientsOf(t, ts, mailed); st["total"] == 0 {
		t.Fatal("the post had no recipients")
	}

	// Before the hour, and past its lateness, nothing is due.
	for _, at := range []time.Time{slot.Add(-time.Minute), slot.Add(store.DigestLateness + time.Minute)} {
		if n, err := jobs.QueueDigests(ctx, ts.store, at); err != nil || n != 0 {
			t.Fatalf("at %s: %d digests, %v", at, n, err)
		}
	}

	// At the hour, thirty overlapping runs write one digest.
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := jobs.QueueDigests(ctx, ts.store, slot.Add(5*time.Minute))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != 1 {
		t.Fatalf("%d digests written, want 1 (the subscriber's)", total)
	}
	runMailJobs(t, ts)
	digests := func(addr string) []string {
		var ids []string
		for _, s := range f.mp.To(t, addr) {
			if strings.HasPrefix(s.Subject, "This week in") {
				ids = append(ids, s.ID)
			}
		}
		return ids
	}
	got := digests(subscriber)
	if len(got) != 1 {
		t.Fatalf("the subscriber got %d digests", len(got))
	}
	msg := f.mp.Message(t, got[0])
	if !regexp.MustCompile(`\d+ new posts and \d+ new events? since`).MatchString(msg.Text) {
		t.Errorf("the digest's summary: %s", msg.Text)
	}
	for _, want := range []string{"Digestphrase mailed post", "Digestphrase quiet post", "Digestphrase listening party",
		"http://main.test/apps/demo/posts/" + mailed} {
		if !strings.Contains(msg.HTML, want) || !strings.Contains(msg.Text, want) {
			t.Errorf("the digest lacks %q", want)
		}
	}
	for _, addr := range []string{follower, "moderator@demo.test", "creator@demo.test"} {
		if n := len(digests(addr)); n != 0 {
			t.Errorf("%s got %d digests", addr, n)
		}
	}

	// The next week has nothing new: no digest.
	if n, err := jobs.QueueDigests(ctx, ts.store, slot.AddDate(0, 0, 7).Add(5*time.Minute)); err != nil || n != 0 {
		t.Fatalf("an empty week wrote %d digests (%v)", n, err)
	}

	// Without JavaScript, the profile's e-mail form turns it off again.
	prefs := send(t, sub, "GET", "/apps/demo/profile", "")
	if !strings.Contains(prefs.Body, `name="emailDigest" checked=""`) {
		i := strings.Index(prefs.Body, "emailDigest")
		t.Fatalf("the profile does not show the digest as chosen: %d %.300s", prefs.Status, prefs.Body[max(i, 0):])
	}
	if r := send(t, sub, "POST", "/apps/demo/notifications/settings", "emailForm=1"); r.Status != 303 {
		t.Fatalf("settings form: %d", r.Status)
	}
	p, err := ts.store.NotificationPreferences(ctx, f.app.ID, userByEmail(t, ts, subscriber).ID)
	if err != nil || p.EmailDigest {
		t.Fatalf("the digest is still on (%v)", err)
	}
}

// TestDigestSlot: the digest's time is the latest chosen weekday and hour
// at or before now, in the app's zone, across a daylight-saving change.
func TestDigestSlot(t *testing.T) {
	t.Parallel()
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	monday9 := store.NewsletterSettings{DigestDay: int(time.Monday), DigestHour: 9}
	cases := []struct{ now, want time.Time }{
		// Monday 09:00 itself, and a minute before (the week before).
		{time.Date(2026, 11, 30, 9, 0, 0, 0, lisbon), time.Date(2026, 11, 30, 9, 0, 0, 0, lisbon)},
		{time.Date(2026, 11, 30, 8, 59, 0, 0, lisbon), time.Date(2026, 11, 23, 9, 0, 0, 0, lisbon)},
		// Sunday evening: the Monday before.
		{time.Date(2026, 11, 29, 20, 0, 0, 0, lisbon), time.Date(2026, 11, 23, 9, 0, 0, 0, lisbon)},
		// The week clocks went back (Sunday October 25, 2026).
		{time.Date(2026, 10, 26, 9, 30, 0, 0, lisbon), time.Date(2026, 10, 26, 9, 0, 0, 0, lisbon)},
	}
	for _, c := range cases {
		if got := store.DigestSlot(monday9, lisbon, c.now.UTC()); !got.Equal(c.want) {
			t.Errorf("at %s: slot %s, want %s", c.now, got, c.want)
		}
	}
}
