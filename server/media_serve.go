package server

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"marquee/server/media"
)

// GET /media/{key}?exp&sig serves a locally stored file behind a URL this
// server signed. With S3 the browser loads presigned S3 URLs instead.
func (s *Server) mediaGet(c echo.Context) error {
	local, key, err := s.localObject(c)
	if err != nil {
		return err
	}
	if err := local.Verify("GET", key, "", c.QueryParam("exp"), c.QueryParam("sig")); err != nil {
		return forbidden("This link has expired")
	}
	f, size, err := local.Open(c.Request().Context(), key)
	if err != nil {
		return notFound("Not found")
	}
	defer f.Close()
	ct, inline := media.SafeContentType(key)
	h := c.Response().Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age=86400")
	if !inline {
		h.Set("Content-Disposition", "attachment")
	}
	c.Response().WriteHeader(http.StatusOK)
	if _, err := io.Copy(c.Response(), f); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		s.logger.Debug("media copy interrupted", "key", key, "err", err)
	}
	return nil
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
