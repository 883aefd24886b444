package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Link icon states: the fetch is waiting or retrying, it found an image,
// or the site has none we can use.
const (
	LinkIconPending = "PENDING"
	LinkIconOK      = "OK"
	LinkIconMissing = "MISSING"
)

// LinkIcon is a link-in-bio domain's favicon, fetched once by the server.
type LinkIcon struct {
	bun.BaseModel `bun:"table:link_icons"`

	Domain      string     `bun:",pk"`
	Status      string     `bun:",notnull"`
	ContentType string     `bun:",notnull"`
	Body        []byte     `bun:"body"`
	CreatedAt   time.Time  `bun:",notnull"`
	FetchedAt   *time.Time `bun:"fetched_at"`
}

// LinkIcon loads a domain's icon row, or ErrNotFound when it was never
// asked for.
func (s *Storage) LinkIcon(ctx context.Context, domain string) (*LinkIcon, error) {
	ic := new(LinkIcon)
	if err := selectOne(ctx, s.db.NewSelect().Model(ic).Where("domain = ?", domain), "link icon"); err != nil {
		return nil, err
	}
	return ic, nil
}

// ClaimLinkIcon records inside tx that domain's icon is wanted, and reports
// whether this call was the first (the caller then enqueues the one fetch).
func ClaimLinkIcon(ctx context.Context, tx bun.IDB, domain string) (bool, error) {
	ic := &LinkIcon{Domain: domain, Status: LinkIconPending, CreatedAt: time.Now().UTC()}
	res, err := tx.NewInsert().Model(ic).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("claim link icon %s: %w", domain, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// SaveLinkIcon records the fetch's outcome: OK with the image, or MISSING.
func (s *Storage) SaveLinkIcon(ctx context.Context, domain, status, contentType string, body []byte) error {
	now := time.Now().UTC()
	if _, err := s.db.NewUpdate().Model((*LinkIcon)(nil)).
		Set("status = ?", status).Set("content_type = ?", contentType).Set("body = ?", body).Set("fetched_at = ?", now).
		Where("domain = ?", domain).Exec(ctx); err != nil {
		return fmt.Errorf("save link icon %s: %w", domain, err)
	}
	return nil
}
