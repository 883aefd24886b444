package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

type Notification struct {
	bun.BaseModel `bun:"table:notifications"`

	ID        string     `bun:",pk" json:"id"`
	AppID     string     `bun:",notnull" json:"appId"`
	UserID    string     `bun:",notnull" json:"-"`
	SenderID  *string    `json:"-"`
	Content   string     `bun:",notnull" json:"content"`
	Kind      string     `bun:",notnull,default:'SYSTEM'" json:"kind"`
	Link      string     `bun:",notnull,default:''" json:"link"`
	Source    string     `bun:",notnull,default:''" json:"-"`
	ReadAt    *time.Time `json:"readAt"`
	CreatedAt time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

type PushSubscription struct {
	bun.BaseModel `bun:"table:push_subscriptions"`

	ID       string `bun:",pk" json:"id"`
	AppID    string `bun:",notnull,unique:push_app_endpoint" json:"appId"`
	UserID   string `bun:",notnull" json:"-"`
	Endpoint string `bun:",notnull,unique:push_app_endpoint" json:"endpoint"`
	P256dh   string `bun:"p256dh,notnull" json:"p256dh"`
	Auth     string `bun:",notnull" json:"auth"`
	// Origin is where the browser subscribed (scheme://host[:port]): the
	// app's verified domain or the main site, as the server resolved the
	// request's host. Its service worker lives there, so the same browser
	// has one subscription per origin; a push goes to those of the app's
	// current origin first (push.Sender). "" for rows older than the column.
	Origin    string    `bun:",notnull,default:''" json:"origin"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// Notification kinds. Members mute by kind, so every trigger names one; the
// commerce, donation and membership branches call Notify with theirs.
const (
	KindNewPost           = "NEW_POST"
	KindNewEvent          = "NEW_EVENT"
	KindReply             = "REPLY"
	KindOrderStatus       = "ORDER_STATUS"
	KindNewOrder          = "NEW_ORDER"
	KindDonation          = "DONATION"
	KindEventUpdate       = "EVENT_UPDATE"
	KindMembershipLapsing = "MEMBERSHIP_LAPSING"
	KindNewMember         = "NEW_MEMBER"
	KindSystem            = "SYSTEM"
)

// NotificationKinds are the kinds a member can mute, in the order the
// settings show them.
var NotificationKinds = []string{KindNewPost, KindNewEvent, KindReply, KindEventUpdate, KindOrderStatus,
	KindNewOrder, KindDonation, KindMembershipLapsing, KindNewMember}

// StaffNotificationKind: a kind only the creator and admins receive.
func StaffNotificationKind(kind string) bool {
	return kind == KindNewOrder || kind == KindDonation || kind == KindNewMember
}

// Background jobs Notify writes to the outbox (server/jobs works them).
const (
	// JobNotifyFanOut resolves an audience and writes its notifications
	// (args: the Notice).
	JobNotifyFanOut = "notify_fanout"
	// JobPushNotifications sends written notifications as web push (args:
	// PushJob).
	JobPushNotifications = "push_notifications"
)

// PushJob names the notifications a push job sends.
type PushJob struct {
	IDs []string `json:"ids"`
}

// Audiences resolve recipients inside the app at send time.
const (
	// AudienceMembers is everyone who follows the app, whatever their role.
	AudienceMembers = "MEMBERS"
	// AudienceStaff is the creator and the admins (new orders, donations).
	AudienceStaff = "STAFF"
)

// NotificationPreference is one member's choice for one app. A missing row
// means "everything on".
type NotificationPreference struct {
	bun.BaseModel `bun:"table:notification_preferences"`

	AppID      string `bun:",pk" json:"-"`
	UserID     string `bun:",pk" json:"-"`
	MutedAll   bool   `bun:",notnull,default:false" json:"mutedAll"`
	MutedKinds string `bun:",notnull,default:''" json:"-"`
	// EmailMutedAll and EmailMutedKinds are the e-mail switches, apart
	// from the in-app ones: a member may want receipts in the app only.
	EmailMutedAll   bool   `bun:",notnull,default:false" json:"emailMutedAll"`
	EmailMutedKinds string `bun:",notnull,default:''" json:"-"`
	// EmailDigest: the member takes one mail a week with the app's new
	// posts and events (store/digest.go) instead of a mail for each post.
	EmailDigest bool      `bun:",notnull,default:false" json:"emailDigest"`
	UpdatedAt   time.Time `bun:",notnull,default:current_timestamp" json:"-"`
}

// EmailMuted lists the kinds whose e-mail is off.
func (p *NotificationPreference) EmailMuted() []string {
	out := []string{}
	for _, k := range strings.Split(p.EmailMutedKinds, ",") {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}

func joinKinds(kinds []string) string {
	kinds = uniq(kinds)
	slices.Sort(kinds)
	if len(kinds) == 0 {
		return ""
	}
	return "," + strings.Join(kinds, ",") + ","
}

// SetEmailPreferences stores the member's e-mail switches in the app,
// keeping the in-app ones.
func (s *Storage) SetEmailPreferences(ctx context.Context, appID, userID string, mutedAll bool, kinds []string) (*NotificationPreference, error) {
	p := &NotificationPreference{AppID: appID, UserID: userID, EmailMutedAll: mutedAll, EmailMutedKinds: joinKinds(kinds),
		UpdatedAt: time.Now().UTC()}
	_, err := s.db.NewInsert().Model(p).
		On("CONFLICT (app_id, user_id) DO UPDATE").
		Set("email_muted_all = EXCLUDED.email_muted_all, email_muted_kinds = EXCLUDED.email_muted_kinds, updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("save e-mail preferences: %w", err)
	}
	return s.NotificationPreferences(ctx, appID, userID)
}

// Muted lists the muted kinds.
func (p *NotificationPreference) Muted() []string {
	out := []string{}
	for _, k := range strings.Split(p.MutedKinds, ",") {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}

// Notice is what a trigger sends. Recipients are RecipientIDs, or everyone
// Audience names in the app; the sender never notifies themself, and members
// who muted the app or the kind get nothing. Link is a path inside the app
// ("/posts/ID"); Notify prefixes the app's base path, so callers need not
// know the app's name.
type Notice struct {
	AppID        string   `json:"appId"`
	Kind         string   `json:"kind"`
	RecipientIDs []string `json:"recipientIds,omitempty"`
	Audience     string   `json:"audience,omitempty"`
	SenderID     string   `json:"senderId,omitempty"` // "" for system notices
	Text         string   `json:"text"`
	Link         string   `json:"link"`
	// Source names what caused an audience notice ("message:ID"), so a
	// fan-out job that runs twice writes its notifications once.
	Source string    `json:"source,omitempty"`
	At     time.Time `json:"at"`
}

// Notify sends a notice through db, which should be the transaction of the
// write that caused it, so the notice exists exactly when the post, order or
// donation does. Named recipients get their rows at once (and a push job);
// an audience, which may be thousands of members, becomes a fan-out job that
// writes the rows outside the request.
func Notify(ctx context.Context, db bun.IDB, n Notice) ([]Notification, error) {
	if n.Kind == "" {
		n.Kind = KindSystem
	}
	if n.At.IsZero() {
		n.At = time.Now().UTC()
	}
	if n.Audience != "" {
		return nil, enqueue(ctx, db, JobNotifyFanOut, n)
	}
	return writeNotice(ctx, db, n)
}

// FanOut writes an audience notice's notifications and its push job in one
// transaction (the fan-out job). A notice with a Source is written once even
// when the job runs again after a crash.
func (s *Storage) FanOut(ctx context.Context, n Notice) (int, error) {
	var written int
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if s.db.Dialect().Name() == dialect.SQLite {
			// Take SQLite's write lock first: a transaction that reads and
			// then writes cannot wait for a concurrent writer (the upgrade
			// fails at once with SQLITE_BUSY), while a first write waits
			// out busy_timeout. Fan-out jobs run side by side.
			if _, err := tx.ExecContext(ctx, `UPDATE notifications SET source = source WHERE 1 = 0`); err != nil {
				return fmt.Errorf("fan-out: lock: %w", err)
			}
		}
		if n.Source != "" {
			done, err := tx.NewSelect().Model((*Notification)(nil)).
				Where("app_id = ? AND kind = ? AND source = ?", n.AppID, n.Kind, n.Source).Exists(ctx)
			if err != nil {
				return fmt.Errorf("fan-out: check %s: %w", n.Source, err)
			}
			if done {
				return nil
			}
		}
		rows, err := writeNotice(ctx, tx, n)
		written = len(rows)
		return err
	})
	return written, err
}

func enqueue(ctx context.Context, db bun.IDB, kind string, args any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("encode %s job: %w", kind, err)
	}
	row := &JobOutbox{Kind: kind, Args: string(body), CreatedAt: time.Now().UTC()}
	if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
		return fmt.Errorf("enqueue %s job: %w", kind, err)
	}
	return nil
}

// writeNotice writes one notification per recipient and the job that
// pushes them.
func writeNotice(ctx context.Context, db bun.IDB, n Notice) ([]Notification, error) {
	recipients, err := noticeRecipients(ctx, db, n)
	if err != nil || len(recipients) == 0 {
		return nil, err
	}
	var appName string
	if err := db.NewSelect().Table("apps").Column("name").Where("id = ?", n.AppID).Scan(ctx, &appName); err != nil {
		return nil, fmt.Errorf("notify: load app %s: %w", n.AppID, err)
	}
	// A notice about an event deleted before its fan-out ran leads to the
	// events list, not to a page that is gone (DeleteEvent relinks the
	// notices already written).
	if id, ok := strings.CutPrefix(n.Link, "/events/"); ok && id != "" && !strings.ContainsAny(id, "/?") {
		exists, err := db.NewSelect().Table("events").Where("id = ?", id).Exists(ctx)
		if err != nil {
			return nil, fmt.Errorf("notify: check event %s: %w", id, err)
		}
		if !exists {
			n.Link = "/events"
		}
	}
	link := "/apps/" + appName + n.Link
	var sender *string
	if n.SenderID != "" {
		sender = &n.SenderID
	}
	rows := make([]Notification, len(recipients))
	for i, uid := range recipients {
		rows[i] = Notification{ID: NewID(), AppID: n.AppID, UserID: uid, SenderID: sender, Content: n.Text,
			Kind: n.Kind, Link: link, Source: n.Source, CreatedAt: n.At}
	}
	for batch := range slices.Chunk(rows, 500) {
		if _, err := db.NewInsert().Model(&batch).Exec(ctx); err != nil {
			return nil, fmt.Errorf("notify %s: insert: %w", n.Kind, err)
		}
		ids := make([]string, len(batch))
		for i, r := range batch {
			ids[i] = r.ID
		}
		if err := enqueue(ctx, db, JobPushNotifications, PushJob{IDs: ids}); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// NotificationsByID loads notifications for a push job.
func (s *Storage) NotificationsByID(ctx context.Context, ids []string) ([]Notification, error) {
	var rows []Notification
	if len(ids) == 0 {
		return rows, nil
	}
	if err := s.db.NewSelect().Model(&rows).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load notifications: %w", err)
	}
	return rows, nil
}

// noticeRecipients resolves the recipients and drops the sender and every
// member who muted the app or the kind.
func noticeRecipients(ctx context.Context, db bun.IDB, n Notice) ([]string, error) {
	notMuted := func(q *bun.SelectQuery, userCol string) *bun.SelectQuery {
		return q.Where(`NOT EXISTS (SELECT 1 FROM notification_preferences AS p WHERE p.app_id = ? AND p.user_id = `+userCol+
			` AND (p.muted_all OR p.muted_kinds LIKE ?))`, n.AppID, "%,"+n.Kind+",%")
	}
	var ids []string
	var q *bun.SelectQuery
	switch {
	case n.Audience != "":
		q = db.NewSelect().Table("memberships").Column("user_id").Where("app_id = ?", n.AppID)
		switch n.Audience {
		case AudienceMembers:
			q = q.Where(reachesWhileUnpublished("memberships"))
		case AudienceStaff:
			q = q.Where("role IN (?)", bun.List([]string{RoleCreator, RoleAdmin}))
		default:
			return nil, fmt.Errorf("notify: unknown audience %q", n.Audience)
		}
		q = notMuted(q, "memberships.user_id")
		if n.SenderID != "" {
			q = q.Where("memberships.user_id <> ?", n.SenderID)
		}
	case len(n.RecipientIDs) > 0:
		q = notMuted(db.NewSelect().Table("users").Column("id").Where("id IN (?)", bun.List(uniq(n.RecipientIDs))), "users.id")
		if n.SenderID != "" {
			q = q.Where("users.id <> ?", n.SenderID)
		}
	default:
		return nil, nil
	}
	if err := q.Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("notify %s: recipients: %w", n.Kind, err)
	}
	return ids, nil
}

// noticeOfHidden leaves out the notifications about a hidden post or
// comment (their source names it) for everyone but its author: a hidden
// message is not announced, and reappears when it is shown again.
// An event's notices (new, updated) name it as "event:ID" the same way, and
// a hidden event's are left out for everyone but its creator.
func noticeOfHidden(alias string) string {
	return "NOT EXISTS (SELECT 1 FROM messages AS hm WHERE hm.hidden <> '' AND hm.sender_id <> " + alias + ".user_id AND " +
		alias + ".source = 'message:' || hm.id) AND " +
		"NOT EXISTS (SELECT 1 FROM events AS he WHERE he.hidden <> '' AND he.creator_id <> " + alias + ".user_id AND " +
		alias + ".source = 'event:' || he.id)"
}

// Snippet shortens user text for a notification line.
func Snippet(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

// NotificationView is one entry of the panel (SPEC.md section 3:
// id, content, createdAt, sender.username).
type NotificationView struct {
	ID        string        `json:"id"`
	Content   string        `json:"content"`
	Kind      string        `json:"kind"`
	Link      string        `json:"link"`
	CreatedAt time.Time     `json:"createdAt"`
	ReadAt    *time.Time    `json:"readAt"`
	Sender    *NoticeSender `json:"sender"`
}

type NoticeSender struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

type NotificationPage struct {
	Notifications []NotificationView
	Pagination    Pagination
}

// UnreadNotifications lists a member's unread notifications in one app,
// newest first.
func (s *Storage) UnreadNotifications(ctx context.Context, appID, userID string, page, limit int) (*NotificationPage, error) {
	page, limit = ClampPage(page, limit)
	var rows []struct {
		Notification
		SenderUsername *string `bun:"sender_username"`
	}
	total, err := s.db.NewSelect().TableExpr("notifications AS n").
		ColumnExpr("n.*").ColumnExpr("u.username AS sender_username").
		Join("LEFT JOIN users AS u ON u.id = n.sender_id").
		Where("n.app_id = ? AND n.user_id = ? AND n.read_at IS NULL", appID, userID).
		Where(noticeOfHidden("n")).
		OrderExpr("n.created_at DESC, n.id DESC").Limit(int64(limit)).Offset(int64((page-1)*limit)).
		ScanAndCount(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	out := make([]NotificationView, 0, len(rows))
	for _, r := range rows {
		v := NotificationView{ID: r.ID, Content: r.Content, Kind: r.Kind, Link: r.Link, CreatedAt: r.CreatedAt, ReadAt: r.ReadAt}
		if r.SenderID != nil && r.SenderUsername != nil {
			v.Sender = &NoticeSender{ID: *r.SenderID, Username: *r.SenderUsername}
		}
		out = append(out, v)
	}
	return &NotificationPage{Notifications: out, Pagination: NewPagination(page, limit, int(total))}, nil
}

// UnreadCount is the bell's badge.
func (s *Storage) UnreadCount(ctx context.Context, appID, userID string) (int, error) {
	n, err := s.db.NewSelect().TableExpr("notifications AS n").
		Where("n.app_id = ? AND n.user_id = ? AND n.read_at IS NULL", appID, userID).Where(noticeOfHidden("n")).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count notifications: %w", err)
	}
	return int(n), nil
}

// MarkNotificationsRead marks the given notifications (or all, when all is
// set) of the member in the app as read; others' rows are never touched.
func (s *Storage) MarkNotificationsRead(ctx context.Context, appID, userID string, ids []string, all bool) (int, error) {
	if !all && len(ids) == 0 {
		return 0, nil
	}
	q := s.db.NewUpdate().Model((*Notification)(nil)).Set("read_at = ?", time.Now().UTC()).
		Where("app_id = ? AND user_id = ? AND read_at IS NULL", appID, userID)
	if !all {
		q = q.Where("id IN (?)", bun.List(uniq(ids)))
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("mark notifications read: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// NotificationPreferences returns the member's choice in the app ("everything
// on" when never set).
func (s *Storage) NotificationPreferences(ctx context.Context, appID, userID string) (*NotificationPreference, error) {
	p := &NotificationPreference{AppID: appID, UserID: userID}
	err := s.db.NewSelect().Model(p).WherePK().Scan(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load notification preferences: %w", err)
	}
	return p, nil
}

// SetNotificationPreferences stores the member's choice; unknown kinds are
// the caller's to refuse.
func (s *Storage) SetNotificationPreferences(ctx context.Context, appID, userID string, mutedAll bool, kinds []string) (*NotificationPreference, error) {
	kinds = uniq(kinds)
	slices.Sort(kinds)
	muted := ""
	if len(kinds) > 0 {
		muted = "," + strings.Join(kinds, ",") + ","
	}
	p := &NotificationPreference{AppID: appID, UserID: userID, MutedAll: mutedAll, MutedKinds: muted, UpdatedAt: time.Now().UTC()}
	_, err := s.db.NewInsert().Model(p).
		On("CONFLICT (app_id, user_id) DO UPDATE").
		Set("muted_all = EXCLUDED.muted_all, muted_kinds = EXCLUDED.muted_kinds, updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("save notification preferences: %w", err)
	}
	// Read back: the row also holds the e-mail switches this call keeps.
	return s.NotificationPreferences(ctx, appID, userID)
}

// SavePushSubscription stores a browser's subscription for the member in the
// app, made on origin (PushSubscription.Origin). The same endpoint
// subscribing again (new keys, another account on the same browser, or the
// same subscription sent from the app's other origin) replaces the old row
// instead of adding one; the row kept is answered.
func (s *Storage) SavePushSubscription(ctx context.Context, appID, userID, origin, endpoint, p256dh, auth string) (*PushSubscription, error) {
	sub := &PushSubscription{ID: NewID(), AppID: appID, UserID: userID, Endpoint: endpoint, P256dh: p256dh, Auth: auth,
		Origin: origin, CreatedAt: time.Now().UTC()}
	_, err := s.db.NewInsert().Model(sub).
		On("CONFLICT (app_id, endpoint) DO UPDATE").
		Set("user_id = EXCLUDED.user_id, p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, origin = EXCLUDED.origin").
		Returning("id, created_at").
		Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("save push subscription: %w", err)
	}
	return sub, nil
}

// PushSubscriptionsOf lists the subscriptions of the users in the app.
func (s *Storage) PushSubscriptionsOf(ctx context.Context, appID string, userIDs []string) ([]PushSubscription, error) {
	var subs []PushSubscription
	if len(userIDs) == 0 {
		return subs, nil
	}
	if err := s.db.NewSelect().Model(&subs).Where("app_id = ? AND user_id IN (?)", appID, bun.List(uniq(userIDs))).
		Scan(ctx); err != nil {
		return nil, fmt.Errorf("load push subscriptions: %w", err)
	}
	return subs, nil
}

// DeletePushSubscription drops a subscription the push service says is gone.
func (s *Storage) DeletePushSubscription(ctx context.Context, id string) error {
	if _, err := s.db.NewDelete().Model((*PushSubscription)(nil)).Where("id = ?", id).Exec(ctx); err != nil {
		return fmt.Errorf("delete push subscription: %w", err)
	}
	return nil
}

// HasPushSubscription reports whether the member has one in the app.
func (s *Storage) HasPushSubscription(ctx context.Context, appID, userID string) (bool, error) {
	ok, err := s.db.NewSelect().Model((*PushSubscription)(nil)).Where("app_id = ? AND user_id = ?", appID, userID).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("check push subscription: %w", err)
	}
	return ok, nil
}
