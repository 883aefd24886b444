package mail_test

import (
	"strings"
	"testing"

	marqueemail "marquee/server/mail"
	"marquee/store"
)

// TestMailWearsTheAppTheme: an app's mail has its theme colour on the
// action button and links and its icon beside its name in the header;
// without a theme, the product's dark grey and blue, and no icon.
func TestMailWearsTheAppTheme(t *testing.T) {
	t.Parallel()
	s := &marqueemail.Sender{From: "mail@marquee.test", Sites: marqueemail.Sites{Main: "https://main.test", Auth: "https://auth.test"}}
	content := store.MailContent{Subject: "Order", Heading: "Thanks", Action: &store.MailLink{Label: "See it", Path: "/apps/demo/orders/1"},
		Links: []store.MailLink{{Label: "Store", Path: "/apps/demo/store"}}}
	m := &store.Mail{ID: "m1", To: "fan@demo.test", Kind: "ORDER", Transactional: true}
	themed, err := s.Render(m, content, store.MailBrand{AppName: "demo", DisplayName: "Demo Studio", Color: "#0b6e4f",
		IconURL: "/apps/demo/icons/mail-header.png?v=abc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"background:#0b6e4f;color:#ffffff", `style="color:#0b6e4f">Store</a>`,
		`<img src="https://main.test/apps/demo/icons/mail-header.png?v=abc" alt="" width="36" height="36"`} {
		if !strings.Contains(themed.HTML, want) {
			t.Errorf("themed mail lacks %s", want)
		}
	}
	plain, err := s.Render(m, content, store.MailBrand{AppName: "demo", DisplayName: "Demo Studio"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plain.HTML, "background:#18181b;color:#ffffff") || !strings.Contains(plain.HTML, `style="color:#2563eb">Store</a>`) || strings.Contains(plain.HTML, "mail-header.png") {
		t.Errorf("unthemed mail: %s", plain.HTML)
	}
}
