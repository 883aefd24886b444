package mail

import (
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
