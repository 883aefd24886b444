package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"marquee/store"
)

// Pages rendered when written (issue 45 item 2). A visitor opening an app
// nobody has read since its last post waited for a goja render, tens of
// milliseconds of CPU, and behind every other first view under way: with
// a thousand apps read at random, seconds. A write that changes an app's
// content enqueues a job in its own transaction (store.JobRenderPages),
// and the job renders the app's visitor landing and community page, the
// pages visitors and crawlers open first, into the page cache's second
// tier: the files beside a SQLite database, or Redis in a cluster. The
// first visitor reads them from there, as after an eviction. The renders
// wait behind every render a viewer waits for (the render queue's refresh
// lane), and a page the cache already holds at the app's version is not
// rendered again.

type renderAheadKey struct{}

// renderingAhead: the request is a render made ahead of visitors
// (RenderAppPages), not a visitor's.
func renderingAhead(ctx context.Context) bool {
	v, _ := ctx.Value(renderAheadKey{}).(bool)
	return v
}

// pathsRenderedAhead are the pages of an app rendered when it is written.
func pathsRenderedAhead(appName string) []string {
	return []string{"/apps/" + appName, "/apps/" + appName + "/community"}
}

// renderedAheadPath: path is one of pathsRenderedAhead of some app (the
// front answers those through the chain itself: whole pages, never
// streamed, and what a crawler's connection opens first).
func renderedAheadPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/apps/")
	if !ok {
		return false
	}
	name, sub, nested := strings.Cut(rest, "/")
	return name != "" && (!nested || sub == "community")
}

// RenderAppPages renders the visitor pages of the app idOrName (landing and
// community) that the page cache does not hold at the app's current
// version, as a visitor's first view would render them, and files them in
// the cache's second tier (without one, its memory); nothing with
// RENDER_AHEAD off. An app nobody may see yet (unpublished, suspended) has
// nothing to render, nor one on its own domain (routeHosts redirects its
// main-site pages there; those of the domain are rendered at their first
// visit). An error is a render that failed or found the renderer
// too busy: the job tries again later.
func (s *Server) RenderAppPages(ctx context.Context, idOrName string) error {
	if s.pages.off || !s.cfg.RenderAhead {
		return nil // off: jobs enqueued before it was turned off render nothing
	}
	app, err := s.store.AppByIDOrName(ctx, idOrName)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since
	}
	if err != nil {
		return fmt.Errorf("render pages of app %s: %w", idOrName, err)
	}
	if s.domains.get(ctx).byName[app.Name] != "" {
		return nil
	}
	for _, path := range pathsRenderedAhead(app.Name) {
		req := (&http.Request{Method: http.MethodGet, URL: &url.URL{Path: path}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Accept-Encoding": {"br, gzip"}}, Host: s.mainHost, RemoteAddr: "127.0.0.1:0", RequestURI: path}).
			WithContext(context.WithValue(ctx, renderAheadKey{}, true))
		rec := &recorded{status: http.StatusOK, header: http.Header{}}
		s.main.ServeHTTP(recordWriter{rec}, req)
		if rec.status >= http.StatusInternalServerError {
			return fmt.Errorf("render %s ahead: status %d", path, rec.status)
		}
	}
	return nil
}

// PagesRenderedAheadLast reports whether pages rendered ahead by this
// process outlast it: kept beside a SQLite file database, or shared through
// Redis. A command that renders ahead and exits (bench-data) has nothing
// to render otherwise.
func (s *Server) PagesRenderedAheadLast() bool {
	return !s.pages.off && (s.store.Redis() != nil || s.pages.disk != nil && s.pages.disk.kept != "")
}
