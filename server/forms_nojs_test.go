package server

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"marquee/store"
)

// multipartBody builds a form with text fields and files (field, name,
// content type, bytes), as a browser without JavaScript sends it.
type formFile struct {
	field, name, contentType string
	data                     []byte
}

func multipartBody(t *testing.T, fields [][2]string, files ...formFile) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+f.field+`"; filename="`+f.name+`"`)
		h.Set("Content-Type", f.contentType)
		part, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		part.Write(f.data)
	}
	w.Close()
	return &buf, w.FormDataContentType()
}

func formAs(token string) map[string]string {
	return withSession(token, "Content-Type", "application/x-www-form-urlencoded")
}

func seeOther(t *testing.T, r response, want string) {
	t.Helper()
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), want) {
		t.Fatalf("want 303 to %s, got %d %q: %.300s", want, r.Status, r.Header.Get("Location"), r.Body)
	}
}

// TestFormsWithoutJavaScript: every action of issue 27 item 4 is a plain
// form that writes what its island's API call writes: donate (a Quick
// Donation amount fills the form), follow and unfollow, sign out, like,
// comment, profile picture, new post, new story and new store item (new
// event: TestCreateEventFormWithoutJavaScript).
func TestFormsWithoutJavaScript(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	demo, err := ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("donate: an amount link fills the input, Send pays from the wallet", func(t *testing.T) {
		tok := sessionFor(t, ts, "follower@demo.test")
		r := ts.do(t, "GET", "/apps/demo/donate?amount=5", nil, withSession(tok))
		if r.Status != 200 || !strings.Contains(r.Body, `value="5.00"`) {
			t.Fatalf("donate page with ?amount=5: %d, input not filled: %.300s", r.Status, r.Body)
		}
		if strings.Contains(r.Body, `class="button donate-send" disabled`) {
			t.Fatal("Send is disabled in the server HTML: nothing can be sent without JavaScript")
		}
		uid := ts.userID(t, "follower@demo.test")
		before, _ := ts.store.WalletBalance(ctx, demo.ID, uid)
		seeOther(t, ts.do(t, "POST", "/apps/demo/donate", strings.NewReader("amount=5.00&message=thanks"), formAs(tok)), "/apps/demo/donate?thanks=1")
		after, _ := ts.store.WalletBalance(ctx, demo.ID, uid)
		if before-after != 500 {
			t.Fatalf("wallet %d -> %d, want 500 cents less", before, after)
		}
	})

	t.Run("follow and unfollow from the profile, back to the profile", func(t *testing.T) {
		tok := sessionFor(t, ts, "member@demo.test")
		uid := ts.userID(t, "member@demo.test")
		seeOther(t, ts.do(t, "POST", "/apps/demo/follow", strings.NewReader("back=profile"), formAs(tok)), "/apps/demo/profile")
		if role := memberRole(t, ts, demo.ID, uid); role != store.RoleFollower {
			t.Fatalf("after follow: role %q", role)
		}
		seeOther(t, ts.do(t, "POST", "/apps/demo/unfollow", strings.NewReader("x=1"), formAs(tok)), "/apps/demo/profile")
		if role := memberRole(t, ts, demo.ID, uid); role != "" {
			t.Fatalf("after unfollow: role %q", role)
		}
		// A moderator stays a member: the rule of the API.
		r := ts.do(t, "POST", "/apps/demo/unfollow", strings.NewReader("x=1"), formAs(sessionFor(t, ts, "moderator@demo.test")))
		if r.Status != http.StatusForbidden {
			t.Fatalf("moderator unfollow: %d", r.Status)
		}
	})

	t.Run("sign out ends the session and goes to sign-in", func(t *testing.T) {
		tok := sessionFor(t, ts, "aria@demo.test")
		seeOther(t, ts.do(t, "POST", "/apps/demo/signout", strings.NewReader("x=1"), formAs(tok)), "http://auth.test/authenticate/signin?app=demo")
		if r := ts.do(t, "GET", "/api/auth/me", nil, withSession(tok)); r.Status != http.StatusUnauthorized {
			t.Fatalf("session still works after sign out: %d", r.Status)
		}
	})

	post := newPostAs(t, ts, demo.Community.ID, "creator@demo.test", "a post to like and comment on")
	t.Run("like toggles the viewer's heart", func(t *testing.T) {
		tok := sessionFor(t, ts, "follower@demo.test")
		uid := ts.userID(t, "follower@demo.test")
		hearts := func() int64 {
			n, err := db.NewSelect().Model((*store.Reaction)(nil)).Where("message_id = ? AND sender_id = ?", post, uid).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		seeOther(t, ts.do(t, "POST", "/apps/demo/posts/"+post+"/like", strings.NewReader("x=1"), formAs(tok)), "/apps/demo/posts/"+post)
		if hearts() != 1 {
			t.Fatalf("after like: %d hearts", hearts())
		}
		page := ts.do(t, "GET", "/apps/demo/posts/"+post, nil, withSession(tok))
		if !strings.Contains(page.Body, `<span class="like-count">1</span>`) {
			t.Fatalf("the post page does not show the like: %.200s", page.Body)
		}
		seeOther(t, ts.do(t, "POST", "/apps/demo/posts/"+post+"/like", strings.NewReader("x=1"), formAs(tok)), "/apps/demo/posts/"+post)
		if hearts() != 0 {
			t.Fatalf("after the second press: %d hearts", hearts())
		}
		// A visitor who does not follow may not react.
		r := ts.do(t, "POST", "/apps/demo/posts/"+post+"/like", strings.NewReader("x=1"), formAs(sessionFor(t, ts, "member@demo.test")))
		if r.Status != http.StatusForbidden {
			t.Fatalf("non-member like: %d", r.Status)
		}
	})

	t.Run("comment", func(t *testing.T) {
		tok := sessionFor(t, ts, "follower@demo.test")
		seeOther(t, ts.do(t, "POST", "/apps/demo/posts/"+post+"/comments", strings.NewReader("content=Hello+from+a+form"), formAs(tok)),
			"/apps/demo/posts/"+post+"#comments")
		page := ts.do(t, "GET", "/apps/demo/posts/"+post, nil, withSession(tok))
		if !strings.Contains(page.Body, "Hello from a form") {
			t.Fatal("the comment is not on the post page")
		}
		if r := ts.do(t, "POST", "/apps/demo/posts/"+post+"/comments", strings.NewReader("content=+"), formAs(tok)); r.Status != http.StatusBadRequest {
			t.Fatalf("blank comment: %d", r.Status)
		}
	})

	t.Run("new post with a photo, and a refusal shown on the form", func(t *testing.T) {
		tok := sessionFor(t, ts, "subscriber@demo.test")
		body, ct := multipartBody(t, [][2]string{{"content", "Posted without JavaScript"}}, formFile{"media", "photo.png", "image/png", pngBytes(t)})
		seeOther(t, ts.do(t, "POST", "/apps/demo/create-post", body, withSession(tok, "Content-Type", ct)), "/apps/demo/community")
		var m store.Message
		if err := db.NewSelect().Model(&m).Where("content = ?", "Posted without JavaScript").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		view, err := ts.store.MessageView(ctx, &m, 0)
		if err != nil {
			t.Fatal(err)
		}
		if m.Type != store.MessagePost || len(view.Attachments) != 1 || view.Attachments[0].Media.Type != store.MediaImage {
			t.Fatalf("post %+v with attachments %+v", m, view.Attachments)
		}
		body, ct = multipartBody(t, [][2]string{{"content", "  "}})
		r := ts.do(t, "POST", "/apps/demo/create-post", body, withSession(tok, "Content-Type", ct))
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Please add some content or media to your post") {
			t.Fatalf("empty post: %d %.300s", r.Status, r.Body)
		}
		// A file that is not what it says is refused, and nothing is posted.
		body, ct = multipartBody(t, [][2]string{{"content", "fake image"}}, formFile{"media", "x.png", "image/png", []byte("not a png at all")})
		if r := ts.do(t, "POST", "/apps/demo/create-post", body, withSession(tok, "Content-Type", ct)); r.Status != http.StatusBadRequest {
			t.Fatalf("fake png: %d", r.Status)
		}
		if n, _ := db.NewSelect().Model((*store.Message)(nil)).Where("content = ?", "fake image").Count(ctx); n != 0 {
			t.Fatal("a post with a refused file was created")
		}
		// A follower may not post in demo (SUBSCRIBER creates).
		body, ct = multipartBody(t, [][2]string{{"content", "not allowed"}})
		if r := ts.do(t, "POST", "/apps/demo/create-post", body, withSession(sessionFor(t, ts, "follower@demo.test"), "Content-Type", ct)); r.Status != http.StatusForbidden {
			t.Fatalf("follower post: %d", r.Status)
		}
	})

	t.Run("new story needs its photo", func(t *testing.T) {
		tok := sessionFor(t, ts, "subscriber@demo.test")
		body, ct := multipartBody(t, [][2]string{{"content", "story caption"}}, formFile{"media", "s.png", "image/png", pngBytes(t)})
		seeOther(t, ts.do(t, "POST", "/apps/demo/create-story", body, withSession(tok, "Content-Type", ct)), "/apps/demo/community")
		var m store.Message
		if err := db.NewSelect().Model(&m).Where("content = ?", "story caption").Scan(ctx); err != nil || m.Type != store.MessageStory {
			t.Fatalf("story: %+v %v", m, err)
		}
		body, ct = multipartBody(t, [][2]string{{"content", "no photo"}})
		r := ts.do(t, "POST", "/apps/demo/create-story", body, withSession(tok, "Content-Type", ct))
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "No uploaded media") {
			t.Fatalf("story without media: %d", r.Status)
		}
	})

	t.Run("profile picture", func(t *testing.T) {
		tok := sessionFor(t, ts, "jonah@demo.test")
		body, ct := multipartBody(t, nil, formFile{"picture", "me.png", "image/png", pngBytes(t)})
		seeOther(t, ts.do(t, "POST", "/apps/demo/profile/picture", body, withSession(tok, "Content-Type", ct)), "/apps/demo/profile?picture=ok")
		u, err := ts.store.UserByEmail(ctx, "jonah@demo.test")
		if err != nil || u.ProfileMediaID == nil {
			t.Fatalf("no picture set: %+v %v", u, err)
		}
		page := ts.do(t, "GET", "/apps/demo/profile?picture=ok", nil, withSession(tok))
		if !strings.Contains(page.Body, "Profile picture uploaded successfully!") {
			t.Fatal("the profile does not confirm the upload")
		}
		body, ct = multipartBody(t, nil, formFile{"picture", "notes.txt", "text/plain", []byte("hello")})
		seeOther(t, ts.do(t, "POST", "/apps/demo/profile/picture", body, withSession(tok, "Content-Type", ct)), "/apps/demo/profile?picture=type")
		if page := ts.do(t, "GET", "/apps/demo/profile?picture=type", nil, withSession(tok)); !strings.Contains(page.Body, "Please select an image file") {
			t.Fatal("the profile does not say why")
		}
	})

	t.Run("new store item with images and variants, then edited", func(t *testing.T) {
		tok := sessionFor(t, ts, "creator@demo.test")
		body, ct := multipartBody(t, [][2]string{{"name", "Form Tee"}, {"description", "Made without JavaScript"}, {"type", "PHYSICAL"},
			{"price", "12.50"}, {"comparePrice", ""}, {"tracked", "1"}, {"stock", "7"}, {"sku", "FT-1"}, {"tags", "tee, merch"},
			{"variantId", ""}, {"variantName", "Size"}, {"variantValue", "S"}, {"variantAdjust", ""}, {"variantStock", "3"},
			{"variantId", ""}, {"variantName", "Size"}, {"variantValue", "L"}, {"variantAdjust", "2"}, {"variantStock", ""},
			{"variantId", ""}, {"variantName", ""}, {"variantValue", ""}, {"variantAdjust", ""}, {"variantStock", ""}},
			formFile{"images", "tee.png", "image/png", pngBytes(t)})
		r := ts.do(t, "POST", "/apps/demo/store/items/new", body, withSession(tok, "Content-Type", ct))
		seeOther(t, r, "/apps/demo/store/items/")
		id := strings.TrimPrefix(r.Header.Get("Location"), "/apps/demo/store/items/")
		it, err := ts.store.ItemByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		view, err := ts.store.ItemView(ctx, it)
		if err != nil {
			t.Fatal(err)
		}
		if view.Name != "Form Tee" || view.Price != 1250 || view.Stock == nil || *view.Stock != 7 || len(view.Variants) != 2 || len(view.Media) != 1 || len(view.Tags) != 2 {
			t.Fatalf("saved item: %+v", view)
		}
		if view.Variants[1].PriceAdjustment != 200 || view.Variants[0].Stock == nil || *view.Variants[0].Stock != 3 || view.Variants[1].Stock != nil {
			t.Fatalf("variants: %+v", view.Variants)
		}
		// Edit: the image and variants are kept by their ids, the name changes.
		form := url.Values{"name": {"Form Tee 2"}, "type": {"PHYSICAL"}, "price": {"12.50"}, "mediaIds": {view.Media[0].ID},
			"variantId": {view.Variants[0].ID, view.Variants[1].ID}, "variantName": {"Size", "Size"}, "variantValue": {"S", "L"},
			"variantAdjust": {"", "2.00"}, "variantStock": {"3", ""}}
		seeOther(t, ts.do(t, "POST", "/apps/demo/store/items/"+id+"/edit", strings.NewReader(form.Encode()), formAs(tok)), "/apps/demo/store/items/"+id)
		it, _ = ts.store.ItemByID(ctx, id)
		view, _ = ts.store.ItemView(ctx, it)
		if view.Name != "Form Tee 2" || len(view.Media) != 1 || len(view.Variants) != 2 || view.Stock != nil {
			t.Fatalf("edited item: %+v", view)
		}
		// A refusal is shown on the form; a follower may not create items.
		r = ts.do(t, "POST", "/apps/demo/store/items/new", strings.NewReader("name=&price=1"), formAs(tok))
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Please enter an item name") {
			t.Fatalf("nameless item: %d", r.Status)
		}
		r = ts.do(t, "POST", "/apps/demo/store/items/new", strings.NewReader("name=x&price=1"), formAs(sessionFor(t, ts, "follower@demo.test")))
		if r.Status != http.StatusForbidden {
			t.Fatalf("follower creates an item: %d", r.Status)
		}
	})

	t.Run("multipart text is checked like any form", func(t *testing.T) {
		body, ct := multipartBody(t, [][2]string{{"content", "bad\x00byte"}})
		r := ts.do(t, "POST", "/apps/demo/create-post", body, withSession(sessionFor(t, ts, "subscriber@demo.test"), "Content-Type", ct))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("NUL in a multipart field: %d", r.Status)
		}
	})
}

func memberRole(t *testing.T, ts *testServer, appID, userID string) string {
	t.Helper()
	var m store.Membership
	if err := ts.store.DB().NewSelect().Model(&m).Where("app_id = ? AND user_id = ?", appID, userID).Scan(context.Background()); err != nil {
		return ""
	}
	return m.Role
}

func newPostAs(t *testing.T, ts *testServer, communityID, email, content string) string {
	t.Helper()
	r := ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"`+content+`","type":"POST","communityId":"`+communityID+`"}`),
		withSession(sessionFor(t, ts, email), "Content-Type", "application/json"))
	if r.Status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	var out struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil {
		t.Fatal(err)
	}
	return out.Data.ID
}
