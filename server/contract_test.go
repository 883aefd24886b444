package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestContractFixes covers the contract items of issue 15 on PostgreSQL.
func TestContractFixes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ids := commLoad(t, ts)

	// The SPEC profile flow: create media with mediaKey profile, upload;
	// the upload alone sets profilePicture.
	member := commUser(t, ts, "member@demo.test")
	img := pngBytes(t)
	ts.run(t, []scenario{{name: "no picture yet", path: "/api/auth/me", as: "member@demo.test", status: 200,
		json: map[string]any{"data.user.profilePicture": nil}}})
	r, pm := mediaCreate(t, ts, member, mediaReq("", "image/png", len(img), "profile"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create profile media: %d %s", r.Status, r.Body)
	}
	if up := localPut(t, ts, pm.PresignedUploadURL, "image/png", img); up.Status != http.StatusOK {
		t.Fatalf("upload: %d %s", up.Status, up.Body)
	}
	ts.run(t, []scenario{{name: "picture set by the upload", path: "/api/auth/me", as: "member@demo.test", status: 200,
		json: map[string]any{"data.user.profilePicture.signedUrl": present{}}}})
	// Post media (with an app) never becomes the profile picture. (Profile
	// media sent with an appId, SPEC's own upload, does: TestContractLeftovers.)
	r, post := mediaCreate(t, ts, commUser(t, ts, "follower@demo.test"), mediaReq(appID(t, ts, "demo"), "image/png", len(img), "post"))
	if r.Status != http.StatusCreated || localPut(t, ts, post.PresignedUploadURL, "image/png", img).Status != http.StatusOK {
		t.Fatalf("app media: %d", r.Status)
	}
	ts.run(t, []scenario{{name: "app media is not the account picture", path: "/api/auth/me", as: "follower@demo.test", status: 200,
		json: map[string]any{"data.user.profilePicture": nil}}})

	// A second removal of the same reaction succeeds; someone else's is 403.
	reactions := "/api/messages/" + ids.demoPost + "/reactions"
	add := ts.do(t, "POST", reactions, strings.NewReader(`{"reaction":"heart"}`), commUser(t, ts, "subscriber@demo.test"))
	var added struct{ Data struct{ ID string } }
	commJSON(t, add, &added)
	if add.Status != http.StatusCreated || added.Data.ID == "" {
		t.Fatalf("add reaction: %d %s", add.Status, add.Body)
	}
	mine := reactions + "/" + added.Data.ID
	ts.run(t, []scenario{
		{name: "someone else's reaction", method: "DELETE", path: mine, as: "follower@demo.test", status: 403},
		{name: "first removal", method: "DELETE", path: mine, as: "subscriber@demo.test", status: 200, json: map[string]any{"success": true}},
		{name: "second removal", method: "DELETE", path: mine, as: "subscriber@demo.test", status: 200, json: map[string]any{"success": true}},
		{name: "reaction gone", path: reactions, as: "subscriber@demo.test", status: 200, absent: []string{added.Data.ID}},
		{name: "membership carries app id", path: "/api/auth/me?appId=demo", as: "follower@demo.test", status: 200,
			json: map[string]any{"data.userMembership.app.id": appID(t, ts, "demo"), "data.userMembership.role": "FOLLOWER"}},
	})

	// allowReactions and allowComments off are enforced by the API, for
	// every role, and the flags the pages read say so.
	ctx := context.Background()
	for _, key := range []string{"features.community.settings.allowReactions", "features.community.settings.allowComments"} {
		if err := ts.store.SetAppField(ctx, "demo", key, "false"); err != nil {
			t.Fatal(err)
		}
	}
	comment := fmt.Sprintf(`{"content":"hi","parentMessageId":%q}`, ids.demoPost)
	ts.run(t, []scenario{
		{name: "react with reactions off", method: "POST", path: reactions, as: "follower@demo.test", body: `{"reaction":"heart"}`, status: 403, contains: []string{"Reactions are turned off"}},
		{name: "creator reacts with reactions off", method: "POST", path: reactions, as: "creator@demo.test", body: `{"reaction":"heart"}`, status: 403},
		{name: "comment with comments off", method: "POST", path: "/api/messages", as: "follower@demo.test", body: comment, status: 403, contains: []string{"Comments are turned off"}},
		{name: "creator comments with comments off", method: "POST", path: "/api/messages", as: "creator@demo.test", body: comment, status: 403},
		{name: "flags say so", path: "/api/auth/me?appId=demo", as: "creator@demo.test", status: 200,
			json: map[string]any{"data.userPermissions.canReact": false, "data.userPermissions.canComment": false}},
		// Posting is a separate switch and still works.
		{name: "posts still work", method: "POST", path: "/api/messages", as: "creator@demo.test",
			body: fmt.Sprintf(`{"content":"still here","communityId":%q}`, ids.demoCommunity), status: 201},
		// acme keeps its own settings.
		{name: "other app unaffected", method: "POST", path: "/api/messages/" + ids.acmePost + "/reactions", as: "admin@demo.test", body: `{"reaction":"heart"}`, status: 201},
	})

	// A duplicate sign-up e-mail (or username) answers 409, as a form and as JSON.
	ts.run(t, []scenario{
		{name: "taken e-mail, JSON", method: "POST", path: "/authenticate/signup", body: `{"email":"Follower@demo.test","username":"brandnew","password":"long-enough-pw"}`,
			status: 409, json: map[string]any{"success": false, "fields.email": "An account with this email already exists"}},
		{name: "taken username, JSON", method: "POST", path: "/authenticate/signup", body: `{"email":"brandnew@demo.test","username":"Follower","password":"long-enough-pw"}`,
			status: 409, json: map[string]any{"fields.username": "This username is taken"}},
		{name: "taken e-mail, form", method: "POST", path: "/authenticate/signup?app=demo", body: "email=follower%40demo.test&username=brandnew&password=long-enough-pw",
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 409, contains: []string{"already exists"}},
		{name: "invalid sign-up stays 400", method: "POST", path: "/authenticate/signup", body: `{"email":"nope","username":"brandnew","password":"long-enough-pw"}`, status: 400},
	})
}
