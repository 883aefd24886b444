package mail

import (
	"strings"
	"testing"

	"marquee/store"
)

// A mail's links to an app's pages are on the app's own domain when it
// has one (issue 42 item 3), on the main site otherwise.
func TestMailLinksOnTheAppsDomain(t *testing.T) {
	s := Sites{Main: "https://main.example", Auth: "https://auth.example", App: func(name string) string {
		if name == "demo" {
			return "https://fans.example.test"
		}
		return "https://main.example/apps/" + name
	}}
	for path, want := range map[string]string{
		"/apps/demo":                "https://fans.example.test/",
		"/apps/demo/posts/1":        "https://fans.example.test/posts/1",
		"/apps/demo?tab=x":          "https://fans.example.test/?tab=x",
		"/apps/demo/orders/2#items": "https://fans.example.test/orders/2#items",
		"/apps/other/profile":       "https://main.example/apps/other/profile",
		"/apps/other":               "https://main.example/apps/other",
		"/mail/unsubscribe/t":       "https://main.example/mail/unsubscribe/t",
	} {
		if got := s.url(store.MailLink{Path: path}); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	if got := s.url(store.MailLink{Path: "/authenticate/reset?token=x", Site: "auth"}); got != "https://auth.example/authenticate/reset?token=x" {
		t.Errorf("auth link: %s", got)
	}
}

// An app on its own domain mails from it: the unsubscribe link (and the
// List-Unsubscribe header) and its images are the domain's; another app's
// mail keeps the main host's.
func TestMailOfAnAppOnItsDomain(t *testing.T) {
	s := &Sender{From: "Marquee <mail@main.example>", Sites: Sites{Main: "https://main.example", Auth: "https://auth.example", App: func(name string) string {
		if name == "demo" {
			return "https://fans.example.test"
		}
		return "https://main.example/apps/" + name
	}}}
	token := "tok"
	for app, site := range map[string]string{"demo": "https://fans.example.test", "other": "https://main.example"} {
		m := &store.Mail{ID: "m1", Kind: "newsletter", To: "fan@example.test", UnsubscribeToken: &token}
		c := store.MailContent{Subject: "News", Paragraphs: []string{"Hello"}}
		brand := store.MailBrand{AppName: app, DisplayName: "Demo", IconURL: "https://main.example/media/i/icon/192"}
		msg, err := s.Render(m, c, brand)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Unsubscribe != site+"/mail/unsubscribe/tok" || !strings.Contains(msg.HTML, site+"/mail/unsubscribe/tok") {
			t.Errorf("%s: unsubscribe %s", app, msg.Unsubscribe)
		}
		if !strings.Contains(msg.HTML, site+"/media/i/icon/192") {
			t.Errorf("%s: icon not on %s: %s", app, site, msg.HTML)
		}
		if app == "demo" && strings.Contains(msg.HTML+msg.Text, "main.example") {
			t.Errorf("demo's mail names the main host: %s", msg.HTML)
		}
	}
}
