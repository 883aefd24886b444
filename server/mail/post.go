package mail

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	texttemplate "text/template"

	"marquee/store"
)

// PostMail is a post mailed to one member (the newsletter), or to its
// author as a test.
type PostMail struct {
	ID    string // unique per mail
	To    string
	Brand store.MailBrand
	// Settings are the app's newsletter settings (sender name, reply-to).
	Settings store.NewsletterSettings
	Author   string
	Content  string
	// Images are the post's pictures at their absolute URLs.
	Images []string
	// PicturesOnSite counts the pictures of a post not for everyone: their
	// files open only for a signed-in reader, so the mail says where they are.
	PicturesOnSite int
	// PostPath is the post's path on the main site (/apps/demo/posts/ID).
	PostPath string
	// UnsubscribeToken is the recipient's one-click unsubscribe; empty for
	// a test mail.
	UnsubscribeToken string
	Test             bool
}

type postView struct {
	Brand       store.MailBrand
	BrandURL    string
	Color       string
	Author      string
	Paragraphs  []string
	Images      []string
	OnSite      string
	PostURL     string
	CommentsURL string
	Unsubscribe string
	Settings    string
	Test        bool
}

// ListID is the List-Id of an app's newsletter: its display name and a
// label under the deployment's host (RFC 2919).
func (s *Sender) ListID(b store.MailBrand) string {
	host := "marquee.invalid"
	if u, err := url.Parse(s.Sites.Main); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return fmt.Sprintf("%q <%s.newsletter.%s>", b.DisplayName, b.AppName, host)
}

// RenderPost makes the newsletter mail of a post: HTML (tables and inline
// styles, which the common clients read; a palette that stays legible when
// a client darkens it) and text, in the app's name and colour, from the
// operator's address, replies to the creator's chosen address, with the
// app's List-Id and, for a member, one-click unsubscribe (RFC 8058).
func (s *Sender) RenderPost(p PostMail) (*Message, error) {
	v := postView{Brand: p.Brand, BrandURL: s.Sites.abs("/apps/" + p.Brand.AppName), Color: p.Brand.Color, Author: p.Author,
		Images: p.Images, PostURL: s.Sites.abs(p.PostPath), CommentsURL: s.Sites.abs(p.PostPath) + "#comments", Test: p.Test,
		Settings: s.Sites.abs("/apps/" + p.Brand.AppName + "/notifications")}
	if v.Color == "" {
		v.Color = "#18181b"
	}
	switch {
	case p.PicturesOnSite == 1:
		v.OnSite = "This post has a picture: see it on " + p.Brand.DisplayName + "."
	case p.PicturesOnSite > 1:
		v.OnSite = fmt.Sprintf("This post has %d pictures: see them on %s.", p.PicturesOnSite, p.Brand.DisplayName)
	}
	if strings.HasPrefix(v.Brand.TitleURL, "/") {
		v.Brand.TitleURL = s.Sites.abs(v.Brand.TitleURL)
	}
	if strings.HasPrefix(v.Brand.IconURL, "/") {
		v.Brand.IconURL = s.Sites.abs(v.Brand.IconURL)
	}
	for _, para := range strings.Split(strings.ReplaceAll(p.Content, "\r\n", "\n"), "\n\n") {
		if para = strings.TrimSpace(para); para != "" {
			v.Paragraphs = append(v.Paragraphs, para)
		}
	}
	if p.UnsubscribeToken != "" {
		v.Unsubscribe = s.Sites.Main + "/mail/unsubscribe/" + p.UnsubscribeToken
	}
	subject := store.Snippet(p.Content, 78)
	if subject == "" {
		subject = "New post"
	}
	subject = p.Brand.DisplayName + ": " + subject
	if p.Test {
		subject = "[Test] " + subject
	}
	var html, text bytes.Buffer
	if err := postHTML.Execute(&html, v); err != nil {
		return nil, fmt.Errorf("render newsletter: %w", err)
	}
	if err := postText.Execute(&text, v); err != nil {
		return nil, fmt.Errorf("render newsletter: %w", err)
	}
	name := p.Settings.SenderName
	if name == "" {
		name = p.Brand.DisplayName
	}
	_, addr := FromAddress(s.From)
	return &Message{ID: p.ID, FromName: name, From: addr, To: p.To, Subject: subject, Text: text.String(), HTML: html.String(),
		Unsubscribe: v.Unsubscribe, ReplyTo: p.Settings.ReplyTo, ListID: s.ListID(p.Brand)}, nil
}

var postHTML = template.Must(template.New("post").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="supported-color-schemes" content="light dark">
<title>{{.Brand.DisplayName}}</title></head>
<body style="margin:0;padding:0;background:#f4f4f5;font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#18181b">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f5"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:600px;background:#ffffff;border-radius:12px;border-top:6px solid {{.Color}}">
{{if .Test}}<tr><td style="padding:12px 24px;background:#fef3c7;color:#78350f;font-size:14px">Test mail: only you received it. Members get it when the post is published.</td></tr>
{{end}}<tr><td style="padding:24px 24px 8px 24px">
<a href="{{.BrandURL}}" style="text-decoration:none;color:#18181b;font-weight:700;font-size:20px">{{if .Brand.TitleURL}}<img src="{{.Brand.TitleURL}}" alt="{{.Brand.DisplayName}}" height="36" style="height:36px;border:0">{{else}}{{if .Brand.IconURL}}<img src="{{.Brand.IconURL}}" alt="" width="36" height="36" style="width:36px;height:36px;border:0;border-radius:8px;vertical-align:middle;margin-right:8px">{{end}}{{.Brand.DisplayName}}{{end}}</a>
{{if .Author}}<p style="font-size:13px;color:#52525b;margin:8px 0 0 0">@{{.Author}}</p>{{end}}
</td></tr>
<tr><td style="padding:8px 24px 24px 24px">
{{range .Images}}<p style="margin:0 0 16px 0"><a href="{{$.PostURL}}"><img src="{{.}}" alt="" width="552" style="width:100%;max-width:552px;height:auto;border:0;border-radius:8px;display:block"></a></p>
{{end}}{{range .Paragraphs}}<p style="font-size:16px;line-height:1.6;margin:0 0 14px 0;white-space:pre-line;color:#18181b">{{.}}</p>
{{end}}{{if .OnSite}}<p style="font-size:15px;margin:0 0 14px 0;color:#3f3f46"><a href="{{.PostURL}}" style="color:{{.Color}}">{{.OnSite}}</a></p>
{{end}}<table role="presentation" cellpadding="0" cellspacing="0" style="margin:20px 0 8px 0"><tr>
<td style="background:{{.Color}};border-radius:8px"><a href="{{.PostURL}}" style="display:inline-block;padding:12px 20px;color:#ffffff;text-decoration:none;font-weight:600">Read on {{.Brand.DisplayName}}</a></td>
<td style="padding-left:16px"><a href="{{.CommentsURL}}" style="color:{{.Color}};font-weight:600">Comments</a></td>
</tr></table>
</td></tr></table>
<p style="font-size:12px;color:#71717a;margin:16px 0">{{.Brand.DisplayName}}{{if .Unsubscribe}} · <a href="{{.Unsubscribe}}" style="color:#71717a">Unsubscribe from this newsletter</a>{{end}} · <a href="{{.Settings}}" style="color:#71717a">E-mail settings</a></p>
</td></tr></table></body></html>
`))

var postText = texttemplate.Must(texttemplate.New("post").Parse(`{{if .Test}}[Test mail: only you received it.]

{{end}}{{.Brand.DisplayName}}{{if .Author}} · @{{.Author}}{{end}}
{{range .Paragraphs}}
{{.}}
{{end}}{{range .Images}}
Image: {{.}}
{{end}}{{if .OnSite}}
{{.OnSite}}
{{end}}
Read it on {{.Brand.DisplayName}}: {{.PostURL}}
Comments: {{.CommentsURL}}

--
{{.Brand.DisplayName}} {{.BrandURL}}{{if .Unsubscribe}}
Unsubscribe from this newsletter: {{.Unsubscribe}}{{end}}
`))
