package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

func idOf(t *testing.T, db *bun.DB, email string) string {
	t.Helper()
	var id string
	if err := db.NewSelect().Table("users").Column("id").Where("email = ?", email).Scan(context.Background(), &id); err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return id
}

// unreadOf maps email to the kinds of that user's unread notifications in the app.
func unreadKinds(t *testing.T, s *store.Storage, appID, userID string) []string {
	t.Helper()
	p, err := s.UnreadNotifications(context.Background(), appID, userID, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, n := range p.Notifications {
		out = append(out, n.Kind)
	}
	return out
}

// runFanOuts works the fan-out jobs waiting in the outbox as server/jobs
// would, and answers how many notifications the push jobs name.
func runFanOuts(t *testing.T, s *store.Storage) int {
	t.Helper()
	ctx := context.Background()
	pushed := 0
	for {
		var jobs []store.JobOutbox
		if err := s.DB().NewSelect().Model(&jobs).Where("kind IN (?)", bun.List([]string{store.JobNotifyFanOut, store.JobPushNotifications})).
			Order("id ASC").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return pushed
		}
		pushed += runJobs(t, s, jobs)
	}
}

func runJobs(t *testing.T, s *store.Storage, jobs []store.JobOutbox) int {
	ctx := context.Background()
	pushed := 0
	for _, j := range jobs {
		switch j.Kind {
		case store.JobNotifyFanOut:
			var n store.Notice
			if err := json.Unmarshal([]byte(j.Args), &n); err != nil {
				t.Fatal(err)
			}
			if _, err := s.FanOut(ctx, n); err != nil {
				t.Fatal(err)
			}
		case store.JobPushNotifications:
			var p store.PushJob
			if err := json.Unmarshal([]byte(j.Args), &p); err != nil {
				t.Fatal(err)
			}
			pushed += len(p.IDs)
		default:
			continue
		}
		if _, err := s.DB().NewDelete().Model((*store.JobOutbox)(nil)).Where("id = ?", j.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return pushed
}

func TestNotificationTriggers(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := seeded(t, db, store.NewMemoryCache())
		demo, err := s.Landing(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		acme, err := s.Landing(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		id := func(who string) string { return idOf(t, db, who+"@demo.test") }
		creator, admin, follower, subscriber, member := id("creator"), id("admin"), id("follower"), id("subscriber"), id("member")

		// subscriber mutes everything, aria mutes only new posts.
		if _, err := s.SetNotificationPreferences(ctx, demo.ID, subscriber, true, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetNotificationPreferences(ctx, demo.ID, id("aria"), false, []string{store.KindNewPost}); err != nil {
			t.Fatal(err)
		}

		post, err := s.CreateMessage(ctx, store.NewMessage{AppID: demo.ID, CommunityID: demo.Community.ID, SenderID: creator,
			Type: store.MessagePost, Content: "Studio tour on Friday", Announce: true})
		if err != nil {
			t.Fatal(err)
		}
		// Nothing is written in the request: the fan-out is a job.
		if got := unreadKinds(t, s, demo.ID, follower); len(got) != 0 {
			t.Errorf("fan-out ran inside the request: %v", got)
		}
		pushed := runFanOuts(t, s)
		runFanOuts(t, s)
		// A fan-out job that runs twice writes once.
		again := store.Notice{AppID: demo.ID, Kind: store.KindNewPost, Audience: store.AudienceMembers, SenderID: creator,
			Text: "dup", Link: "/", Source: "message:" + post.ID}
		if n, err := s.FanOut(ctx, again); err != nil || n != 0 {
			t.Errorf("second fan-out of the same post wrote %d (%v)", n, err)
		}
		for who, want := range map[string][]string{
			"admin": {store.KindNewPost}, "moderator": {store.KindNewPost}, "follower": {store.KindNewPost},
			"jonah": {store.KindNewPost}, "aria": {}, "subscriber": {}, "creator": {}, "member": {},
		} {
			if got := unreadKinds(t, s, demo.ID, id(who)); !slices.Equal(got, want) {
				t.Errorf("%s after the creator's post: %v, want %v", who, got, want)
			}
		}
		if pushed != 4 {
			t.Errorf("push jobs name %d notifications, want 4", pushed)
		}
		// admin follows acme too: nothing of demo shows there.
		if got := unreadKinds(t, s, acme.ID, admin); len(got) != 0 {
			t.Errorf("admin in acme: %v", got)
		}
		p, _ := s.UnreadNotifications(ctx, demo.ID, follower, 1, 20)
		n := p.Notifications[0]
		if n.Sender == nil || n.Sender.Username != "creator" || n.Link != "/apps/demo/posts/"+post.ID || n.Content != "New post: Studio tour on Friday" {
			t.Errorf("notification: %+v sender %+v", n, n.Sender)
		}

		// A follower's post (not announced) notifies nobody; a reply tells
		// the author, a reply to a comment tells the comment's author.
		own, err := s.CreateMessage(ctx, store.NewMessage{AppID: demo.ID, CommunityID: demo.Community.ID, SenderID: follower,
			Type: store.MessagePost, Content: "My first post"})
		if err != nil {
			t.Fatal(err)
		}
		comment, err := s.CreateMessage(ctx, store.NewMessage{AppID: demo.ID, CommunityID: demo.Community.ID, SenderID: admin,
			Type: store.MessageReply, Content: "Welcome!", ParentMessageID: &own.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got := unreadKinds(t, s, demo.ID, follower); !slices.Equal(got, []string{store.KindReply, store.KindNewPost}) {
			t.Errorf("follower after a reply: %v", got)
		}
		if _, err := s.CreateMessage(ctx, store.NewMessage{AppID: demo.ID, CommunityID: demo.Community.ID, SenderID: follower,
			Type: store.MessageReply, Content: "Thanks", ParentMessageID: &comment.ID}); err != nil {
			t.Fatal(err)
		}
		p, _ = s.UnreadNotifications(ctx, demo.ID, admin, 1, 20)
		if p.Pagination.Total != 2 || p.Notifications[0].Kind != store.KindReply ||
			p.Notifications[0].Link != "/apps/demo/posts/"+own.ID || p.Notifications[0].Content != "Replied to your comment: Thanks" {
			t.Errorf("admin after a reply to their comment: %+v", p.Notifications)
		}
		// Replying to yourself is not news.
		if _, err := s.CreateMessage(ctx, store.NewMessage{AppID: demo.ID, CommunityID: demo.Community.ID, SenderID: follower,
			Type: store.MessageReply, Content: "edit: typo", ParentMessageID: &own.ID}); err != nil {
			t.Fatal(err)
		}
		if got := unreadKinds(t, s, demo.ID, follower); len(got) != 2 {
			t.Errorf("self-reply notified: %v", got)
		}

		// Staff audience (orders, donations): creator and admins only, and
		// only of this app.
		runFanOuts(t, s) // the replies' push jobs
		if _, err := store.Notify(ctx, db, store.Notice{AppID: demo.ID, Kind: store.KindDonation, Audience: store.AudienceStaff,
			SenderID: member, Text: "New donation", Link: "/"}); err != nil {
			t.Fatal(err)
		}
		if n := runFanOuts(t, s); n != 2 {
			t.Errorf("staff notice pushed %d", n)
		}
		var rows []store.Notification
		if err := db.NewSelect().Model(&rows).Where("kind = ?", store.KindDonation).Scan(ctx); err != nil || len(rows) != 2 {
			t.Fatalf("staff notice: %d rows, %v", len(rows), err)
		}
		for _, r := range rows {
			if r.UserID != creator && r.UserID != admin {
				t.Errorf("staff notice went to %s", r.UserID)
			}
		}
		// Explicit recipients honour mutes too.
		rows, err = store.Notify(ctx, db, store.Notice{AppID: demo.ID, Kind: store.KindOrderStatus,
			RecipientIDs: []string{subscriber, follower}, Text: "Order shipped", Link: "/orders/x"})
		if err != nil || len(rows) != 1 || rows[0].UserID != follower || rows[0].SenderID != nil {
			t.Fatalf("order notice: %+v, %v", rows, err)
		}

		// An event by the creator reaches members like a post.
		in := store.EventInput{Name: "Open studio", Type: "MEETUP",
			StartDate: post.CreatedAt.AddDate(0, 0, 3), EndDate: post.CreatedAt.AddDate(0, 0, 4), Announce: true}
		ev, err := s.CreateEvent(ctx, demo.ID, creator, in)
		if err != nil {
			t.Fatal(err)
		}
		runFanOuts(t, s)
		if got := unreadKinds(t, s, demo.ID, id("moderator")); !slices.Equal(got, []string{store.KindNewEvent, store.KindNewPost}) {
			t.Errorf("moderator after an event: %v", got)
		}

		// Attendees hear of a new time and of the cancellation; the host who
		// made the change and members who did not join do not.
		if _, err := s.MarkNotificationsRead(ctx, demo.ID, follower, nil, true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JoinEvent(ctx, ev, follower); err != nil {
			t.Fatal(err)
		}
		in.Description, in.Announce, in.EditorID = "now with snacks", false, creator
		if err := s.UpdateEvent(ctx, ev, in, false); err != nil { // no change of name, time or place
			t.Fatal(err)
		}
		if got := unreadKinds(t, s, demo.ID, follower); len(got) != 0 {
			t.Errorf("description change notified: %v", got)
		}
		in.StartDate = in.StartDate.Add(time.Hour)
		if err := s.UpdateEvent(ctx, ev, in, false); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteEvent(ctx, ev, creator); err != nil {
			t.Fatal(err)
		}
		p, _ = s.UnreadNotifications(ctx, demo.ID, follower, 1, 20)
		contents := []string{}
		for _, n := range p.Notifications {
			if n.Kind == store.KindEventUpdate && n.Sender != nil && n.Sender.Username == "creator" {
				contents = append(contents, n.Content)
			}
		}
		slices.Sort(contents)
		if !slices.Equal(contents, []string{"Event cancelled: Open studio", "Event updated: Open studio"}) {
			t.Errorf("follower after update and cancel: %+v", p.Notifications)
		}
		if got := unreadKinds(t, s, demo.ID, creator); slices.Contains(got, store.KindEventUpdate) {
			t.Errorf("the host notified of their own change: %v", got)
		}
		if got := unreadKinds(t, s, demo.ID, id("jonah")); slices.Contains(got, store.KindEventUpdate) {
			t.Errorf("non-attendee notified: %v", got)
		}
	})
}

func TestNotificationPagesAndMarkAll(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := seeded(t, db, store.NewMemoryCache())
		demo, _ := s.Landing(ctx, "demo")
		follower, admin := idOf(t, db, "follower@demo.test"), idOf(t, db, "admin@demo.test")
		for i := range 25 {
			if _, err := store.Notify(ctx, db, store.Notice{AppID: demo.ID, RecipientIDs: []string{follower, admin},
				Text: fmt.Sprintf("notice %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		p1, err := s.UnreadNotifications(ctx, demo.ID, follower, 1, 20)
		if err != nil {
			t.Fatal(err)
		}
		p2, _ := s.UnreadNotifications(ctx, demo.ID, follower, 2, 20)
		if len(p1.Notifications) != 20 || len(p2.Notifications) != 5 || p1.Pagination.TotalPages != 2 ||
			!p1.Pagination.HasNext || p2.Pagination.HasNext || p1.Pagination.Total != 25 {
			t.Fatalf("pages: %d + %d, %+v", len(p1.Notifications), len(p2.Notifications), p1.Pagination)
		}
		seen := map[string]bool{}
		for _, n := range append(p1.Notifications, p2.Notifications...) {
			if seen[n.ID] {
				t.Fatalf("%s on both pages", n.ID)
			}
			seen[n.ID] = true
		}
		// Marking one, then all; the admin's copies stay unread.
		if n, err := s.MarkNotificationsRead(ctx, demo.ID, follower, []string{p1.Notifications[0].ID}, false); err != nil || n != 1 {
			t.Fatalf("mark one: %d %v", n, err)
		}
		if n, err := s.MarkNotificationsRead(ctx, demo.ID, follower, nil, true); err != nil || n != 24 {
			t.Fatalf("mark all: %d %v", n, err)
		}
		if c, _ := s.UnreadCount(ctx, demo.ID, follower); c != 0 {
			t.Errorf("follower unread after mark all: %d", c)
		}
		if c, _ := s.UnreadCount(ctx, demo.ID, admin); c != 25 {
			t.Errorf("admin unread: %d, want 25", c)
		}
		// Someone else's id is not marked.
		pa, _ := s.UnreadNotifications(ctx, demo.ID, admin, 1, 1)
		if n, _ := s.MarkNotificationsRead(ctx, demo.ID, follower, []string{pa.Notifications[0].ID}, false); n != 0 {
			t.Errorf("marked another member's notification")
		}
	})
}
