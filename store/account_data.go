package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// DataExport is a member's archive of everything they put in or bought,
// prepared by a job and downloaded through a mailed link.
type DataExport struct {
	bun.BaseModel `bun:"table:data_exports"`

	ID        string    `bun:",pk"`
	UserID    string    `bun:",notnull"`
	TokenHash string    `bun:",notnull,unique"`
	AppID     *string   ``
	Content   *string   ``
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
	ReadyAt   *time.Time
	ExpiresAt time.Time `bun:",notnull"`
}

// JobExportAccount is the river job that prepares an export.
const JobExportAccount = "export_account"

// ExportJob names the export a job prepares and the token of its link
// (only the job and the mail ever see it).
type ExportJob struct {
	ExportID string `json:"exportId"`
	Token    string `json:"token"`
	AppName  string `json:"appName,omitempty"`
}

// ExportTTL is how long an archive can be downloaded.
const ExportTTL = 7 * 24 * time.Hour

// RequestExport writes an export and the job that prepares it.
func (s *Storage) RequestExport(ctx context.Context, userID string, from AccountMailContext) error {
	token := NewSessionToken()
	now := time.Now().UTC()
	e := &DataExport{ID: NewID(), UserID: userID, TokenHash: sessionID(token), CreatedAt: now, ExpiresAt: now.Add(ExportTTL)}
	if from.AppID != "" {
		e.AppID = &from.AppID
	}
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(e).Exec(ctx); err != nil {
			return fmt.Errorf("request export: %w", err)
		}
		return enqueue(ctx, tx, JobExportAccount, ExportJob{ExportID: e.ID, Token: token, AppName: from.AppName})
	})
}

// Archive is the JSON a member downloads.
type Archive struct {
	ExportedAt  time.Time        `json:"exportedAt"`
	Profile     map[string]any   `json:"profile"`
	Memberships []map[string]any `json:"memberships"`
	Posts       []map[string]any `json:"postsAndComments"`
	Reactions   []map[string]any `json:"reactions"`
	Orders      []map[string]any `json:"orders"`
	Donations   []map[string]any `json:"donations"`
	Subs        []map[string]any `json:"subscriptions"`
	Attendance  []map[string]any `json:"attendance"`
	Following   []map[string]any `json:"notificationPreferences"`
	// Trials and Offers: the free trials the member had and the offer
	// codes they redeemed.
	Trials []map[string]any `json:"trials"`
	Offers []map[string]any `json:"offerRedemptions"`
}

// rowsOf reads a query into plain maps (the archive is for people, and
// keeps each table's columns as they are).
func rowsOf(ctx context.Context, q *bun.SelectQuery) ([]map[string]any, error) {
	out := []map[string]any{}
	if err := q.Scan(ctx, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// PrepareExport builds the archive of an export's member and marks it
// ready; it answers the export (done once: a ready export is kept).
func (s *Storage) PrepareExport(ctx context.Context, exportID string) (*DataExport, *User, error) {
	e := new(DataExport)
	if err := selectOne(ctx, s.db.NewSelect().Model(e).Where("id = ?", exportID), "export"); err != nil {
		return nil, nil, err
	}
	u, err := s.UserByID(ctx, e.UserID)
	if err != nil {
		return nil, nil, err
	}
	if e.ReadyAt != nil {
		return e, u, nil
	}
	a := Archive{ExportedAt: time.Now().UTC(), Profile: map[string]any{"id": u.ID, "username": u.Username, "email": u.Email,
		"emailVerified": u.EmailVerified, "createdAt": u.CreatedAt}}
	db := s.db
	steps := []struct {
		into *[]map[string]any
		q    *bun.SelectQuery
	}{
		{&a.Memberships, db.NewSelect().TableExpr("memberships AS m").ColumnExpr("a.name AS app, m.role, m.created_at").
			Join("JOIN apps AS a ON a.id = m.app_id").Where("m.user_id = ?", u.ID).Order("m.created_at")},
		{&a.Posts, db.NewSelect().Table("messages").Column("id", "app_id", "type", "content", "parent_message_id", "created_at").
			Where("sender_id = ?", u.ID).Order("created_at")},
		{&a.Reactions, db.NewSelect().Table("reactions").Column("message_id", "reaction", "created_at").Where("sender_id = ?", u.ID).Order("created_at")},
		{&a.Orders, db.NewSelect().Table("orders").Column("id", "app_id", "order_number", "status", "subtotal", "platform_fee", "total", "currency",
			"payment_method", "shipping_address", "notes", "tracking_number", "refund_reason", "refunded_amount", "created_at", "paid_at").
			Where("user_id = ?", u.ID).Order("created_at")},
		{&a.Donations, db.NewSelect().Table("donations").Column("id", "app_id", "amount", "currency", "message", "status", "created_at").
			Where("user_id = ?", u.ID).Order("created_at")},
		{&a.Subs, db.NewSelect().Table("subscriptions").Column("id", "app_id", "status", "current_period_end", "cancel_at_period_end", "created_at").
			Where("user_id = ?", u.ID).Order("created_at")},
		{&a.Attendance, db.NewSelect().TableExpr("attendees AS t").ColumnExpr("e.name AS event, e.start_date, t.role").
			Join("JOIN events AS e ON e.id = t.event_id").Where("t.user_id = ?", u.ID)},
		{&a.Trials, db.NewSelect().Table("trials").Column("app_id", "plan_id", "started_at", "ends_at", "converted_at", "ended_at").
			Where("user_id = ?", u.ID).Order("started_at")},
		{&a.Offers, db.NewSelect().TableExpr("offer_redemptions AS r").ColumnExpr("r.app_id, o.code, r.plan_id, r.method, r.discount, r.created_at").
			Join("JOIN offers AS o ON o.id = r.offer_id").Where("r.user_id = ?", u.ID).Order("r.created_at")},
		{&a.Following, db.NewSelect().Table("notification_preferences").Column("app_id", "muted_all", "muted_kinds", "email_muted_all", "email_muted_kinds").
			Where("user_id = ?", u.ID)},
	}
	for _, st := range steps {
		rows, err := rowsOf(ctx, st.q)
		if err != nil {
			return nil, nil, fmt.Errorf("export: %w", err)
		}
		*st.into = rows
	}
	var lines []map[string]any
	if err := db.NewSelect().TableExpr("order_items AS i").ColumnExpr("i.order_id, i.name, i.type, i.quantity, i.price, i.currency").
		Join("JOIN orders AS o ON o.id = i.order_id").Where("o.user_id = ?", u.ID).Scan(ctx, &lines); err != nil {
		return nil, nil, fmt.Errorf("export order lines: %w", err)
	}
	for _, o := range a.Orders {
		items := []map[string]any{}
		for _, l := range lines {
			if fmt.Sprint(l["order_id"]) == fmt.Sprint(o["id"]) {
				items = append(items, l)
			}
		}
		o["items"] = items
	}
	body, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encode export: %w", err)
	}
	content, now := string(body), time.Now().UTC()
	if _, err := s.db.NewUpdate().Model((*DataExport)(nil)).Set("content = ?", content).Set("ready_at = ?", now).
		Where("id = ? AND ready_at IS NULL", e.ID).Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("save export: %w", err)
	}
	e.Content, e.ReadyAt = &content, &now
	return e, u, nil
}

// MailExport queues the mail with the download link (once per export).
func (s *Storage) MailExport(ctx context.Context, e *DataExport, u *User, token, appName string) error {
	q := "?token=" + token
	if appName != "" {
		q += "&app=" + appName
	}
	appID := ""
	if e.AppID != nil {
		appID = *e.AppID
	}
	_, err := QueueMail(ctx, s.db, OutgoingMail{Key: "export:" + e.ID, Kind: MailDataExport, AppID: appID, UserID: u.ID, To: u.Email,
		Transactional: true, Content: MailContent{Subject: "Your data is ready", Heading: "Your data is ready",
			Paragraphs: []string{"The archive of everything you put in or bought is ready: your profile, posts, comments, reactions, orders with their addresses, donations, memberships and events.",
				"The link works for 7 days, while you are signed in."},
			Action: &MailLink{Label: "Download my data", Path: "/authenticate/account/export" + q, Site: "auth"}}})
	return err
}

// ExportByToken answers the ready archive of the user behind a link.
func (s *Storage) ExportByToken(ctx context.Context, userID, token string) (*DataExport, error) {
	e := new(DataExport)
	q := s.db.NewSelect().Model(e).Where("token_hash = ? AND user_id = ? AND ready_at IS NOT NULL AND expires_at > ?",
		sessionID(token), userID, time.Now().UTC())
	if err := selectOne(ctx, q, "export"); err != nil {
		return nil, err
	}
	return e, nil
}

// JobDeleteFiles deletes stored files whose rows are gone (args:
// DeleteFilesJob); server/jobs works it.
const JobDeleteFiles = "delete_files"

// DeleteFilesJob names the object keys to delete.
type DeleteFilesJob struct {
	Keys []string `json:"keys"`
}

// DeleteAccount removes a member's personal data: their posts, comments,
// reactions, memberships, attendance, preferences, devices, tokens, unsent
// mail and sessions, the notices they caused, their donations' messages
// and their account pictures (files too, by a JobDeleteFiles job); the user row stays, anonymised, so orders, donations
// and payments keep a (nameless) buyer for the creator's accounting. An
// account that owns an app is refused (ErrOwnsApp).
func (s *Storage) DeleteAccount(ctx context.Context, userID string) error {
	var owns bool
	var err error
	if owns, err = s.db.NewSelect().Table("apps").Where("creator_id = ?", userID).Exists(ctx); err != nil {
		return fmt.Errorf("check apps owned: %w", err)
	}
	if !owns {
		owns, err = s.db.NewSelect().Table("memberships").Where("user_id = ? AND role = ?", userID, RoleCreator).Exists(ctx)
		if err != nil {
			return fmt.Errorf("check apps owned: %w", err)
		}
	}
	if owns {
		return ErrOwnsApp
	}
	// Posts first (they take their replies), then the member's own replies.
	var msgs []Message
	if err := s.db.NewSelect().Model(&msgs).Where("sender_id = ?", userID).OrderExpr("parent_message_id IS NULL DESC").Scan(ctx); err != nil {
		return fmt.Errorf("list messages: %w", err)
	}
	for i := range msgs {
		if err := s.DeleteMessage(ctx, &msgs[i]); err != nil && !isGone(err) {
			return err
		}
	}
	var ended []string
	now := time.Now().UTC()
	err = s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		// Their memberships end: each app's role history records the leave.
		var apps []string
		if err := tx.NewSelect().Model((*Membership)(nil)).Column("app_id").Where("user_id = ?", userID).Scan(ctx, &apps); err != nil {
			return fmt.Errorf("list memberships: %w", err)
		}
		for _, table := range []string{"reactions"} {
			if _, err := tx.NewDelete().Table(table).Where("sender_id = ?", userID).Exec(ctx); err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
		}
		for _, table := range []string{"memberships", "attendees", "notification_preferences", "push_subscriptions",
			"notifications", "account_tokens", "data_exports", "carts"} {
			if table == "carts" {
				if _, err := tx.NewDelete().Table("cart_items").Where("cart_id IN (SELECT id FROM carts WHERE user_id = ? AND status <> ?)", userID, CartCheckedOut).Exec(ctx); err != nil {
					return fmt.Errorf("delete cart items: %w", err)
				}
				if _, err := tx.NewDelete().Table("carts").Where("user_id = ? AND status <> ?", userID, CartCheckedOut).Exec(ctx); err != nil {
					return fmt.Errorf("delete carts: %w", err)
				}
				continue
			}
			if _, err := tx.NewDelete().Table(table).Where("user_id = ?", userID).Exec(ctx); err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
		}
		for _, appID := range apps {
			if err := recordRole(ctx, tx, appID, userID); err != nil {
				return err
			}
		}
		if _, err := tx.NewDelete().Table("mails").Where("user_id = ? AND sent_at IS NULL", userID).Exec(ctx); err != nil {
			return fmt.Errorf("delete unsent mail: %w", err)
		}
		if _, err := tx.NewUpdate().Table("mails").Set("to_addr = ''").Set("content = '{}'").Where("user_id = ?", userID).Exec(ctx); err != nil {
			return fmt.Errorf("anonymise sent mail: %w", err)
		}
		// What others still saw of them: their notices (a reply quoted in
		// another member's list, a new-donation line naming them), their
		// donations' messages, and their account pictures (rows now, files
		// by the durable job: a link signed before stops working too).
		if _, err := tx.NewDelete().Table("notifications").Where("sender_id = ?", userID).Exec(ctx); err != nil {
			return fmt.Errorf("delete notices they sent: %w", err)
		}
		if _, err := tx.NewUpdate().Table("donations").Set("message = ''").Where("user_id = ?", userID).Exec(ctx); err != nil {
			return fmt.Errorf("clear donation messages: %w", err)
		}
		var pictures []Media
		if err := tx.NewSelect().Model(&pictures).Where("owner_id = ? AND app_id IS NULL", userID).Scan(ctx); err != nil {
			return fmt.Errorf("list account media: %w", err)
		}
		anon := "deleted_" + userID[:12]
		if _, err := tx.NewUpdate().Model((*User)(nil)).Set("username = ?", anon).Set("email = ?", anon+"@deleted.invalid").
			Set("email_verified = false").Set("password_hash = ''").Set("profile_media_id = NULL").Set("deleted_at = ?", now).
			Set("updated_at = ?", now).Where("id = ?", userID).Exec(ctx); err != nil {
			return fmt.Errorf("anonymise user: %w", err)
		}
		if len(pictures) > 0 {
			ids, keys := make([]string, 0, len(pictures)), []string{}
			for _, m := range pictures {
				ids = append(ids, m.ID)
				keys = append(keys, m.Path)
				for _, w := range m.VariantWidths() {
					keys = append(keys, VariantKey(m.Path, w, m.VariantType))
				}
			}
			if _, err := tx.NewDelete().Model((*Media)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
				return fmt.Errorf("delete account media: %w", err)
			}
			if err := enqueue(ctx, tx, JobDeleteFiles, DeleteFilesJob{Keys: keys}); err != nil {
				return err
			}
		}
		var err error
		ended, err = deleteSessionsTx(ctx, tx, userID, "")
		return err
	})
	if err != nil {
		return err
	}
	s.sessions.forgetUser(userID)
	s.InvalidateUser(ctx, userID)
	return s.forgetSessions(ctx, ended)
}

func isGone(err error) bool { return err != nil && (err == ErrNotFound) }
