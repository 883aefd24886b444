package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// AppByIDOrName finds an app by its id or its name: API paths accept both.
func (s *Storage) AppByIDOrName(ctx context.Context, idOrName string) (*App, error) {
	app := new(App)
	err := s.DB.NewSelect().Model(app).Where("id = ? OR name = ?", idOrName, idOrName).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load app %q: %w", idOrName, err)
	}
	return app, nil
}

// CommunityOfApp returns the app's community row.
func (s *Storage) CommunityOfApp(ctx context.Context, appID string) (*Community, error) {
	c := new(Community)
	err := s.DB.NewSelect().Model(c).Where("app_id = ?", appID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load community of %s: %w", appID, err)
	}
	return c, nil
}

// LinksOfApp lists the link-in-bio entries in their order.
func (s *Storage) LinksOfApp(ctx context.Context, appID string) ([]Link, error) {
	links := []Link{}
	if err := s.DB.NewSelect().Model(&links).Where("app_id = ?", appID).Order("position ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load links of %s: %w", appID, err)
	}
	return links, nil
}
