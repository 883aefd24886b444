package mail_test

import (
	"context"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	marqueemail "marquee/server/mail"
)

// A name or subject with line breaks (stored before input refused them)
// neither stops the mail nor adds a header: each header value is folded to
// one line (issue 41 item 7).
func TestHeaderValuesAreOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := &marqueemail.Message{ID: "h1", FromName: "Evil\r\nBcc: victim@example.com", From: "no-reply@marquee.test", To: "fan@demo.test",
		Subject: "Change to Launch\nparty\u2028now\t!", ReplyTo: "creator@demo.test\r\n", ListID: "\"Evil\nName\" <evil.newsletter.marquee.test>",
		Text: "Hello\n", HTML: "<p>Hello</p>"}
	if err := (&marqueemail.Dir{Path: dir}).Send(context.Background(), m); err != nil {
		t.Fatalf("send: %v", err)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	raw, err := os.ReadFile(filepath.Join(dir, files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get("Bcc") != "" {
		t.Errorf("a Bcc header was added: %q", msg.Header.Get("Bcc"))
	}
	dec := new(mime.WordDecoder)
	subject, _ := dec.DecodeHeader(msg.Header.Get("Subject"))
	if subject != "Change to Launch party now !" {
		t.Errorf("subject %q", subject)
	}
	from, err := mail.ParseAddress(msg.Header.Get("From"))
	if err != nil || from.Name != "Evil Bcc: victim@example.com" || from.Address != "no-reply@marquee.test" {
		t.Errorf("from %q: %+v %v", msg.Header.Get("From"), from, err)
	}
	if got := msg.Header.Get("List-Id"); strings.ContainsAny(got, "\r\n") || !strings.Contains(got, "Evil Name") {
		t.Errorf("list-id %q", got)
	}
	for _, s := range []string{"a\r\nb", "a\x00b\x7fc", "a\u0085b", "  a  \n\n b "} {
		if got := marqueemail.HeaderText(s); strings.IndexFunc(got, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x85 }) >= 0 || strings.Contains(got, "  ") {
			t.Errorf("HeaderText(%q) = %q", s, got)
		}
	}
}
