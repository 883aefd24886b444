package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/media"
	"marquee/store"
)

// GET /media/{key}?exp&sig serves a locally stored file behind a URL this
// server signed. With S3 the browser loads presigned S3 URLs instead.
func (s *Server) mediaGet(c echo.Context) error {
	local, key, err := s.localObject(c)
	if err != nil {
		return err
	}
	if err := local.Verify("GET", key, "", c.QueryParam("exp"), c.QueryParam("sig")); err != nil {
		return answer(err, wording{media.ErrBadSignature: "This link has expired"})
	}
	// An app's files live under apps/{id}/: a link signed before the app
	// was suspended opens nothing while it is (usableApp).
	if rest, ok := strings.CutPrefix(key, "apps/"); ok {
		appID, _, _ := strings.Cut(rest, "/")
		view, err := s.loadAccess(c, appID)
		if err != nil {
			return err
		}
		if view.Unpublished {
			// An unpublished app's files are its staff's (issue 43 item
			// 1): media URLs skip the session lookup, this one needs it.
			if v := viewerOf(c); v.User == nil {
				s.lookUpSession(c, v)
			}
			if _, err := s.scopeOfView(c, view); err != nil {
				return err
			}
		}
	}
	f, size, err := local.Open(c.Request().Context(), key)
	if err != nil {
		return notFound("Not found")
	}
	defer f.Close()
	s.serveFile(c, key, f, size, "private, max-age=86400", time.Time{})
	return nil
}

// Public files never change under their URL (an id names one upload, and a
// width one copy of it), so browsers and CDNs may keep them for a year.
const (
	publicMediaCache  = "public, max-age=31536000, immutable"
	privateMediaCache = "private, max-age=3600"
)

// GET /media/i/{id}/{variant} serves a file at a URL that does not expire:
// "original" or one of the resized copies' widths. Link previews (og:image)
// and cached pages use it for public media; media of a subscription-gated
// app is served only to its owner and to the viewers the gate lets in.
func (s *Server) mediaByID(c echo.Context) error {
	ctx := c.Request().Context()
	m, err := s.store.MediaForServing(ctx, c.Param("id"))
	if err != nil {
		return wrapLoad(err, "Not found")
	}
	if m.Status != store.MediaUploaded {
		return notFound("Not found")
	}
	if ok, err := s.mayLoadMedia(c, m); err != nil || !ok {
		return errOr(err, notFound("Not found"))
	}
	key := m.Path
	if v := c.Param("variant"); v != "original" {
		w, err := strconv.Atoi(v)
		if err != nil || !m.HasVariant(w) {
			return notFound("Not found")
		}
		key = store.VariantKey(m.Path, w, m.VariantType)
	}
	f, size, err := s.files.Open(ctx, key)
	if err != nil {
		// Missing bytes are a 404; an object store that is down is a 503
		// (classify), never a "Not found" that a cache or a crawler keeps.
		return fmt.Errorf("open media %s: %w", m.ID, err)
	}
	defer f.Close()
	cache := publicMediaCache
	if !m.Public {
		cache = privateMediaCache
	}
	c.Response().Header().Set("ETag", `"`+m.ID+"-"+c.Param("variant")+`"`)
	s.serveFile(c, key, f, size, cache, m.CreatedAt)
	return nil
}

// mayLoadMedia: anyone may load a public file; a gated app's file is for
// its uploader and for the viewers the app's subscription gate lets in; the
// file of a post or story for followers, members or a tier is for its
// uploader and the viewers who may read that post (store.CanRead).
func (s *Server) mayLoadMedia(c echo.Context, m store.ServedMedia) (bool, error) {
	if m.Public {
		return true, nil
	}
	v := viewerOf(c)
	if v.User == nil && m.AppID != nil {
		// Media URLs skip the session lookup (skipsSession): public files
		// do not depend on who asks. This one does.
		s.lookUpSession(c, v)
		if v.LookupErr != nil {
			return false, v.LookupErr
		}
	}
	user := v.User
	if user == nil || m.AppID == nil {
		return false, nil
	}
	if user.ID == m.OwnerID {
		return true, nil
	}
	sc, err := s.scopeOf(c, *m.AppID)
	if err != nil {
		return false, err
	}
	if sc.Gated {
		return false, nil
	}
	if !m.Restricted {
		return true, nil
	}
	return s.store.MediaReadable(c.Request().Context(), m.ID, sc.Reader)
}

func errOr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// serveFile answers with a stored file under headers that keep it from ever
// running as a page. Range requests (video seeking) are answered when the
// storage can seek, which local files and S3 objects both can.
func (s *Server) serveFile(c echo.Context, key string, f io.Reader, size int64, cacheControl string, modified time.Time) {
	ct, inline := media.SafeContentType(key)
	h := c.Response().Header()
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", cacheControl)
	if !inline {
		h.Set("Content-Disposition", "attachment")
	}
	if rs, ok := f.(io.ReadSeeker); ok {
		http.ServeContent(c.Response(), c.Request(), "", modified, rs)
		return
	}
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	c.Response().WriteHeader(http.StatusOK)
	if _, err := io.Copy(c.Response(), f); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		s.logger.Debug("media copy interrupted", "key", key, "err", err)
	}
}

// localObject is the local-disk storage and the object key of a /media or
// /media-upload URL; with S3 configured these URLs do not exist.
func (s *Server) localObject(c echo.Context) (*media.Local, string, error) {
	local, ok := s.files.(*media.Local)
	if !ok {
		return nil, "", notFound("Not found")
	}
	key, err := url.PathUnescape(c.Param("*"))
	if err != nil {
		return nil, "", notFound("Not found")
	}
	return local, key, nil
}
