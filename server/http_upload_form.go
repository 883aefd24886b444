package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/store"
)

// maxFormUploadBytes bounds a page form that carries a file (new post, new
// story, profile picture without JavaScript): the largest file plus the
// form's text.
const maxFormUploadBytes = maxMediaBytes + maxBodyBytes

// formUpload reports whether a request is a page form with a file: a
// multipart POST to an app page. Only these skip checkInput's 1 MB body
// limit, and their text fields are checked there once parsed.
func formUpload(r *http.Request) bool {
	mt := media.BaseMime(r.Header.Get(echo.HeaderContentType))
	return r.Method == http.MethodPost && mt == echo.MIMEMultipartForm && strings.HasPrefix(r.URL.Path, "/apps/")
}

// parseFormUpload reads a multipart form (files over 1 MB go to temporary
// files, removed by the caller) and refuses NUL bytes or invalid UTF-8 in
// its text fields, as checkInput does for every other body.
func parseFormUpload(w http.ResponseWriter, r *http.Request) error {
	limit := int64(maxFormUploadBytes)
	if itemFileUpload(r) {
		// A DIGITAL item's deliverable (item_files.go) may be an album.
		limit = maxFormItemFileBytes + maxBodyBytes
	}
	if r.ContentLength > limit {
		return echo.ErrStatusRequestEntityTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseMultipartForm(maxBodyBytes); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return echo.ErrStatusRequestEntityTooLarge
		}
		return badRequest("Malformed form body")
	}
	for k, vs := range r.MultipartForm.Value {
		if !cleanText(k) {
			return errBadText
		}
		for _, v := range vs {
			if !cleanText(v) {
				return errBadText
			}
		}
	}
	return nil
}

// saveFormFile stores the file of a form field as the viewer's media, the
// same checks as POST /api/media and its upload (type, size, the bytes
// match the type), and marks it uploaded: the form's write then attaches it
// like an uploaded file. No file chosen answers nil. appID nil is account
// media (the profile picture).
func (s *Server) saveFormFile(c echo.Context, field, mediaKey string, appID *string, userID string) (*store.Media, error) {
	fh, err := c.FormFile(field)
	if errors.Is(err, http.ErrMissingFile) || errors.Is(err, http.ErrNotMultipart) || (err == nil && fh.Size == 0 && fh.Filename == "") {
		return nil, nil
	}
	if err != nil {
		return nil, badRequest("The file could not be read")
	}
	return s.saveFormFileHeader(c, fh, mediaKey, appID, userID)
}

// formFiles lists the files chosen for a field (none when the field was
// left empty: browsers send one nameless, empty part then).
func formFiles(c echo.Context, field string) []*multipart.FileHeader {
	f := c.Request().MultipartForm
	if f == nil {
		return nil
	}
	var out []*multipart.FileHeader
	for _, fh := range f.File[field] {
		if fh.Size > 0 || fh.Filename != "" {
			out = append(out, fh)
		}
	}
	return out
}

func (s *Server) saveFormFileHeader(c echo.Context, fh *multipart.FileHeader, mediaKey string, appID *string, userID string) (*store.Media, error) {
	req := mediaRequest{Name: fh.Filename, MimeType: fh.Header.Get(echo.HeaderContentType), Size: fh.Size, MediaKey: mediaKey}
	if err := checkUploadRequest(&req); err != nil {
		return nil, err
	}
	if err := s.limitWrite(c, "media", userID); err != nil {
		return nil, err
	}
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("open form file: %w", err)
	}
	defer f.Close()
	head := make([]byte, min(req.Size, 512))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, errUploadSize
	}
	if !media.SniffMatches(req.MimeType, head) {
		return nil, errUploadType
	}
	id := store.NewID()
	key := "users/" + userID + "/" + mediaKey + "/" + id + mediaTypes[req.MimeType]
	if appID != nil {
		key = "apps/" + *appID + "/" + mediaKey + "/" + id + mediaTypes[req.MimeType]
	}
	m := &store.Media{ID: id, AppID: appID, OwnerID: userID, Name: clip(req.Name, 200), Type: mediaTypeOf(req.MimeType),
		Size: req.Size, MimeType: req.MimeType, Path: key, MediaKey: mediaKey, CreatedAt: time.Now().UTC()}
	ctx := c.Request().Context()
	if _, err := s.store.CreateMedia(ctx, m); err != nil {
		return nil, fmt.Errorf("create media record: %w", err)
	}
	if err := s.files.Put(ctx, key, io.MultiReader(bytes.NewReader(head), f), req.Size, req.MimeType); err != nil {
		return nil, fmt.Errorf("store form upload %s: %w", id, err)
	}
	_, local := s.files.(*media.Local)
	// On local disk the copies are made now, so the next page lists them;
	// on S3 (and should that fail) a job makes them.
	if err := s.store.MarkMediaUploaded(ctx, m.ID, func(ctx context.Context, tx bun.IDB) error {
		if m.Type != store.MediaImage || local {
			return nil
		}
		return jobs.Enqueue(ctx, tx, jobs.MediaVariantsArgs{MediaID: m.ID})
	}); err != nil {
		return nil, err
	}
	m.Status = store.MediaUploaded
	if local {
		if err := jobs.ResizeImage(ctx, s.store, s.files, m, s.logger); err != nil {
			s.logger.Warn("resize form upload", "media", m.ID, "err", err)
			if err := jobs.Enqueue(ctx, s.store.DB(), jobs.MediaVariantsArgs{MediaID: m.ID}); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
