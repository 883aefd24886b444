package store

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// MediaView is a media record as the API returns it, with a URL to load it.
// Public media (see mediaRow.public) get stable URLs that never expire, so
// link previews (og:image) and cached pages keep working; other media get
// signed URLs. Srcset lists the resized copies and the original by width.
type MediaView struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Type        string    `json:"type" tstype:"MediaType"`
	Size        int64     `json:"size"`
	MimeType    string    `json:"mimeType"`
	Path        string    `json:"path"`
	Description string    `json:"description"`
	MediaKey    string    `json:"mediaKey"`
	AppID       *string   `json:"appId"`
	SignedURL   string    `json:"signedUrl"`
	Width       int       `json:"width,omitempty"`
	Height      int       `json:"height,omitempty"`
	Srcset      string    `json:"srcset,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// PublicMediaPath is the stable URL path of a public file: variant is
// "original" or a width in pixels.
func PublicMediaPath(id, variant string) string {
	return "/media/i/" + id + "/" + variant
}

// VariantKey is the object key of the width-w copy of the file at key: next
// to the original, with the copy's own extension so it is served with the
// right type.
func VariantKey(key string, w int, mimeType string) string {
	ext := ".jpg"
	if mimeType == "image/png" {
		ext = ".png"
	}
	return strings.TrimSuffix(key, path.Ext(key)) + ".w" + strconv.Itoa(w) + ext
}

func (s *Storage) mediaView(ctx context.Context, m *Media, public, restricted bool) (MediaView, error) {
	v := MediaView{
		ID: m.ID, Name: m.Name, Type: m.Type, Size: m.Size, MimeType: m.MimeType,
		Path: m.Path, Description: m.Description, MediaKey: m.MediaKey, AppID: m.AppID,
		Width: m.Width, Height: m.Height, CreatedAt: m.CreatedAt,
	}
	// A pending file is not served at a stable URL yet (its bytes are not
	// checked), so its uploader's preview needs the signed one. A file of
	// a post for followers, members or a tier is served only at its stable
	// URL, which asks who is loading it every time: a signed URL would open
	// it for anyone a reader passed it to.
	stable := (public || restricted) && m.Status == MediaUploaded
	urlOf := func(key, variant string) (string, error) {
		if stable {
			return s.mediaURL + PublicMediaPath(m.ID, variant), nil
		}
		u, err := s.media.SignedURL(ctx, key)
		if err != nil {
			return "", fmt.Errorf("sign media %s: %w", m.ID, err)
		}
		return u, nil
	}
	var err error
	if v.SignedURL, err = urlOf(m.Path, "original"); err != nil {
		return MediaView{}, err
	}
	widths := m.VariantWidths()
	if len(widths) == 0 || m.Status != MediaUploaded {
		return v, nil
	}
	entries := make([]string, 0, len(widths)+1)
	for _, w := range widths {
		u, err := urlOf(VariantKey(m.Path, w, m.VariantType), strconv.Itoa(w))
		if err != nil {
			return MediaView{}, err
		}
		entries = append(entries, u+" "+strconv.Itoa(w)+"w")
	}
	if m.Width > widths[len(widths)-1] {
		entries = append(entries, v.SignedURL+" "+strconv.Itoa(m.Width)+"w")
	}
	v.Srcset = strings.Join(entries, ", ")
	return v, nil
}

// mediaRow is a media row with what decides whether its file is public:
// account media (profile pictures) and the media of apps without a
// subscription gate are; in a gated app only the app's own images (banner,
// title, logo, splash, shown on the landing page to everyone) are, and the
// rest is for those the gate lets in.
type mediaRow struct {
	Media       `bun:",extend"`
	AppSettings AppSettings `bun:"app_settings,scanonly"`
	AppAsset    int         `bun:"app_asset,scanonly"`
	// Restricted: the file is attached to a post or story that is not for
	// everyone (its access), so only its readers may load it.
	Restricted int `bun:"restricted,scanonly"`
	// AppStatus: a suspended app's files are served to no one.
	AppStatus *string `bun:"app_status,scanonly"`
	// AppUnpublished: an unpublished app's files are its staff's (issue
	// 43 item 1), as its pages are.
	AppUnpublished int `bun:"app_unpublished,scanonly"`
}

func (r *mediaRow) public() bool {
	if r.Restricted == 1 || r.AppUnpublished == 1 {
		return false
	}
	return r.AppID == nil || r.AppAsset == 1 || !GatesVisitors(r.AppSettings)
}

// GatesVisitors reports whether the app's subscription gate holds back
// visitors (access.Gated for a viewer without a subscription).
func GatesVisitors(settings AppSettings) bool {
	g := settings.Features.SubscriptionGating
	return g.Enabled && (g.Settings.Required || g.Settings.LandingPageOnly)
}

func (s *Storage) mediaRows(ctx context.Context, db bun.IDB, ids []string) ([]mediaRow, error) {
	var rows []mediaRow
	err := db.NewSelect().Model(&rows).
		ColumnExpr(`"media".*`).
		ColumnExpr(`"a"."settings" AS "app_settings"`).
		ColumnExpr(`"a"."status" AS "app_status"`).
		ColumnExpr(`CASE WHEN "a"."unpublished" THEN 1 ELSE 0 END AS "app_unpublished"`).
		ColumnExpr(`CASE WHEN "media"."id" IN ("a"."banner_media_id", "a"."title_media_id", "a"."logo_media_id", "a"."splash_media_id") THEN 1 ELSE 0 END AS "app_asset"`).
		ColumnExpr(`CASE WHEN EXISTS (SELECT 1 FROM "message_attachments" AS "ma" JOIN "messages" AS "msg" ON "msg"."id" = "ma"."message_id"
			WHERE "ma"."media_id" = "media"."id" AND "msg"."access_audience" <> ?)
			OR EXISTS (SELECT 1 FROM "event_media" AS "em" JOIN "events" AS "ev" ON "ev"."id" = "em"."event_id"
			WHERE "em"."media_id" = "media"."id" AND "ev"."access_audience" <> ?) THEN 1 ELSE 0 END AS "restricted"`, AccessPublic, AccessPublic).
		Join(`LEFT JOIN "apps" AS "a" ON "a"."id" = "media"."app_id"`).
		Where(`"media"."id" IN (?)`, bun.List(ids)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load media: %w", err)
	}
	return rows, nil
}

// mediaViews loads and signs media by id, in one query.
func (s *Storage) mediaViews(ctx context.Context, db bun.IDB, ids []string) (map[string]MediaView, error) {
	out := make(map[string]MediaView, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.mediaRows(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		v, err := s.mediaView(ctx, &rows[i].Media, rows[i].public(), rows[i].Restricted == 1)
		if err != nil {
			return nil, err
		}
		out[v.ID] = v
	}
	return out, nil
}

// ServedMedia is a media row and who may load its file: anyone (Public),
// or, when Restricted, only the readers of a post or story it is part of
// (MediaReadable); otherwise those the app's gate lets in.
type ServedMedia struct {
	*Media
	Public     bool
	Restricted bool
}

// MediaForServing loads a media row and who may load its file. The files
// of a suspended app are not found: the app is offline.
func (s *Storage) MediaForServing(ctx context.Context, id string) (ServedMedia, error) {
	rows, err := s.mediaRows(ctx, s.db, []string{id})
	if err != nil {
		return ServedMedia{}, err
	}
	if len(rows) == 0 || (rows[0].AppStatus != nil && *rows[0].AppStatus == AppSuspended) {
		return ServedMedia{}, ErrNotFound
	}
	return ServedMedia{Media: &rows[0].Media, Public: rows[0].public(), Restricted: rows[0].Restricted == 1}, nil
}

// MediaReadable reports whether reader may read a post, story or event the
// file is part of (CanRead, in SQL): a file of a locked post opens for no
// one else, whatever URL they hold.
func (s *Storage) MediaReadable(ctx context.Context, mediaID string, r Reader) (bool, error) {
	q := s.db.NewSelect().TableExpr("message_attachments AS ma").Join("JOIN messages AS msg ON msg.id = ma.message_id").
		Where("ma.media_id = ?", mediaID)
	n, err := ReadableWhere(q, "msg", r).Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check media readers: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	q = s.db.NewSelect().TableExpr("event_media AS em").Join("JOIN events AS ev ON ev.id = em.event_id").
		Where("em.media_id = ?", mediaID)
	if n, err = ReadableWhere(q, "ev", r).Count(ctx); err != nil {
		return false, fmt.Errorf("check event media readers: %w", err)
	}
	return n > 0, nil
}

// MediaByID loads one media view, or ErrNotFound.
func (s *Storage) MediaByID(ctx context.Context, id string) (MediaView, error) {
	views, err := s.mediaViews(ctx, s.db, []string{id})
	if err != nil {
		return MediaView{}, err
	}
	v, ok := views[id]
	if !ok {
		return MediaView{}, ErrNotFound
	}
	return v, nil
}

func derefIDs(ptrs ...*string) []string {
	var ids []string
	for _, p := range ptrs {
		if p != nil && *p != "" {
			ids = append(ids, *p)
		}
	}
	return ids
}

func pick(views map[string]MediaView, id *string) *MediaView {
	if id == nil {
		return nil
	}
	if v, ok := views[*id]; ok {
		return &v
	}
	return nil
}
