package store

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Issue 43 item 3: a creator exports the app's data in one archive and
// deletes the app, from the studio.

// AppExport is an archive of an app's data (a zip of CSV and JSON), built
// by the export_app job and downloaded through a mailed link.
type AppExport struct {
	bun.BaseModel `bun:"table:app_exports"`

	ID        string     `bun:",pk" json:"id"`
	AppID     string     `bun:",notnull" json:"-"`
	UserID    string     `bun:",notnull" json:"-"`
	TokenHash string     `bun:",notnull,unique" json:"-"`
	Content   []byte     `json:"-"`
	CreatedAt time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	ReadyAt   *time.Time `json:"readyAt"`
	ExpiresAt time.Time  `bun:",notnull" json:"expiresAt"`
}

// JobExportApp is the river job that builds an app's archive and mails it.
const JobExportApp = "export_app"

// AppExportJob names the export a job builds and its link's token (only
// the job and the mail see it).
type AppExportJob struct {
	ExportID string `json:"exportId"`
	Token    string `json:"token"`
}

// AppExportTTL is how long an app's archive can be downloaded.
const AppExportTTL = 72 * time.Hour

// RequestAppExport writes an export of app asked for by userID and the job
// that builds it, in one transaction.
func (s *Storage) RequestAppExport(ctx context.Context, appID, userID string) (*AppExport, error) {
	token := NewSessionToken()
	now := time.Now().UTC()
	e := &AppExport{ID: NewID(), AppID: appID, UserID: userID, TokenHash: sessionID(token), CreatedAt: now, ExpiresAt: now.Add(AppExportTTL)}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(e).Exec(ctx); err != nil {
			return fmt.Errorf("request app export: %w", err)
		}
		return enqueue(ctx, tx, JobExportApp, AppExportJob{ExportID: e.ID, Token: token})
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// AppExports lists an app's recent exports, newest first (no content).
func (s *Storage) AppExports(ctx context.Context, appID string, limit int) ([]AppExport, error) {
	out := []AppExport{}
	err := s.db.NewSelect().Model(&out).Column("id", "created_at", "ready_at", "expires_at").Where("app_id = ?", appID).
		Order("created_at DESC", "id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list app exports: %w", err)
	}
	return out, nil
}

// exportTable is one table of the archive: its file name, its columns in
// order, and the query that reads them.
type exportTable struct {
	name    string
	columns []string
	q       *bun.SelectQuery
}

// ExportFiles are the files of an app's archive, in order.
var ExportFiles = []string{"members", "orders", "order_items", "donations", "posts", "events"}

func appExportTables(db bun.IDB, appID string) []exportTable {
	return []exportTable{
		{"members", []string{"user_id", "username", "email", "role", "joined_at"},
			db.NewSelect().TableExpr("memberships AS m").ColumnExpr("m.user_id, u.username, u.email, m.role, m.created_at AS joined_at").
				Join("JOIN users AS u ON u.id = m.user_id").Where("m.app_id = ?", appID).OrderExpr("m.created_at, m.user_id")},
		{"orders", []string{"id", "order_number", "status", "buyer", "email", "subtotal", "shipping", "platform_fee", "total", "refunded_amount",
			"currency", "payment_method", "shipping_address", "notes", "tracking_number", "refund_reason", "created_at", "paid_at", "shipped_at"},
			db.NewSelect().TableExpr("orders AS o").ColumnExpr("o.id, o.order_number, o.status, u.username AS buyer, u.email, o.subtotal, o.shipping, "+
				"o.platform_fee, o.total, o.refunded_amount, o.currency, o.payment_method, o.shipping_address, o.notes, o.tracking_number, "+
				"o.refund_reason, o.created_at, o.paid_at, o.shipped_at").
				Join("LEFT JOIN users AS u ON u.id = o.user_id").Where("o.app_id = ?", appID).OrderExpr("o.created_at, o.id")},
		{"order_items", []string{"order_id", "store_item_id", "name", "type", "quantity", "price", "currency", "custom_options"},
			db.NewSelect().TableExpr("order_items AS i").ColumnExpr("i.order_id, i.store_item_id, i.name, i.type, i.quantity, i.price, i.currency, i.custom_options").
				Where("i.app_id = ?", appID).OrderExpr("i.order_id, i.name, i.id")},
		{"donations", []string{"id", "donor", "email", "amount", "currency", "message", "status", "payment_method", "created_at"},
			db.NewSelect().TableExpr("donations AS d").ColumnExpr("d.id, u.username AS donor, u.email, d.amount, d.currency, d.message, d.status, d.payment_method, d.created_at").
				Join("LEFT JOIN users AS u ON u.id = d.user_id").Where("d.app_id = ?", appID).OrderExpr("d.created_at, d.id")},
		{"posts", []string{"id", "type", "author", "content", "parent_message_id", "access_audience", "created_at"},
			db.NewSelect().TableExpr("messages AS p").ColumnExpr("p.id, p.type, u.username AS author, p.content, p.parent_message_id, p.access_audience, p.created_at").
				Join("LEFT JOIN users AS u ON u.id = p.sender_id").Where("p.app_id = ?", appID).OrderExpr("p.created_at, p.id")},
		{"events", []string{"id", "name", "description", "location", "type", "start_date", "end_date", "is_featured", "is_official", "attendees", "created_at"},
			db.NewSelect().TableExpr("events AS e").ColumnExpr("e.id, e.name, e.description, e.location, e.type, e.start_date, e.end_date, e.is_featured, e.is_official, "+
				"(SELECT COUNT(*) FROM attendees AS a WHERE a.event_id = e.id) AS attendees, e.created_at").
				Where("e.app_id = ?", appID).OrderExpr("e.start_date, e.id")},
	}
}

// cell is a value as the CSV shows it: times in RFC 3339 (UTC), nothing for
// NULL.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case []byte:
		return string(x)
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	default:
		return fmt.Sprint(x)
	}
}

// jsonValue is a value as the JSON shows it (bytes as text, times UTC).
func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC()
	}
	return v
}

// BuildAppArchive writes the zip of an app's data: for each table a CSV
// (a header line, then a line per row) and a JSON array of objects with
// the same columns, plus app.json naming the app and the time.
func BuildAppArchive(ctx context.Context, db bun.IDB, app *App) ([]byte, error) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	now := time.Now().UTC()
	head, _ := json.MarshalIndent(map[string]any{"app": app.Name, "id": app.ID, "displayName": app.Settings.Basic.DisplayName,
		"exportedAt": now, "files": ExportFiles, "money": "integer cents"}, "", "  ")
	if err := writeZip(z, "app.json", head, now); err != nil {
		return nil, err
	}
	for _, t := range appExportTables(db, app.ID) {
		rows := []map[string]any{}
		if err := t.q.Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("export %s: %w", t.name, err)
		}
		var csvBuf bytes.Buffer
		w := csv.NewWriter(&csvBuf)
		_ = w.Write(t.columns)
		objects := make([]map[string]any, len(rows))
		for i, r := range rows {
			line := make([]string, len(t.columns))
			obj := map[string]any{}
			for j, c := range t.columns {
				line[j] = cell(r[c])
				obj[c] = jsonValue(r[c])
			}
			_ = w.Write(line)
			objects[i] = obj
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return nil, err
		}
		js, err := json.MarshalIndent(objects, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", t.name, err)
		}
		if err := writeZip(z, t.name+".csv", csvBuf.Bytes(), now); err != nil {
			return nil, err
		}
		if err := writeZip(z, t.name+".json", js, now); err != nil {
			return nil, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, fmt.Errorf("close archive: %w", err)
	}
	return buf.Bytes(), nil
}

func writeZip(z *zip.Writer, name string, body []byte, at time.Time) error {
	w, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: at})
	if err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	_, err = w.Write(body)
	return err
}

// PrepareAppExport builds an export's archive once (a ready export is
// kept as it is) and answers it with the app and who asked.
func (s *Storage) PrepareAppExport(ctx context.Context, exportID string) (*AppExport, *App, *User, error) {
	e := new(AppExport)
	if err := selectOne(ctx, s.db.NewSelect().Model(e).Where("id = ?", exportID), "export"); err != nil {
		return nil, nil, nil, err
	}
	app := new(App)
	if err := selectOne(ctx, s.db.NewSelect().Model(app).Where("id = ?", e.AppID), "app"); err != nil {
		return nil, nil, nil, err
	}
	u, err := s.UserByID(ctx, e.UserID)
	if err != nil {
		return nil, nil, nil, err
	}
	if e.ReadyAt != nil {
		return e, app, u, nil
	}
	body, err := BuildAppArchive(ctx, s.db, app)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now().UTC()
	if _, err := s.db.NewUpdate().Model((*AppExport)(nil)).Set("content = ?", body).Set("ready_at = ?", now).
		Where("id = ? AND ready_at IS NULL", e.ID).Exec(ctx); err != nil {
		return nil, nil, nil, fmt.Errorf("save app export: %w", err)
	}
	e.Content, e.ReadyAt = body, &now
	return e, app, u, nil
}

// MailAppExport queues the mail with the download link (once per export).
func (s *Storage) MailAppExport(ctx context.Context, e *AppExport, app *App, u *User, token string) error {
	name := app.Settings.Basic.Title(app.Name)
	_, err := QueueMail(ctx, s.db, OutgoingMail{Key: "app-export:" + e.ID, Kind: MailDataExport, AppID: app.ID, UserID: u.ID, To: u.Email,
		Transactional: true, Content: MailContent{Subject: "The export of " + name + " is ready", Heading: "Your app's data is ready",
			Paragraphs: []string{"The archive of " + name + " is ready: members, orders, donations, posts and events, each as CSV and JSON, in one zip file.",
				"The link works for 3 days, for you while you are signed in."},
			Action: &MailLink{Label: "Download the export", Path: "/apps/" + app.Name + "/studio/data/export?token=" + token}}})
	return err
}

// AppExportByToken answers the ready, unexpired archive of app behind a
// link's token, for the member who asked for it alone.
func (s *Storage) AppExportByToken(ctx context.Context, appID, userID, token string) (*AppExport, error) {
	if strings.TrimSpace(token) == "" {
		return nil, ErrNotFound
	}
	e := new(AppExport)
	q := s.db.NewSelect().Model(e).Where("token_hash = ? AND app_id = ? AND user_id = ? AND ready_at IS NOT NULL AND expires_at > ?",
		sessionID(token), appID, userID, time.Now().UTC())
	if err := selectOne(ctx, q, "export"); err != nil {
		return nil, err
	}
	return e, nil
}

// MoneyPending lists, in words for the creator, what keeps an app from
// being deleted: money that is on its way or owed. Empty means none.
//   - orders awaiting payment (a payment may still land);
//   - paid orders neither fulfilled nor refunded (PAID, PROCESSING);
//   - wallet top-ups awaiting payment;
//   - money members put in the app's wallet and have not spent (their
//     balances, up to what their paid top-ups brought in: credits the
//     creator gave are not money).
//
// PayPal platform fees the app owes the operator are not counted: they are
// the operator's to collect and stay listed for them.
func (s *Storage) MoneyPending(ctx context.Context, appID string) ([]string, error) {
	var out []string
	count := func(q *bun.SelectQuery) (int, error) { n, err := q.Count(ctx); return int(n), err }
	n, err := count(s.db.NewSelect().Model((*Order)(nil)).Where("app_id = ? AND status = ?", appID, OrderPending))
	if err != nil {
		return nil, fmt.Errorf("check pending orders: %w", err)
	}
	if n > 0 {
		out = append(out, plural(n, "order is", "orders are")+" awaiting payment: they are cancelled 30 minutes after checkout, or cancel them in Orders")
	}
	n, err = count(s.db.NewSelect().Model((*Order)(nil)).Where("app_id = ? AND status IN (?)", appID, bun.List([]string{OrderPaid, OrderProcessing})))
	if err != nil {
		return nil, fmt.Errorf("check unfulfilled orders: %w", err)
	}
	if n > 0 {
		out = append(out, plural(n, "paid order is", "paid orders are")+" neither shipped nor refunded: ship or refund them in Orders")
	}
	n, err = count(s.db.NewSelect().Model((*WalletTopup)(nil)).Where("app_id = ? AND status = ?", appID, TopupPending))
	if err != nil {
		return nil, fmt.Errorf("check pending top-ups: %w", err)
	}
	if n > 0 {
		out = append(out, plural(n, "wallet top-up is", "wallet top-ups are")+" awaiting payment: they expire within the hour")
	}
	var held, toppedUp int64
	if err := s.db.NewSelect().Model((*WalletAccount)(nil)).ColumnExpr("COALESCE(SUM(balance), 0)").
		Where("app_id = ? AND kind = ? AND balance > 0", appID, WalletMember).Scan(ctx, &held); err != nil {
		return nil, fmt.Errorf("check member balances: %w", err)
	}
	if err := s.db.NewSelect().Model((*WalletTopup)(nil)).ColumnExpr("COALESCE(SUM(amount), 0)").
		Where("app_id = ? AND status = ?", appID, TopupPaid).Scan(ctx, &toppedUp); err != nil {
		return nil, fmt.Errorf("check top-ups: %w", err)
	}
	if owed := min(held, toppedUp); owed > 0 {
		out = append(out, "members hold "+dollars(owed)+" they paid into the app's wallet and have not spent")
	}
	return out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func dollars(cents int64) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }

// ErrMoneyPending: the app still has money on its way or owed
// (MoneyPending says what); it is not deleted.
type ErrMoneyPending struct{ Reasons []string }

func (e *ErrMoneyPending) Error() string {
	return "This app cannot be deleted while money is pending: " + strings.Join(e.Reasons, "; ") + "."
}

// ErrNameMismatch: the name typed to confirm a deletion is not the app's.
var ErrNameMismatch = errors.New("type the app's name to confirm")

// DeleteAppAsCreator is the studio's deletion: typed must be the app's
// name, and nothing may be pending (ErrMoneyPending). The rest is
// DeleteApp's, as the CLI's.
func (s *Storage) DeleteAppAsCreator(ctx context.Context, appID, typed string) (*App, error) {
	app, err := s.AppByIDOrName(ctx, appID)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(typed) != app.Name {
		return nil, ErrNameMismatch
	}
	reasons, err := s.MoneyPending(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	if len(reasons) > 0 {
		return nil, &ErrMoneyPending{Reasons: reasons}
	}
	return s.DeleteApp(ctx, app.ID)
}

// deleteFilesBatch is how many keys one job carries.
const deleteFilesBatch = 200

// appFileKeys lists every stored object of an app: its media with their
// resized copies, its items' private files and unfinished uploads.
func appFileKeys(ctx context.Context, db bun.IDB, appID string) ([]string, error) {
	var media []Media
	if err := db.NewSelect().Model(&media).Column("path", "variants", "variant_type").Where("app_id = ?", appID).Order("path").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list app media: %w", err)
	}
	var keys []string
	for _, m := range media {
		keys = append(keys, m.Path)
		for _, w := range m.VariantWidths() {
			keys = append(keys, VariantKey(m.Path, w, m.VariantType))
		}
	}
	for _, table := range []string{"item_files", "item_uploads"} {
		var paths []string
		if err := db.NewSelect().Table(table).Column("path").Where("app_id = ?", appID).Order("path").Scan(ctx, &paths); err != nil {
			return nil, fmt.Errorf("list %s: %w", table, err)
		}
		keys = append(keys, paths...)
	}
	return keys, nil
}
