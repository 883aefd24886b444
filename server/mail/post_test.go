package mail_test

import (
	"strings"
	"testing"

	marqueemail "marquee/server/mail"
	"marquee/store"
)

// A locked post's pictures open only for a signed-in reader, so its mail
// names them and links the post instead of showing images a mail client
// cannot load; a public post's pictures are in the mail.
func TestPostMailPictures(t *testing.T) {
	t.Parallel()
	s := &marqueemail.Sender{From: "no-reply@marquee.test", Sites: marqueemail.Sites{Main: "https://marquee.test"}}
	brand := store.MailBrand{AppName: "demo", DisplayName: "Demo"}
	open, err := s.RenderPost(marqueemail.PostMail{ID: "p1", To: "fan@demo.test", Brand: brand, Content: "Hello",
		Images: []string{"https://marquee.test/media/i/abc/original"}, PostPath: "/apps/demo/posts/p1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(open.HTML, `<img src="https://marquee.test/media/i/abc/original"`) || strings.Contains(open.HTML, "This post has") {
		t.Errorf("public post's mail: %s", open.HTML)
	}
	locked, err := s.RenderPost(marqueemail.PostMail{ID: "p2", To: "fan@demo.test", Brand: brand, Content: "Hello",
		PicturesOnSite: 2, PostPath: "/apps/demo/posts/p2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{locked.HTML, locked.Text} {
		if !strings.Contains(part, "This post has 2 pictures: see them on Demo.") || strings.Contains(part, "/media/") {
			t.Errorf("locked post's mail: %s", part)
		}
	}
	if !strings.Contains(locked.HTML, `href="https://marquee.test/apps/demo/posts/p2"`) {
		t.Errorf("locked post's mail links no post: %s", locked.HTML)
	}
}

// A post's mail wears the app: its name, icon (absolute on the app's
// address) and colour in the band and the button (issue 44 item 2).
func TestPostMailWearsTheApp(t *testing.T) {
	t.Parallel()
	s := &marqueemail.Sender{From: "no-reply@marquee.test", Sites: marqueemail.Sites{Main: "https://marquee.test"}}
	m, err := s.RenderPost(marqueemail.PostMail{ID: "p3", To: "fan@demo.test", Content: "Hello", PostPath: "/apps/demo/posts/p3",
		Brand: store.MailBrand{AppName: "demo", DisplayName: "Demo Studio", Color: "#0b6e4f", IconURL: "/apps/demo/icons/mail-header.png?v=1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`border-top:6px solid #0b6e4f`, `background:#0b6e4f`, `<img src="https://marquee.test/apps/demo/icons/mail-header.png?v=1"`, "Read on Demo Studio"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("the post's mail lacks %s", want)
		}
	}
}
