package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/jobs"
	"marquee/store"
)

// An event a moderator hides leaves its members' notifications, the
// announcement and the attendees' update alike, as hidden posts and
// comments do; its creator keeps them, and unhiding brings them back
// (issue 41 item 9).
func TestHiddenEventLeavesNotifications(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ctx := context.Background()
	start := time.Now().Add(72 * time.Hour).UTC()
	r := fx.call("POST", "/api/events/apps/"+fx.appID+"/events", map[string]any{"name": "Platypus picnic",
		"startDate": start.Format(time.RFC3339), "endDate": start.Add(time.Hour).Format(time.RFC3339)}, fx.creator)
	var ev struct {
		Data struct{ ID string } `json:"data"`
	}
	commJSON(t, r, &ev)
	if r.Status != http.StatusCreated {
		t.Fatalf("create event: %d %s", r.Status, r.Body)
	}
	var pending []store.JobOutbox
	if err := fx.ts.store.DB().NewSelect().Model(&pending).Where("kind = ? AND args LIKE ?", store.JobNotifyFanOut, "%event:"+ev.Data.ID+"%").
		Scan(ctx); err != nil || len(pending) == 0 {
		t.Fatalf("no announcement job: %v", err)
	}
	for _, j := range pending {
		var n store.Notice
		if err := json.Unmarshal([]byte(j.Args), &n); err != nil {
			t.Fatal(err)
		}
		if _, err := fx.ts.store.FanOut(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if r := fx.call("POST", "/api/events/"+ev.Data.ID+"/join", map[string]any{}, fx.follower); r.Status >= 300 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	if r := fx.call("PUT", "/api/events/"+ev.Data.ID, map[string]any{"name": "Platypus picnic moved",
		"startDate": start.Add(time.Hour).Format(time.RFC3339), "endDate": start.Add(2 * time.Hour).Format(time.RFC3339)}, fx.creator); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	type list struct {
		Data struct {
			Notifications []struct{ Content string }
		}
	}
	notices := func(h map[string]string) (kinds map[string]bool, unread int) {
		var l list
		commJSON(t, fx.call("GET", "/api/notifications/unread/"+fx.appID+"?limit=100", nil, h), &l)
		kinds = map[string]bool{}
		for _, n := range l.Data.Notifications {
			switch {
			case strings.HasPrefix(n.Content, "New event: Platypus picnic"):
				kinds["new"] = true
			case strings.HasPrefix(n.Content, "Event updated: Platypus picnic"):
				kinds["updated"] = true
			}
		}
		n, err := fx.ts.store.UnreadCount(ctx, fx.appID, fx.followerID)
		if err != nil {
			t.Fatal(err)
		}
		return kinds, n
	}
	before, countBefore := notices(fx.follower)
	if !before["new"] || !before["updated"] {
		t.Fatalf("before hiding, the follower's notices lack the event's: %v", before)
	}
	if r := fx.act(fx.moderator, "HIDE", "EVENT", ev.Data.ID, "spam", 0); r.Status != 200 {
		t.Fatalf("hide event: %d %s", r.Status, r.Body)
	}
	after, countAfter := notices(fx.follower)
	if after["new"] || after["updated"] {
		t.Errorf("the hidden event's notices are still listed: %v", after)
	}
	if countAfter != countBefore-2 {
		t.Errorf("unread count %d after hiding, want %d", countAfter, countBefore-2)
	}
	if r := fx.act(fx.moderator, "UNHIDE", "EVENT", ev.Data.ID, "", 0); r.Status != 200 {
		t.Fatalf("unhide event: %d %s", r.Status, r.Body)
	}
	if again, n := notices(fx.follower); !again["new"] || !again["updated"] || n != countBefore {
		t.Errorf("shown again, the notices are %v (%d unread, want %d)", again, n, countBefore)
	}
}

// A deleted member leaves nothing others still see (issue 41 item 9): their
// reply is no longer quoted in the post author's notifications, their
// donation's message is gone from the creator's list, and their profile
// picture is served neither by its stable URL nor by a link signed before
// the delete (the file is deleted by the durable job).
func TestDeletedMemberLeavesNoTrace(t *testing.T) {
	t.Parallel()
	fx := newModFixture(t)
	ts := fx.ts
	ctx := context.Background()
	leaver, leaverID := fx.member("leaver@mod.test")
	postID := fx.post(fx.subscriber, "who likes echidnas")
	if r := fx.call("POST", "/api/messages", map[string]any{"content": "echidnas are my favourite", "parentMessageId": postID}, leaver); r.Status != http.StatusCreated {
		t.Fatalf("reply: %d %s", r.Status, r.Body)
	}
	donation := &store.Donation{ID: store.NewID(), AppID: fx.appID, UserID: leaverID, Amount: 500, Currency: "USD",
		Message: "keep the echidna videos coming", Status: store.DonationPaid, CreatedAt: time.Now().UTC()}
	if _, err := ts.store.DB().NewInsert().Model(donation).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	img := pngBytes(t)
	r, pm := mediaCreate(t, ts, leaver, mediaReq(fx.appID, "image/png", len(img), "profile"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create media: %d %s", r.Status, r.Body)
	}
	if r := localPut(t, ts, pm.PresignedUploadURL, "image/png", img); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	if r := fx.call("POST", "/api/auth/profile-picture", map[string]any{"mediaId": pm.Media.ID}, leaver); r.Status != 200 {
		t.Fatalf("set picture: %d %s", r.Status, r.Body)
	}
	stable := "/media/i/" + pm.Media.ID + "/original"
	signed := strings.TrimPrefix(pm.Media.SignedURL, "http://main.test")
	seen := func() map[string]bool {
		return map[string]bool{
			"reply in notifications": strings.Contains(fx.call("GET", "/api/notifications/unread/"+fx.appID+"?limit=100", nil, fx.subscriber).Body, "echidnas are my favourite"),
			"donation message":       strings.Contains(fx.call("GET", "/api/donations/apps/"+fx.appID+"?limit=100", nil, fx.creator).Body, "keep the echidna videos"),
			"picture (stable URL)":   fx.call("GET", stable, nil, nil).Status == 200,
			"picture (signed link)":  signed != "" && fx.call("GET", signed, nil, nil).Status == 200,
		}
	}
	for what, ok := range seen() {
		if !ok {
			t.Fatalf("before the delete, no %s", what)
		}
	}
	if err := ts.store.DeleteAccount(ctx, leaverID); err != nil {
		t.Fatal(err)
	}
	var queued []store.JobOutbox
	if err := ts.store.DB().NewSelect().Model(&queued).Where("kind = ?", store.JobDeleteFiles).Scan(ctx); err != nil || len(queued) != 1 {
		t.Fatalf("delete-files jobs: %d %v", len(queued), err)
	}
	var args jobs.DeleteFilesArgs
	if err := json.Unmarshal([]byte(queued[0].Args), &args.DeleteFilesJob); err != nil {
		t.Fatal(err)
	}
	w := &jobs.DeleteFilesWorker{Files: ts.files}
	for range 2 { // run again after a crash: nothing left is not an error
		if err := w.Work(ctx, &river.Job[jobs.DeleteFilesArgs]{Args: args}); err != nil {
			t.Fatal(err)
		}
	}
	for what, ok := range seen() {
		if ok {
			t.Errorf("after the delete, still: %s", what)
		}
	}
}
