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

// ClaimLinkIcon records that domain's icon is wanted and, when this call
// is the first to want it, runs then in the same transaction (the caller
// enqueues the one fetch there, so a claim never exists without its job).
func (s *Storage) ClaimLinkIcon(ctx context.Context, domain string, then func(ctx context.Context, tx bun.Tx) error) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		ic := &LinkIcon{Domain: domain, Status: LinkIconPending, CreatedAt: time.Now().UTC()}
		res, err := tx.NewInsert().Model(ic).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("claim link icon %s: %w", domain, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		return then(ctx, tx)
	})
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
