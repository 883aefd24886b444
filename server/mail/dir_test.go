package mail_test

import (
	"context"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	marqueemail "marquee/server/mail"
)

// TestDirWritesEachMailAsAnEMLFile: without SMTP (the embedded default)
// each mail is one whole .eml file in the folder, readable as a mail with
// its sender, recipient, subject, both parts and the one-click unsubscribe
// headers; nothing half-written is left beside it.
func TestDirWritesEachMailAsAnEMLFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	d := &marqueemail.Dir{Path: dir}
	m := &marqueemail.Message{ID: "m1", FromName: "Demo Studio", From: "no-reply@marquee.test", To: "fan@demo.test",
		Subject: "Your receipt", Text: "Total: $33.00", HTML: "<p>Total: $33.00</p>", Unsubscribe: "http://main.test/u/abc"}
	if err := d.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !strings.HasSuffix(files[0].Name(), "-m1.eml") {
		t.Fatalf("files %v, want one <time>-m1.eml", files)
	}
	f, err := os.Open(filepath.Join(dir, files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msg, err := mail.ReadMessage(f)
	if err != nil {
		t.Fatalf("not a mail: %v", err)
	}
	if from, _ := mail.ParseAddress(msg.Header.Get("From")); from == nil || from.Address != "no-reply@marquee.test" || from.Name != "Demo Studio" {
		t.Errorf("From %q", msg.Header.Get("From"))
	}
	if msg.Header.Get("To") != "<fan@demo.test>" && msg.Header.Get("To") != "fan@demo.test" {
		t.Errorf("To %q", msg.Header.Get("To"))
	}
	if msg.Header.Get("Subject") != "Your receipt" {
		t.Errorf("Subject %q", msg.Header.Get("Subject"))
	}
	if !strings.Contains(msg.Header.Get("List-Unsubscribe"), "http://main.test/u/abc") || msg.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Errorf("unsubscribe headers %q %q", msg.Header.Get("List-Unsubscribe"), msg.Header.Get("List-Unsubscribe-Post"))
	}
	if !strings.HasPrefix(msg.Header.Get("Content-Type"), "multipart/alternative") {
		t.Errorf("Content-Type %q, want text and HTML parts", msg.Header.Get("Content-Type"))
	}
}
