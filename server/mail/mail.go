// Package mail renders the product's e-mails (HTML and plain text, in the
// app's name and look) and hands them to a transport: SMTP through
// wneessen/go-mail when SMTP_URL is set, otherwise .eml files in a folder
// (the embedded default, and a developer's inbox).
package mail

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"

	gomail "github.com/wneessen/go-mail"

	"marquee/store"
)

// Message is a rendered mail ready for a transport.
type Message struct {
	ID       string // unique per mail: the Message-ID and the file name
	FromName string
	From     string
	To       string
	Subject  string
	Text     string
	HTML     string
	// Unsubscribe, when set, is the one-click URL (RFC 8058).
	Unsubscribe string
	// ReplyTo is where replies go (the creator's chosen address); ListID
	// names the app's newsletter (RFC 2919), for filters and clients.
	ReplyTo string
	ListID  string
}

// Transport sends a message.
type Transport interface {
	Send(ctx context.Context, m *Message) error
	// Describe names where mail goes, for the start-up log.
	Describe() string
}

// Build makes the go-mail message of m (both transports write the same).
// Every value that goes into a header is folded to one line first
// (HeaderText): a name stored with a line break from before input refused
// them must neither stop the mail nor add a header to it.
func (m *Message) Build() (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	if err := msg.FromFormat(HeaderText(m.FromName), HeaderText(m.From)); err != nil {
		return nil, fmt.Errorf("mail from: %w", err)
	}
	if err := msg.To(HeaderText(m.To)); err != nil {
		return nil, fmt.Errorf("mail to: %w", err)
	}
	msg.Subject(HeaderText(m.Subject))
	domain := "marquee.local"
	if at := strings.LastIndex(m.From, "@"); at >= 0 {
		domain = strings.Trim(m.From[at+1:], "> ")
	}
	msg.SetMessageIDWithValue(m.ID + "@" + domain)
	msg.SetDate()
	// The plain text goes as 8bit when its lines allow (at most 998
	// bytes, RFC 5322), not quoted-printable: QP's soft line breaks and
	// "=3D" would cut the confirmation and reset links for anyone who
	// copies them from the raw message.
	var textOpts []gomail.PartOption
	if fitsLines(m.Text) {
		textOpts = append(textOpts, gomail.WithPartEncoding(gomail.NoEncoding))
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text, textOpts...)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(HeaderText(m.ReplyTo)); err != nil {
			return nil, fmt.Errorf("mail reply-to: %w", err)
		}
	}
	if m.ListID != "" {
		msg.SetGenHeader(gomail.Header("List-Id"), HeaderText(m.ListID))
	}
	if m.Unsubscribe != "" {
		msg.SetGenHeader(gomail.HeaderListUnsubscribe, "<"+m.Unsubscribe+">")
		msg.SetGenHeader(gomail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	}
	return msg, nil
}

// HeaderText folds a value to one header line: every control character
// (CR, LF, tab, ...) and Unicode line separator becomes a space, runs of
// spaces become one, and the ends are trimmed.
func HeaderText(s string) string {
	if store.OneLine(s) && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	s = strings.Map(func(r rune) rune {
		if store.OneLine(string(r)) {
			return r
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// fitsLines: no line of text is longer than SMTP allows unencoded.
func fitsLines(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if len(line) > 998 {
			return false
		}
	}
	return true
}

// SMTP sends through an SMTP server.
type SMTP struct {
	host    string
	options []gomail.Option
}

// NewSMTP reads SMTP_URL: smtp://[user:pass@]host[:port] (STARTTLS when the
// server offers it, port 587 by default) or smtps:// (TLS from the start,
// port 465); ?tls=required refuses a server without STARTTLS.
func NewSMTP(raw string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "smtp" && u.Scheme != "smtps") {
		return nil, fmt.Errorf("SMTP_URL: want smtp://host:port or smtps://host:port")
	}
	s := &SMTP{host: u.Hostname()}
	port := 587
	if u.Scheme == "smtps" {
		port = 465
		s.options = append(s.options, gomail.WithSSL())
	} else if u.Query().Get("tls") == "required" {
		s.options = append(s.options, gomail.WithTLSPolicy(gomail.TLSMandatory))
	} else {
		s.options = append(s.options, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port <= 0 || port > 65535 {
			return nil, fmt.Errorf("SMTP_URL: the port is not a number")
		}
	}
	s.options = append(s.options, gomail.WithPort(port), gomail.WithTimeout(30*time.Second))
	if u.User != nil && u.User.Username() != "" {
		pass, _ := u.User.Password()
		s.options = append(s.options, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass))
	}
	return s, nil
}

func (s *SMTP) Describe() string { return "smtp://" + s.host }

func (s *SMTP) Send(ctx context.Context, m *Message) error {
	msg, err := m.Build()
	if err != nil {
		return err
	}
	client, err := gomail.NewClient(s.host, s.options...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp send: %w", err)
	}
	return nil
}

// Dir writes each message as <Dir>/<id>.eml (written whole, then renamed,
// so a reader never sees half a mail; the same id overwrites).
type Dir struct{ Path string }

func (d *Dir) Describe() string { return d.Path }

func (d *Dir) Send(_ context.Context, m *Message) error {
	msg, err := m.Build()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.Path, 0o755); err != nil {
		return fmt.Errorf("mail folder: %w", err)
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		return fmt.Errorf("write mail: %w", err)
	}
	name := filepath.Join(d.Path, time.Now().UTC().Format("20060102-150405")+"-"+m.ID+".eml")
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write mail: %w", err)
	}
	return os.Rename(tmp, name)
}

// Sites are the public addresses links are made absolute with.
type Sites struct {
	Main string
	Auth string
	// App answers where an app lives (its verified custom domain's
	// origin, or Main/apps/{name}); nil is Main/apps/{name}.
	App func(appName string) string
}

// appOrigin is the origin of the app's own verified domain, or "" for an
// app at Main/apps/{name} (and for mail of no app).
func (s Sites) appOrigin(appName string) string {
	if s.App == nil || appName == "" {
		return ""
	}
	base := s.App(appName)
	if strings.Contains(base, "/apps/") {
		return ""
	}
	return strings.TrimRight(base, "/")
}

func (s Sites) url(l store.MailLink) string {
	if strings.HasPrefix(l.Path, "http://") || strings.HasPrefix(l.Path, "https://") {
		return l.Path
	}
	if l.Site == "auth" {
		return s.Auth + l.Path
	}
	return s.abs(l.Path)
}

// abs makes a main-site path absolute: an app's pages (/apps/{name}/...)
// on the app's own address, the rest on Main.
func (s Sites) abs(path string) string {
	if rest, ok := strings.CutPrefix(path, "/apps/"); ok && s.App != nil {
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		name, tail := rest[:end], rest[end:]
		base := s.App(name)
		if !strings.HasPrefix(tail, "/") && !strings.Contains(base, "/apps/") {
			tail = "/" + tail // a domain's home is its root
		}
		return base + tail
	}
	return s.Main + path
}

// Sender is what the send job needs: the transport, the operator's sender
// address, and the sites.
type Sender struct {
	Transport Transport
	// From is MAIL_FROM: "Name <addr>" or "addr". The app's display name
	// is the sender's name; the address stays the operator's.
	From  string
	Sites Sites
	// NewsletterRate is how many newsletter mails the deployment sends a
	// second (NEWSLETTER_RATE; 0 is unpaced).
	NewsletterRate float64
}

// FromAddress splits MAIL_FROM into its name and address.
func FromAddress(from string) (name, addr string) {
	from = strings.TrimSpace(from)
	if i := strings.LastIndex(from, "<"); i >= 0 && strings.HasSuffix(from, ">") {
		return strings.Trim(strings.TrimSpace(from[:i]), `"`), from[i+1 : len(from)-1]
	}
	return "", from
}

type view struct {
	Brand       store.MailBrand
	BrandURL    string
	Content     store.MailContent
	ActionURL   string
	Links       []viewLink
	Unsubscribe string
	Settings    string
	// Color is the app's theme colour (buttons), LinkColor its links:
	// the product's dark grey and blue without a theme.
	Color, LinkColor string
}

type viewLink struct{ Label, URL string }

// Render makes the message of a stored mail in its app's look.
func (s *Sender) Render(m *store.Mail, c store.MailContent, brand store.MailBrand) (*Message, error) {
	v := view{Brand: brand, Content: c, Color: "#18181b", LinkColor: "#2563eb"}
	if brand.Color != "" {
		v.Color, v.LinkColor = brand.Color, brand.Color
	}
	if brand.AppName != "" {
		v.BrandURL = s.Sites.abs("/apps/" + brand.AppName)
		v.Settings = s.Sites.abs("/apps/" + brand.AppName + "/profile")
	} else {
		v.BrandURL = s.Sites.Main + "/"
	}
	if strings.HasPrefix(v.Brand.TitleURL, "/") {
		v.Brand.TitleURL = s.Sites.abs(v.Brand.TitleURL)
	}
	if strings.HasPrefix(v.Brand.IconURL, "/") {
		v.Brand.IconURL = s.Sites.abs(v.Brand.IconURL)
	}
	if c.Action != nil {
		v.ActionURL = s.Sites.url(*c.Action)
	}
	for _, l := range c.Links {
		v.Links = append(v.Links, viewLink{Label: l.Label, URL: s.Sites.url(l)})
	}
	// An app on its own domain mails from it: the unsubscribe link and
	// the images (its icon, title, a post's pictures) are the domain's,
	// which serves /mail/ and /media/ as the main site does.
	origin := s.Sites.appOrigin(brand.AppName)
	if !m.Transactional && m.UnsubscribeToken != nil {
		site := s.Sites.Main
		if origin != "" {
			site = origin
		}
		v.Unsubscribe = site + "/mail/unsubscribe/" + *m.UnsubscribeToken
	}
	var html, text bytes.Buffer
	if err := htmlTemplate.Execute(&html, v); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", m.Kind, err)
	}
	if err := textTemplate.Execute(&text, v); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", m.Kind, err)
	}
	htmlOut, textOut := html.String(), text.String()
	if origin != "" {
		media := strings.NewReplacer(s.Sites.Main+"/media/", origin+"/media/")
		htmlOut, textOut = media.Replace(htmlOut), media.Replace(textOut)
	}
	_, addr := FromAddress(s.From)
	return &Message{ID: m.ID, FromName: brand.DisplayName, From: addr, To: m.To, Subject: c.Subject,
		Text: textOut, HTML: htmlOut, Unsubscribe: v.Unsubscribe}, nil
}

var htmlTemplate = template.Must(template.New("html").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Content.Subject}}</title></head>
<body style="margin:0;padding:0;background:#f4f4f5;font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#18181b">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f5"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:12px">
<tr><td style="padding:24px 24px 8px 24px">
<a href="{{.BrandURL}}" style="text-decoration:none;color:#18181b;font-weight:700;font-size:20px">{{if .Brand.TitleURL}}<img src="{{.Brand.TitleURL}}" alt="{{.Brand.DisplayName}}" height="36" style="height:36px;border:0">{{else}}{{if .Brand.IconURL}}<img src="{{.Brand.IconURL}}" alt="" width="36" height="36" style="width:36px;height:36px;border:0;border-radius:8px;vertical-align:middle;margin-right:8px">{{end}}{{.Brand.DisplayName}}{{end}}</a>
</td></tr>
<tr><td style="padding:8px 24px 24px 24px">
<h1 style="font-size:22px;margin:8px 0 16px 0">{{.Content.Heading}}</h1>
{{range .Content.Paragraphs}}<p style="font-size:16px;line-height:1.5;margin:0 0 12px 0">{{.}}</p>
{{end}}{{if .Content.Rows}}<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="margin:8px 0 16px 0;border-top:1px solid #e4e4e7">
{{range .Content.Rows}}<tr><td style="padding:8px 0;border-bottom:1px solid #e4e4e7;font-size:15px{{if .Strong}};font-weight:700{{end}}">{{.Label}}</td><td align="right" style="padding:8px 0;border-bottom:1px solid #e4e4e7;font-size:15px{{if .Strong}};font-weight:700{{end}}">{{.Value}}</td></tr>
{{end}}</table>
{{end}}{{if .ActionURL}}<p style="margin:20px 0"><a href="{{.ActionURL}}" style="display:inline-block;background:{{.Color}};color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:8px;font-weight:600">{{.Content.Action.Label}}</a></p>
<p style="font-size:13px;color:#52525b;word-break:break-all">{{.ActionURL}}</p>
{{end}}{{range .Links}}<p style="font-size:15px;margin:0 0 8px 0"><a href="{{.URL}}" style="color:{{$.LinkColor}}">{{.Label}}</a></p>
{{end}}{{if .Content.Note}}<p style="font-size:13px;color:#52525b;margin-top:16px">{{.Content.Note}}</p>{{end}}
</td></tr></table>
<p style="font-size:12px;color:#71717a;margin:16px 0">{{.Brand.DisplayName}}{{if .Unsubscribe}} · <a href="{{.Unsubscribe}}" style="color:#71717a">Unsubscribe from these e-mails</a>{{end}}{{if .Settings}} · <a href="{{.Settings}}" style="color:#71717a">E-mail settings</a>{{end}}</p>
</td></tr></table></body></html>
`))

var textTemplate = texttemplate.Must(texttemplate.New("text").Parse(`{{.Brand.DisplayName}}

{{.Content.Heading}}
{{range .Content.Paragraphs}}
{{.}}
{{end}}{{if .Content.Rows}}
{{range .Content.Rows}}{{.Label}}: {{.Value}}
{{end}}{{end}}{{if .ActionURL}}
{{.Content.Action.Label}}: {{.ActionURL}}
{{end}}{{range .Links}}
{{.Label}}: {{.URL}}
{{end}}{{if .Content.Note}}
{{.Content.Note}}
{{end}}
--
{{.Brand.DisplayName}} {{.BrandURL}}{{if .Unsubscribe}}
Unsubscribe from these e-mails: {{.Unsubscribe}}{{end}}
`))
