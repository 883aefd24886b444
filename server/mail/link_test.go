package mail_test

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	marqueemail "marquee/server/mail"
)

// TestLinksSurviveTheRawMail: a confirmation link longer than a
// quoted-printable line (with "=" in it) is one unbroken line in the raw
// .eml's plain-text part, as a reader copying it sees it, and the same
// after decoding the part as a mail client does.
func TestLinksSurviveTheRawMail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := "https://auth.creators-platform.example.com/authenticate/confirm?token=" + strings.Repeat("Ab3_x", 9) + "&app=demo"
	m := &marqueemail.Message{ID: "c1", FromName: "Démo", From: "no-reply@marquee.test", To: "fan@demo.test",
		Subject: "Confirm your e-mail", Text: "Hi ünïcode fan,\n\nConfirm your e-mail:\n" + link + "\n", HTML: `<p><a href="` + link + `">Confirm</a></p>`}
	if err := (&marqueemail.Dir{Path: dir}).Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	raw, err := os.ReadFile(filepath.Join(dir, files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	found := false
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			continue
		}
		body, _ := io.ReadAll(p)
		if enc := p.Header.Get("Content-Transfer-Encoding"); enc != "8bit" {
			t.Errorf("plain text sent as %q", enc)
		}
		lines := strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n")
		for _, l := range lines {
			found = found || l == link
		}
		if !strings.Contains(string(body), "ünïcode") {
			t.Error("the text lost its characters")
		}
	}
	if !found {
		t.Fatalf("the link is not one whole line of the raw plain text:\n%s", raw)
	}
}
