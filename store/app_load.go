package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// AppByIDOrName finds an app by its id or its name: API paths accept both.
// A segment with the shape of an id is only ever an id (names never have that
// shape), so one app can never answer for another.
func (s *Storage) AppByIDOrName(ctx context.Context, idOrName string) (*App, error) {
	app := new(App)
	column := "name"
	if LooksLikeID(idOrName) {
		column = "id"
	}
	if err := selectOne(ctx, s.db.NewSelect().Model(app).Where("? = ?", bun.Ident(column), idOrName), "app "+idOrName); err != nil {
		return nil, err
	}
	return app, nil
}

// CommunityOfApp returns the app's community row.
func (s *Storage) CommunityOfApp(ctx context.Context, appID string) (*Community, error) {
	c := new(Community)
	if err := selectOne(ctx, s.db.NewSelect().Model(c).Where("app_id = ?", appID), "community of "+appID); err != nil {
		return nil, err
	}
	return c, nil
}

// LinksOfApp lists the link-in-bio entries in their order.
func (s *Storage) LinksOfApp(ctx context.Context, appID string) ([]Link, error) {
	links := []Link{}
	if err := s.db.NewSelect().Model(&links).Where("app_id = ?", appID).Order("position ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load links of %s: %w", appID, err)
	}
	return links, nil
}
