package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	"github.com/uptrace/bun"

	"marquee/store"
)

// eventID finds a seeded event by name.
func eventID(t *testing.T, ts *testServer, name string) string {
	t.Helper()
	var e store.Event
	if err := ts.store.DB().NewSelect().Model(&e).Where("name = ?", name).Scan(context.Background()); err != nil {
		t.Fatalf("event %q: %v", name, err)
	}
	return e.ID
}

func appID(t *testing.T, ts *testServer, name string) string {
	t.Helper()
	a, err := ts.store.AppByIDOrName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func userID(t *testing.T, ts *testServer, email string) string {
	t.Helper()
	u, err := ts.store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func isoIn(d time.Duration) string { return time.Now().UTC().Add(d).Format(time.RFC3339) }

// eventBody is a valid create body with overrides.
func eventBody(over map[string]any) string {
	b := map[string]any{"name": "Test Jam", "description": "Bring, your; instruments\\", "location": "Hall 1",
		"startDate": isoIn(24 * time.Hour), "endDate": isoIn(26 * time.Hour), "type": "MEETUP"}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	out, _ := json.Marshal(b)
	return string(out)
}

func TestEventsListCalls(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testEventsListCalls(t, newTestServer(t, db)) })
}

func testEventsListCalls(t *testing.T, ts *testServer) {
	demo, acme := appID(t, ts, "demo"), appID(t, ts, "acme")
	list := "/api/events/apps/" + demo + "/events"
	summer := eventID(t, ts, "Summer Tour Kick-off")
	ts.run(t, []scenario{
		{name: "visitor", path: list, status: 401, json: map[string]any{"success": false, "message": "Authentication required"}},
		{name: "all events", path: list, as: "follower@demo.test", status: 200,
			json: map[string]any{"success": true, "data": arrayLen(10), "pagination.total": 10, "pagination.limit": 20,
				"pagination.totalPages": 1, "pagination.hasNext": false, "pagination.hasPrev": false}},
		{name: "by app name", path: "/api/events/apps/demo/events", as: "member@demo.test", status: 200,
			json: map[string]any{"pagination.total": 10}},
		// Upcoming and ongoing first, soonest first; the first is ongoing.
		{name: "order", path: list, as: "follower@demo.test", status: 200,
			json: map[string]any{"data.0.name": "Indie Music Makers Summit", "data.1.name": "Studio Open Hours",
				"data.9.name": "Midnight Bloom Release Stream"}},
		{name: "paging", path: list + "?limit=3&page=2", as: "follower@demo.test", status: 200,
			json: map[string]any{"data": arrayLen(3), "pagination.page": 2, "pagination.totalPages": 4,
				"pagination.hasNext": true, "pagination.hasPrev": true}},
		{name: "type", path: list + "?type=LIVESTREAM", as: "follower@demo.test", json: map[string]any{"pagination.total": 3}},
		{name: "type lower case", path: list + "?type=class", as: "follower@demo.test", json: map[string]any{"pagination.total": 2}},
		{name: "official", path: list + "?isOfficial=true", as: "follower@demo.test", json: map[string]any{"pagination.total": 5}},
		{name: "not official", path: list + "?isOfficial=false", as: "follower@demo.test", json: map[string]any{"pagination.total": 5}},
		{name: "featured", path: list + "?isFeatured=true", as: "follower@demo.test", json: map[string]any{"pagination.total": 4}},
		{name: "search", path: list + "?search=PORTLAND", as: "follower@demo.test", json: map[string]any{"pagination.total": 3}},
		{name: "search escapes %", path: list + "?search=%25", as: "follower@demo.test", json: map[string]any{"pagination.total": 0, "data": arrayLen(0)}},
		{name: "window", path: list + "?startDate=" + isoIn(0) + "&endDate=" + isoIn(7*24*time.Hour), as: "follower@demo.test",
			json: map[string]any{"pagination.total": 4}},
		{name: "from a date", path: list + "?startDate=" + time.Now().UTC().Add(15*24*time.Hour).Format("2006-01-02"), as: "follower@demo.test",
			json: map[string]any{"pagination.total": 1, "data.0.id": summer}},
		{name: "viewer fields", path: list + "?search=Summer", as: "follower@demo.test",
			json: map[string]any{"data.0.isAttending": true, "data.0.userRole": "ATTENDEE", "data.0.attendeeCount": 5}},
		{name: "host fields", path: list + "?search=Summer", as: "creator@demo.test",
			json: map[string]any{"data.0.isAttending": true, "data.0.userRole": "HOST"}},
		{name: "not attending", path: list + "?search=Summer", as: "moderator@demo.test",
			json: map[string]any{"data.0.isAttending": false, "data.0.userRole": nil}},
		{name: "bad type", path: list + "?type=PARTY", as: "follower@demo.test", status: 400},
		{name: "bad bool", path: list + "?isOfficial=maybe", as: "follower@demo.test", status: 400},
		{name: "bad date", path: list + "?startDate=tomorrow", as: "follower@demo.test", status: 400},
		{name: "bad page", path: list + "?page=x", as: "follower@demo.test", status: 400},
		{name: "unknown app", path: "/api/events/apps/nope/events", as: "follower@demo.test", status: 404},
		{name: "other app", path: "/api/events/apps/" + acme + "/events", as: "follower@demo.test", status: 200,
			json: map[string]any{"pagination.total": 2}},
		{name: "detail", path: "/api/events/" + summer, as: "follower@demo.test", status: 200,
			json: map[string]any{"data.id": summer, "data.attendeeCount": 5, "data.isAttending": true, "data.attendees": arrayLen(5),
				"data.attendees.0.role": "HOST", "data.attendees.0.user.username": "creator",
				"data.permissions.canLeave": true, "data.permissions.canEdit": false, "data.permissions.canJoin": false}},
		{name: "detail as host", path: "/api/events/" + summer, as: "creator@demo.test", status: 200,
			json: map[string]any{"data.permissions.canEdit": true, "data.permissions.canLeave": false,
				"data.permissions.canManageAttendees": true}},
		{name: "detail visitor", path: "/api/events/" + summer, status: 401},
		{name: "detail missing", path: "/api/events/nope", as: "follower@demo.test", status: 404,
			json: map[string]any{"message": "Event not found"}},
	})
	if err := ts.store.SetAppField(context.Background(), "demo", "features.events.enabled", "false"); err != nil {
		t.Fatal(err)
	}
	ts.run(t, []scenario{
		{name: "feature off list", path: list, as: "creator@demo.test", status: 404},
		{name: "feature off detail", path: "/api/events/" + summer, as: "creator@demo.test", status: 404},
		{name: "feature off join", method: "POST", path: "/api/events/" + summer + "/join", as: "follower@demo.test", status: 404},
		{name: "feature off page", path: "/apps/demo/events", status: 404},
	})
}

func TestEventWriteCalls(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testEventWriteCalls(t, newTestServer(t, db)) })
}

func testEventWriteCalls(t *testing.T, ts *testServer) {
	demo := appID(t, ts, "demo")
	list := "/api/events/apps/" + demo + "/events"
	ts.run(t, []scenario{
		{name: "visitor", method: "POST", path: list, body: eventBody(nil), status: 401},
		{name: "non-member", method: "POST", path: list, as: "member@demo.test", body: eventBody(nil), status: 403},
		{name: "follower", method: "POST", path: list, as: "follower@demo.test", body: eventBody(nil), status: 403},
		{name: "moderator", method: "POST", path: list, as: "moderator@demo.test", body: eventBody(nil), status: 403},
		{name: "admin below create_permission", method: "POST", path: list, as: "admin@demo.test", body: eventBody(nil), status: 403},
		{name: "blank name", method: "POST", path: list, as: "creator@demo.test", body: eventBody(map[string]any{"name": "  "}), status: 400,
			json: map[string]any{"message": "Please enter an event name"}},
		{name: "no dates", method: "POST", path: list, as: "creator@demo.test", body: eventBody(map[string]any{"endDate": nil}), status: 400,
			json: map[string]any{"message": "Please select start and end dates"}},
		{name: "end before start", method: "POST", path: list, as: "creator@demo.test",
			body: eventBody(map[string]any{"endDate": isoIn(23 * time.Hour)}), status: 400,
			json: map[string]any{"message": "End date/time must be after start date/time"}},
		{name: "end equals start", method: "POST", path: list, as: "creator@demo.test",
			body: eventBody(map[string]any{"endDate": isoIn(24 * time.Hour)}), status: 400},
		{name: "in the past", method: "POST", path: list, as: "creator@demo.test",
			body: eventBody(map[string]any{"startDate": isoIn(-2 * time.Hour)}), status: 400,
			json: map[string]any{"message": "Start date/time cannot be in the past"}},
		{name: "bad type", method: "POST", path: list, as: "creator@demo.test", body: eventBody(map[string]any{"type": "RAVE"}), status: 400},
		{name: "bad date", method: "POST", path: list, as: "creator@demo.test", body: eventBody(map[string]any{"startDate": "soon"}), status: 400},
		{name: "foreign media", method: "POST", path: list, as: "creator@demo.test", body: eventBody(map[string]any{"mediaIds": []string{"nope"}}), status: 400},
		{name: "bad json", method: "POST", path: list, as: "creator@demo.test", body: `{"name":`, status: 400},
		{name: "created", method: "POST", path: list, as: "creator@demo.test",
			body: eventBody(map[string]any{"isFeatured": true, "type": nil}), status: 201,
			json: map[string]any{"success": true, "message": "Event created", "data.name": "Test Jam", "data.type": "MEETUP",
				"data.isFeatured": true, "data.isOfficial": true, "data.userRole": "HOST", "data.isAttending": true,
				"data.attendeeCount": 1}},
	})

	// Open creation to followers: their events are neither featured nor official.
	if err := ts.store.SetAppField(context.Background(), "demo", "features.events.settings.content_settings.create_permission", "FOLLOWER"); err != nil {
		t.Fatal(err)
	}
	follower := ts.do(t, "POST", list, strings.NewReader(eventBody(map[string]any{"isFeatured": true})), commUser(t, ts, "follower@demo.test"))
	var created struct {
		Data struct {
			ID         string
			IsFeatured bool
			IsOfficial bool
			UserRole   string
		}
	}
	commJSON(t, follower, &created)
	if follower.Status != 201 || created.Data.IsFeatured || created.Data.IsOfficial || created.Data.UserRole != "HOST" {
		t.Fatalf("follower create: %d %s", follower.Status, follower.Body)
	}
	ev := "/api/events/" + created.Data.ID
	ts.run(t, []scenario{
		{name: "other follower edits", method: "PUT", path: ev, as: "subscriber@demo.test", body: `{"name":"Mine"}`, status: 403},
		{name: "moderator edits", method: "PUT", path: ev, as: "moderator@demo.test", body: `{"name":"Mine"}`, status: 403},
		{name: "visitor edits", method: "PUT", path: ev, body: `{"name":"Mine"}`, status: 401},
		{name: "host blank name", method: "PUT", path: ev, as: "follower@demo.test", body: `{"name":""}`, status: 400},
		{name: "host end before start", method: "PUT", path: ev, as: "follower@demo.test", body: `{"endDate":"` + isoIn(time.Hour) + `"}`, status: 400},
		{name: "host edits, feature ignored", method: "PUT", path: ev, as: "follower@demo.test",
			body: `{"name":"Renamed","location":"Hall 2","isFeatured":true}`, status: 200,
			json: map[string]any{"data.name": "Renamed", "data.location": "Hall 2", "data.description": "Bring, your; instruments\\",
				"data.isFeatured": false, "message": "Event updated"}},
		{name: "admin features", method: "PUT", path: ev, as: "admin@demo.test", body: `{"isFeatured":true}`, status: 200,
			json: map[string]any{"data.isFeatured": true, "data.name": "Renamed"}},
		{name: "host cannot leave", method: "DELETE", path: ev + "/leave", as: "follower@demo.test", status: 403},
		{name: "other deletes", method: "DELETE", path: ev, as: "subscriber@demo.test", status: 403},
		{name: "host deletes", method: "DELETE", path: ev, as: "follower@demo.test", status: 200,
			json: map[string]any{"message": "Event deleted"}},
		{name: "gone", path: ev, as: "follower@demo.test", status: 404},
		{name: "admin deletes creator's event", method: "DELETE", path: "/api/events/" + eventID(t, ts, "Sketch & Synth Meetup"),
			as: "admin@demo.test", status: 200},
		{name: "acme creator cannot touch demo", method: "DELETE", path: "/api/events/" + eventID(t, ts, "Summer Tour Kick-off"),
			as: "creator@acme.test", status: 403},
	})
}

func TestEventAttendanceCalls(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testEventAttendanceCalls(t, newTestServer(t, db)) })
}

func testEventAttendanceCalls(t *testing.T, ts *testServer) {
	sketch := "/api/events/" + eventID(t, ts, "Sketch & Synth Meetup")
	acme := "/api/events/" + eventID(t, ts, "Open Workshop Night")
	ts.run(t, []scenario{
		{name: "visitor joins", method: "POST", path: sketch + "/join", status: 401, json: map[string]any{"message": "Authentication required"}},
		{name: "non-member joins", method: "POST", path: sketch + "/join", as: "member@demo.test", status: 403},
		{name: "follower joins", method: "POST", path: sketch + "/join", as: "follower@demo.test", status: 200,
			json: map[string]any{"message": "Joined event", "data.isAttending": true, "data.userRole": "ATTENDEE", "data.attendeeCount": 2}},
		{name: "joins twice", method: "POST", path: sketch + "/join", as: "follower@demo.test", status: 200,
			json: map[string]any{"message": "Already attending", "data.attendeeCount": 2}},
		{name: "subscriber joins", method: "POST", path: sketch + "/join", as: "subscriber@demo.test", status: 200,
			json: map[string]any{"data.attendeeCount": 3}},
		{name: "other viewer sees count", path: sketch, as: "moderator@demo.test", status: 200,
			json: map[string]any{"data.attendeeCount": 3, "data.isAttending": false, "data.permissions.canJoin": true}},
		{name: "host cannot leave", method: "DELETE", path: sketch + "/leave", as: "creator@demo.test", status: 403,
			json: map[string]any{"message": "The event host cannot leave the event"}},
		{name: "follower leaves", method: "DELETE", path: sketch + "/leave", as: "follower@demo.test", status: 200,
			json: map[string]any{"message": "Left event", "data.isAttending": false, "data.userRole": nil, "data.attendeeCount": 2}},
		{name: "leaves twice", method: "DELETE", path: sketch + "/leave", as: "follower@demo.test", status: 200,
			json: map[string]any{"message": "Not attending", "data.attendeeCount": 2}},
		{name: "demo follower in acme", method: "POST", path: acme + "/join", as: "follower@demo.test", status: 403},
		{name: "admin follows acme", method: "POST", path: acme + "/join", as: "admin@demo.test", status: 200},
		{name: "missing event", method: "POST", path: "/api/events/nope/join", as: "follower@demo.test", status: 404},
		{name: "wrong method", method: "GET", path: sketch + "/join", as: "follower@demo.test", status: 405},
	})
}

func TestEventAttendeeCalls(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testEventAttendeeCalls(t, newTestServer(t, db)) })
}

func testEventAttendeeCalls(t *testing.T, ts *testServer) {
	id := eventID(t, ts, "Summer Tour Kick-off")
	ev := "/api/events/" + id
	follower, subscriber, creator := userID(t, ts, "follower@demo.test"), userID(t, ts, "subscriber@demo.test"), userID(t, ts, "creator@demo.test")
	member := userID(t, ts, "member@demo.test")
	ts.run(t, []scenario{
		{name: "visitor lists", path: ev + "/attendees", status: 401},
		{name: "list", path: ev + "/attendees", as: "follower@demo.test", status: 200,
			json: map[string]any{"data": arrayLen(5), "data.0.role": "HOST", "data.0.userId": creator, "pagination.limit": 50, "pagination.total": 5}},
		{name: "page", path: ev + "/attendees?limit=2&page=3", as: "follower@demo.test", status: 200,
			json: map[string]any{"data": arrayLen(1), "pagination.totalPages": 3}},
		{name: "by role", path: ev + "/attendees?role=HOST", as: "follower@demo.test", json: map[string]any{"data": arrayLen(1)}},
		{name: "bad role", path: ev + "/attendees?role=KING", as: "follower@demo.test", status: 400},
		{name: "attendee cannot manage", method: "PUT", path: ev + "/attendees/" + subscriber, as: "follower@demo.test",
			body: `{"role":"MODERATOR"}`, status: 403},
		{name: "subscriber cannot remove", method: "DELETE", path: ev + "/attendees/" + follower, as: "subscriber@demo.test", status: 403},
		{name: "host promotes", method: "PUT", path: ev + "/attendees/" + follower, as: "creator@demo.test",
			body: `{"role":"MODERATOR"}`, status: 200, json: map[string]any{"data.role": "MODERATOR", "data.user.username": "follower"}},
		{name: "event moderator manages", method: "PUT", path: ev + "/attendees/" + subscriber, as: "follower@demo.test",
			body: `{"role":"MODERATOR"}`, status: 200},
		{name: "moderators listed", path: ev + "/attendees?role=MODERATOR", as: "follower@demo.test", json: map[string]any{"data": arrayLen(2)}},
		{name: "app moderator demotes", method: "PUT", path: ev + "/attendees/" + subscriber, as: "moderator@demo.test",
			body: `{"role":"ATTENDEE"}`, status: 200, json: map[string]any{"data.role": "ATTENDEE"}},
		{name: "no HOST promotion", method: "PUT", path: ev + "/attendees/" + subscriber, as: "creator@demo.test", body: `{"role":"HOST"}`, status: 400},
		{name: "bad role", method: "PUT", path: ev + "/attendees/" + subscriber, as: "creator@demo.test", body: `{"role":"ADMIN"}`, status: 400},
		{name: "host unchanged", method: "PUT", path: ev + "/attendees/" + creator, as: "admin@demo.test", body: `{"role":"ATTENDEE"}`, status: 403,
			json: map[string]any{"message": "The event host cannot be changed"}},
		{name: "host not removed", method: "DELETE", path: ev + "/attendees/" + creator, as: "follower@demo.test", status: 403},
		{name: "not attending", method: "PUT", path: ev + "/attendees/" + userID(t, ts, "moderator@demo.test"), as: "creator@demo.test",
			body: `{"role":"MODERATOR"}`, status: 404},
		{name: "event moderator removes", method: "DELETE", path: ev + "/attendees/" + member, as: "follower@demo.test", status: 200,
			json: map[string]any{"message": "Attendee removed"}},
		{name: "count after remove", path: ev, as: "creator@demo.test", json: map[string]any{"data.attendeeCount": 4}},
		{name: "acme creator cannot manage", method: "DELETE", path: ev + "/attendees/" + subscriber, as: "creator@acme.test", status: 403},
	})
}

// TestConcurrentJoins: 100 members join at once, twice each; the count is
// exactly 100 plus the host.
func TestConcurrentJoins(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	demo := appID(t, ts, "demo")
	id := eventID(t, ts, "Sketch & Synth Meetup")
	const n = 100
	headers := make([]map[string]string, n)
	for i := range headers {
		u := &store.User{ID: store.NewID(), Username: fmt.Sprintf("joiner%d", i), Email: fmt.Sprintf("joiner%d@demo.test", i),
			PasswordHash: "x", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if _, err := ts.store.DB().NewInsert().Model(u).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ts.store.SetMemberRole(ctx, demo, u.ID, store.RoleFollower); err != nil {
			t.Fatal(err)
		}
		headers[i] = commUser(t, ts, u.Email)
	}
	var wg sync.WaitGroup
	failures := make(chan string, 2*n)
	for round := 0; round < 2; round++ {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(h map[string]string) {
				defer wg.Done()
				if r := ts.do(t, "POST", "/api/events/"+id+"/join", nil, h); r.Status != 200 {
					failures <- r.Body
				}
			}(headers[i])
		}
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("join failed: %s", f)
	}
	var got struct{ Data store.EventView }
	commJSON(t, ts.do(t, "GET", "/api/events/"+id, nil, headers[0]), &got)
	if got.Data.AttendeeCount != n+1 {
		t.Fatalf("attendeeCount %d, want %d", got.Data.AttendeeCount, n+1)
	}
}

func TestEventCalendar(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testEventCalendar(t, newTestServer(t, db)) })
}

func testEventCalendar(t *testing.T, ts *testServer) {
	h := commUser(t, ts, "creator@demo.test")
	name := "Jam: Bass, Drums; & \\ Keys\nSecond line"
	r := ts.do(t, "POST", "/api/events/apps/demo/events", strings.NewReader(eventBody(map[string]any{"name": "Jam",
		"description": "Line one\r\nLine two, with; marks"})), h)
	var created struct{ Data store.EventView }
	commJSON(t, r, &created)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	// A name stored with a line break (input refuses them now, as it did
	// not before) is escaped in the calendar all the same.
	if _, err := ts.store.DB().NewUpdate().Table("events").Set("name = ?", name).Where("id = ?", created.Data.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts.store.InvalidateLanding(context.Background(), "demo")
	res := ts.do(t, "GET", "/apps/demo/events/"+created.Data.ID+"/calendar.ics", nil, nil)
	if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/calendar") {
		t.Fatalf("ics: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
	if cd := res.Header.Get("Content-Disposition"); cd != `attachment; filename="Jam__Bass__Drums______Keys_Second_line.ics"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	for _, line := range strings.Split(res.Body, "\r\n") {
		if len(line) > 75 {
			t.Errorf("unfolded line: %q", line)
		}
	}
	cal, err := ics.ParseCalendar(strings.NewReader(res.Body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, res.Body)
	}
	events := cal.Events()
	if len(events) != 1 {
		t.Fatalf("%d events", len(events))
	}
	ev := events[0]
	if ev.Id() != created.Data.ID+"@marquee" {
		t.Errorf("UID %q", ev.Id())
	}
	if got := ev.GetProperty(ics.ComponentPropertySummary).Value; got != name {
		t.Errorf("summary %q", got)
	}
	if got := ev.GetProperty(ics.ComponentPropertyDescription).Value; got != "Line one\nLine two, with; marks" {
		t.Errorf("description %q", got)
	}
	start, err := ev.GetStartAt()
	if err != nil || !start.Equal(created.Data.StartDate) {
		t.Errorf("start %v %v, want %v", start, err, created.Data.StartDate)
	}
	end, err := ev.GetEndAt()
	if err != nil || !end.Equal(created.Data.EndDate) {
		t.Errorf("end %v %v", end, err)
	}
	if _, err := ev.GetDtStampTime(); err != nil {
		t.Errorf("DTSTAMP: %v", err)
	}
	if !strings.Contains(res.Body, "DTSTART:"+created.Data.StartDate.UTC().Format("20060102T150405Z")) {
		t.Errorf("DTSTART not in UTC form:\n%s", res.Body)
	}

	feed := ts.do(t, "GET", "/apps/demo/events.ics", nil, nil)
	cal, err = ics.ParseCalendar(strings.NewReader(feed.Body))
	if err != nil || feed.Status != 200 {
		t.Fatalf("feed: %d %v", feed.Status, err)
	}
	// 6 seeded events have not ended, plus the new one.
	if n := len(cal.Events()); n != 7 {
		t.Errorf("feed has %d events, want 7", n)
	}
	if r := ts.do(t, "GET", "/apps/demo/events/nope/calendar.ics", nil, nil); r.Status != 404 {
		t.Errorf("missing event ics: %d", r.Status)
	}
	if r := ts.do(t, "GET", "/apps/acme/events/"+created.Data.ID+"/calendar.ics", nil, nil); r.Status != 404 {
		t.Errorf("other app's event ics: %d", r.Status)
	}
}

func TestEventPages(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) { testEventPages(t, newTestServer(t, db)) })
}

func testEventPages(t *testing.T, ts *testServer) {
	summer := eventID(t, ts, "Summer Tour Kick-off")
	studio := eventID(t, ts, "Studio Open Hours")
	acmeEvent := eventID(t, ts, "Open Workshop Night")
	ts.run(t, []scenario{
		{name: "list for visitors", path: "/apps/demo/events", status: 200,
			contains: []string{"<h1>Events</h1>", "Summer Tour Kick-off", "Happening now", "Upcoming", "Past", `name="isOfficial"`,
				" UTC</time>", `data-island="LocalTime"`},
			absent: []string{"Create First Event", "New Event"}},
		{name: "description cut at 100", path: "/apps/demo/events?search=Indie", status: 200,
			contains: []string{"Four days of talks and workshops on releasing music independently. Luna speaks on day three about ar..."}},
		{name: "media preview +N", path: "/apps/demo/events?search=Midnight", status: 200, contains: []string{"Midnight Bloom"}},
		{name: "paging", path: "/apps/demo/events?limit=1&page=2&type=LIVESTREAM", status: 200, contains: []string{"Page 2 of 3", `rel="prev"`, `rel="next"`, `href="/apps/demo/events?type=LIVESTREAM&amp;limit=1&amp;page=3"`}},
		{name: "load more for visitors is a link", path: "/apps/demo/events?limit=3", status: 200,
			contains: []string{`href="/apps/demo/events?limit=3&amp;page=2">Load More Events</a>`}, absent: []string{`data-island="EventsMore"`}},
		{name: "load more island", path: "/apps/demo/events?limit=2&type=LIVESTREAM", as: "follower@demo.test", status: 200,
			contains: []string{`data-island="EventsMore"`, "Load More Events", `&quot;query&quot;:&quot;type=LIVESTREAM&amp;limit=2&quot;`}},
		{name: "no load more on the last page", path: "/apps/demo/events", as: "follower@demo.test", status: 200, absent: []string{"Load More Events"}},
		{name: "filtered empty", path: "/apps/demo/events?search=zzzz", as: "creator@demo.test", status: 200,
			contains: []string{"No events found"}, absent: []string{"Create First Event"}},
		{name: "bad filter", path: "/apps/demo/events?type=RAVE", status: 400},
		{name: "detail", path: "/apps/demo/events/" + summer, status: 200,
			contains: []string{"<h1>Summer Tour Kick-off</h1>", `"@type":"Event"`, "EventScheduled", `"organizer":{"@type":"Organization","name":"Demo Studio"`, "OfflineEventAttendanceMode",
				"Add to Calendar", "/calendar.ics", "Get Ticket"},
			absent: []string{"Attendees (", "Sign in to join"}},
		// The tour sells its ticket (the seed links it); a free event asks a visitor to sign in.
		{name: "livestream is online", path: "/apps/demo/events/" + studio, status: 200, contains: []string{"OnlineEventAttendanceMode", "Sign in to join"}},
		{name: "detail as attendee", path: "/apps/demo/events/" + summer, as: "follower@demo.test", status: 200,
			contains: []string{"Leave Event", `name="action" value="leave"`, "Attendees (5)", "Event Host"},
			absent:   []string{"Make Moderator", "Edit Event"}},
		{name: "detail as host", path: "/apps/demo/events/" + summer, as: "creator@demo.test", status: 200,
			contains: []string{"Edit Event", "Delete Event", "Make Moderator", "Remove"}, absent: []string{"Leave Event", "Join Event"}},
		{name: "detail as non-attendee member", path: "/apps/demo/events/" + studio, as: "follower@demo.test", status: 200,
			contains: []string{"Join Event"}},
		{name: "other app's event", path: "/apps/demo/events/" + acmeEvent, status: 404, contains: []string{"Event not found"}},
		{name: "missing event", path: "/apps/demo/events/nope", status: 404},
		{name: "create form", path: "/apps/demo/create-event", as: "creator@demo.test", status: 200,
			contains: []string{"New Event", "Create Event", "Featured event", `value="MEETUP"`, `value="18:00"`, `value="20:00"`}},
		{name: "create form, admin cannot create", path: "/apps/demo/create-event", as: "admin@demo.test", status: 200,
			contains: []string{"You do not have permission to create events"}},
	})

	// Join and leave without JavaScript: the form posts and comes back.
	h := commUser(t, ts, "follower@demo.test")
	h["Content-Type"] = "application/x-www-form-urlencoded"
	r := ts.do(t, "POST", "/apps/demo/events/"+studio+"/attend", strings.NewReader("action=join"), h)
	if r.Status != 303 || r.Header.Get("Location") != "/apps/demo/events/"+studio {
		t.Fatalf("form join: %d %s", r.Status, r.Header.Get("Location"))
	}
	ts.run(t, []scenario{{name: "joined by form", path: "/api/events/" + studio, as: "follower@demo.test",
		json: map[string]any{"data.isAttending": true, "data.attendeeCount": 5}}})
	// Leaving asks first: the unconfirmed post lands on the question.
	r = ts.do(t, "POST", "/apps/demo/events/"+studio+"/attend", strings.NewReader("action=leave"), h)
	if r.Status != 303 || r.Header.Get("Location") != "/apps/demo/events/"+studio+"?confirm=leave" {
		t.Fatalf("form leave unconfirmed: %d %s", r.Status, r.Header.Get("Location"))
	}
	r = ts.do(t, "POST", "/apps/demo/events/"+studio+"/attend", strings.NewReader("action=leave&confirm=yes"), h)
	if r.Status != 303 {
		t.Fatalf("form leave: %d", r.Status)
	}
	ts.run(t, []scenario{{name: "left by form", path: "/api/events/" + studio, as: "follower@demo.test",
		json: map[string]any{"data.isAttending": false, "data.attendeeCount": 4}}})
	h = commUser(t, ts, "creator@demo.test")
	h["Content-Type"] = "application/x-www-form-urlencoded"
	if r := ts.do(t, "POST", "/apps/demo/events/"+studio+"/attend", strings.NewReader("action=leave"), h); r.Status != 403 {
		t.Errorf("host leaves by form: %d", r.Status)
	}
	if r := ts.do(t, "POST", "/apps/demo/events/"+studio+"/attend", strings.NewReader("action=join"), nil); r.Status != 303 ||
		!strings.Contains(r.Header.Get("Location"), "/authenticate/signin") {
		t.Errorf("visitor form join: %d %s", r.Status, r.Header.Get("Location"))
	}
}

// TestCreateEventForm: the create-event form works without JavaScript.
func TestCreateEventForm(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	post := func(email, form string) response {
		h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		if email != "" {
			h = commUser(t, ts, email)
			h["Content-Type"] = "application/x-www-form-urlencoded"
		}
		return ts.do(t, "POST", "/apps/demo/create-event", strings.NewReader(form), h)
	}
	tomorrow := time.Now().UTC().Add(24 * time.Hour).Format("2006-01-02")
	good := "name=Form+Jam&description=Plain+HTML&type=CLASS&location=Hall&startDate=" + tomorrow + "&startTime=18:00&endDate=" +
		tomorrow + "&endTime=20:00&isFeatured=true"
	r := post("creator@demo.test", good)
	if r.Status != 303 || !strings.HasPrefix(r.Header.Get("Location"), "/apps/demo/events/") {
		t.Fatalf("create: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	id := strings.TrimPrefix(r.Header.Get("Location"), "/apps/demo/events/")
	ts.run(t, []scenario{{name: "created by form", path: "/api/events/" + id, as: "creator@demo.test",
		json: map[string]any{"data.name": "Form Jam", "data.type": "CLASS", "data.isFeatured": true, "data.isOfficial": true,
			"data.userRole": "HOST", "data.startDate": tomorrow + "T18:00:00Z"}}})

	r = post("creator@demo.test", "name=Kept+Name&startDate="+tomorrow+"&startTime=20:00&endDate="+tomorrow+"&endTime=18:00")
	if r.Status != 400 || !strings.Contains(r.Body, "End date/time must be after start date/time") || !strings.Contains(r.Body, `value="Kept Name"`) {
		t.Errorf("refused form: %d %.500s", r.Status, r.Body)
	}
	r = post("creator@demo.test", "name=&startDate="+tomorrow+"&startTime=18:00&endDate="+tomorrow+"&endTime=20:00")
	if r.Status != 400 || !strings.Contains(r.Body, "Please enter an event name") {
		t.Errorf("blank name: %d", r.Status)
	}
	if r := post("follower@demo.test", good); r.Status != 403 {
		t.Errorf("follower: %d", r.Status)
	}
	if r := post("", good); r.Status != 303 || !strings.Contains(r.Header.Get("Location"), "/authenticate/signin") {
		t.Errorf("visitor: %d %s", r.Status, r.Header.Get("Location"))
	}
}
