package store

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// JobRenderPages is the job (server/jobs) that renders an app's visitor
// pages after a write changed its content, so that the first visitor
// reads a page already made rather than waiting for a render
// (server/page_render.go).
const JobRenderPages = "render_pages"

// RenderPagesArgs are its arguments.
type RenderPagesArgs struct {
	AppID string `json:"app_id"`
}

// enqueueRenders writes a JobRenderPages for each app whose content
// version the write moved (scopes: its bumped page scopes), in db (the
// write's transaction). The engagement (likes, replies, follows), a post's
// own page and a member's standing are left to the readers: their pages
// are served while one request renders them again. So is the global
// version: renewing every app's pages at once is a burst the page cache's
// refreshes pace better than a thousand jobs would.
func (s *Storage) enqueueRenders(ctx context.Context, db bun.IDB, scopes []string) error {
	if !s.renderAhead {
		return nil
	}
	for _, scope := range scopes {
		if scope == GlobalPageScope || strings.Contains(scope, ":") {
			continue
		}
		if err := enqueue(ctx, db, JobRenderPages, RenderPagesArgs{AppID: scope}); err != nil {
			return err
		}
	}
	return nil
}
