package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Mail is one e-mail the product sends. It is written, with the job that
// sends it, in the transaction of what it announces (an order paid, a
// password reset asked for); Key is unique, so announcing the same thing
// twice writes one mail, and the send job sends it once (SentAt).
type Mail struct {
	bun.BaseModel `bun:"table:mails"`

	ID    string  `bun:",pk"`
	Key   string  `bun:"mail_key,notnull,unique"`
	Kind  string  `bun:",notnull"`
	AppID *string ``
	// UserID is the member the mail is for (nil for an address that is
	// not, or not yet, an account's).
	UserID *string ``
	To     string  `bun:"to_addr,notnull"`
	// Transactional mail (receipts, password reset, verification) is sent
	// whatever the member's e-mail switches say and carries no
	// List-Unsubscribe; the rest honours the switches and offers one-click
	// unsubscribe (RFC 8058) through UnsubscribeToken.
	Transactional    bool      `bun:",notnull,default:false"`
	Content          string    `bun:",notnull"`
	UnsubscribeToken *string   `bun:",unique"`
	CreatedAt        time.Time `bun:",notnull,default:current_timestamp"`
	SentAt           *time.Time
}

// MailContent is what a mail says, composed where it is caused and rendered
// into HTML and plain text by the send job (server/mail) in the app's look.
// Paths are made absolute at send time: Site says which host they are on.
type MailContent struct {
	Subject    string     `json:"subject"`
	Heading    string     `json:"heading"`
	Paragraphs []string   `json:"paragraphs,omitempty"`
	Rows       []MailRow  `json:"rows,omitempty"`
	Action     *MailLink  `json:"action,omitempty"`
	Links      []MailLink `json:"links,omitempty"`
	// Note is the small print under the action ("If you did not ask ...").
	Note string `json:"note,omitempty"`
}

// MailRow is one line of a table (an order line, a total, an address).
type MailRow struct {
	Label  string `json:"label"`
	Value  string `json:"value"`
	Strong bool   `json:"strong,omitempty"`
}

// MailLink is a button or link; Path is on the main site unless Site is
// "auth".
type MailLink struct {
	Label string `json:"label"`
	Path  string `json:"path"`
	Site  string `json:"site,omitempty"`
}

// OutgoingMail is a mail to queue.
type OutgoingMail struct {
	Key           string
	Kind          string
	AppID         string
	UserID        string
	To            string
	Transactional bool
	Content       MailContent
}

// JobSendMail is the river job (server/jobs) that renders and sends one mail.
const JobSendMail = "send_mail"

// SendMailJob names the mail a send job sends.
type SendMailJob struct {
	MailID string `json:"mailId"`
}

// Mail kinds that are not notification kinds: account mail, always sent.
const (
	MailVerifyEmail   = "VERIFY_EMAIL"
	MailPasswordReset = "PASSWORD_RESET"
	MailEmailChange   = "EMAIL_CHANGE"
	MailEmailChanged  = "EMAIL_CHANGED"
	MailDataExport    = "DATA_EXPORT"
)

// QueueMail writes m and its send job through db, which should be the
// transaction of what the mail announces. A key already written is not
// written again (false, nil): the mail exists once, and so does its job.
func QueueMail(ctx context.Context, db bun.IDB, m OutgoingMail) (bool, error) {
	if m.Key == "" || m.To == "" {
		return false, fmt.Errorf("queue mail %s: key and recipient are required", m.Kind)
	}
	body, err := json.Marshal(m.Content)
	if err != nil {
		return false, fmt.Errorf("encode mail %s: %w", m.Kind, err)
	}
	row := &Mail{ID: NewID(), Key: m.Key, Kind: m.Kind, To: m.To, Transactional: m.Transactional,
		Content: string(body), CreatedAt: time.Now().UTC()}
	if m.AppID != "" {
		row.AppID = &m.AppID
	}
	if m.UserID != "" {
		row.UserID = &m.UserID
	}
	if !m.Transactional {
		tok := NewSessionToken()
		row.UnsubscribeToken = &tok
	}
	res, err := db.NewInsert().Model(row).On("CONFLICT (mail_key) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("queue mail %s: %w", m.Kind, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	return true, enqueue(ctx, db, JobSendMail, SendMailJob{MailID: row.ID})
}

// MailMember queues a mail to a member about kind in app, unless it is
// optional (not transactional) and the member switched that e-mail off.
// The address is read in the same transaction, so a member who changes it
// gets the mail at the new one.
func MailMember(ctx context.Context, db bun.IDB, m OutgoingMail) (bool, error) {
	var u User
	if err := db.NewSelect().Model(&u).Column("email", "deleted_at").Where("id = ?", m.UserID).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return false, fmt.Errorf("mail %s: load member: %w", m.Kind, err)
	}
	if u.DeletedAt != nil || u.Email == "" {
		return false, nil
	}
	m.To = u.Email
	if !m.Transactional && m.AppID != "" {
		muted, err := db.NewSelect().Model((*NotificationPreference)(nil)).
			Where("app_id = ? AND user_id = ?", m.AppID, m.UserID).
			Where("(email_muted_all OR email_muted_kinds LIKE ?)", "%,"+m.Kind+",%").Exists(ctx)
		if err != nil {
			return false, fmt.Errorf("mail %s: preferences: %w", m.Kind, err)
		}
		if muted {
			return false, nil
		}
	}
	return QueueMail(ctx, db, m)
}

// MailByID loads a mail for its send job.
func (s *Storage) MailByID(ctx context.Context, id string) (*Mail, error) {
	m := new(Mail)
	if err := selectOne(ctx, s.db.NewSelect().Model(m).Where("id = ?", id), "mail"); err != nil {
		return nil, err
	}
	return m, nil
}

// MarkMailSent records that a mail went out; only the first call counts.
func (s *Storage) MarkMailSent(ctx context.Context, id string, at time.Time) error {
	if _, err := s.db.NewUpdate().Model((*Mail)(nil)).Set("sent_at = ?", at).
		Where("id = ? AND sent_at IS NULL", id).Exec(ctx); err != nil {
		return fmt.Errorf("mark mail sent: %w", err)
	}
	return nil
}

// MailBrand is the look of an app's mails: its display name and title image.
type MailBrand struct {
	AppName     string
	DisplayName string
	TitleURL    string
	// Color is the app's main colour (the newsletter's band and buttons),
	// the default theme's when the app chose none; empty (the platform's
	// own mails) is the product's dark grey.
	Color string
	// IconURL is the mail header image made of the app's uploaded icon
	// (shown beside the name when there is no title image).
	IconURL string
}

// MailBrandOf loads the branding of an app's mails ("" gives the platform's).
func (s *Storage) MailBrandOf(ctx context.Context, appID string) (MailBrand, error) {
	if appID == "" {
		return MailBrand{DisplayName: "Marquee"}, nil
	}
	v, err := s.LandingContent(ctx, appID)
	if err != nil {
		return MailBrand{}, err
	}
	b := MailBrand{AppName: v.Name, DisplayName: v.Settings.Basic.DisplayName}
	if b.DisplayName == "" {
		b.DisplayName = strings.ToUpper(v.Name)
	}
	if v.Title != nil {
		b.TitleURL = v.Title.SignedURL
	}
	if v.Logo != nil {
		b.IconURL = "/apps/" + url.PathEscape(v.Name) + "/icons/mail-header.png?v=" + v.Logo.ID
	}
	// The colour its pages wear: an app that never chose one shows the
	// default theme's, and so do its mails. Mails are read on white: a dark
	// theme's colour in a shade that passes there (white text on buttons).
	b.Color = PassingShade(v.Settings.Theme.Resolved().PrimaryColor, LightBackground)
	return b, nil
}

// UnsubscribeTarget is what a one-click unsubscribe link switches off.
type UnsubscribeTarget struct {
	UserID  string
	AppID   string
	AppName string
	Kind    string
}

// unsubscribeTarget finds whose e-mail of which kind a token switches off:
// a mail's, or a newsletter recipient's (which then records that this post
// caused the unsubscribe, for the creator's counts).
func (s *Storage) unsubscribeTarget(ctx context.Context, token string, apply bool) (*UnsubscribeTarget, error) {
	m := new(Mail)
	err := selectOne(ctx, s.db.NewSelect().Model(m).Where("unsubscribe_token = ?", token), "mail")
	if err == nil {
		if m.UserID == nil || m.AppID == nil {
			return nil, ErrNotFound
		}
		return &UnsubscribeTarget{UserID: *m.UserID, AppID: *m.AppID, Kind: m.Kind}, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	r := new(NewsletterRecipient)
	if err := selectOne(ctx, s.db.NewSelect().Model(r).Where("unsubscribe_token = ?", token), "mail"); err != nil {
		return nil, err
	}
	if apply {
		if _, err := s.db.NewUpdate().Model((*NewsletterRecipient)(nil)).Set("unsubscribed_at = ?", time.Now().UTC()).
			Where("id = ? AND unsubscribed_at IS NULL", r.ID).Exec(ctx); err != nil {
			return nil, fmt.Errorf("unsubscribe: %w", err)
		}
	}
	return &UnsubscribeTarget{UserID: r.UserID, AppID: r.AppID, Kind: KindNewsletter}, nil
}

// UnsubscribeByToken switches off the e-mail kind the mail with token was
// about, for its member in its app; repeating it changes nothing.
func (s *Storage) UnsubscribeByToken(ctx context.Context, token string, apply bool) (*UnsubscribeTarget, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, ErrNotFound
	}
	t, err := s.unsubscribeTarget(ctx, token, apply)
	if err != nil {
		return nil, err
	}
	if err := s.db.NewSelect().Table("apps").Column("name").Where("id = ?", t.AppID).Scan(ctx, &t.AppName); err != nil {
		return nil, fmt.Errorf("unsubscribe: load app: %w", err)
	}
	if !apply {
		return t, nil
	}
	p, err := s.NotificationPreferences(ctx, t.AppID, t.UserID)
	if err != nil {
		return nil, err
	}
	kinds := p.EmailMuted()
	kinds = append(kinds, t.Kind)
	if _, err := s.SetEmailPreferences(ctx, t.AppID, t.UserID, p.EmailMutedAll, kinds); err != nil {
		return nil, err
	}
	return t, nil
}
