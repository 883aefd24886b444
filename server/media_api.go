package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"marquee/server/jobs"
	"marquee/server/media"
	"marquee/store"
)

const (
	maxProfileBytes = 5 << 20
	maxMediaBytes   = 50 << 20
	uploadURLTTL    = 15 * time.Minute
)

// mediaTypes lists what may be uploaded, with the file extension the object
// key gets: SafeContentType serves files by extension, so the extension must
// be ours, never the client's. SVG is left out on purpose (it can carry script).
var mediaTypes = map[string]string{
	"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp", "image/avif": ".avif",
	"video/mp4": ".mp4", "video/webm": ".webm", "video/quicktime": ".mov", "video/ogg": ".ogv",
}

var mediaKeyPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

type mediaRequest struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Size        int64  `json:"size"`
	MimeType    string `json:"mimeType"`
	Path        string `json:"path"`
	Description string `json:"description"`
	MediaKey    string `json:"mediaKey"`
	AppID       string `json:"appId"`
}

func mediaTypeOf(mimeType string) string {
	switch {
	case strings.HasPrefix(mimeType, "image/"):
		return store.MediaImage
	case strings.HasPrefix(mimeType, "video/"):
		return store.MediaVideo
	}
	return store.MediaOther
}

// checkUploadRequest applies SPEC.md section 5 to a declared file; the
// declared values are checked again against the bytes once they arrive.
func checkUploadRequest(r *mediaRequest) error {
	r.MimeType = media.BaseMime(r.MimeType)
	_, allowed := mediaTypes[r.MimeType]
	if r.MediaKey == "profile" {
		if !allowed || !strings.HasPrefix(r.MimeType, "image/") {
			return badRequest("Please select an image file")
		}
		if r.Size >= maxProfileBytes {
			return badRequest("File size must be less than 5MB")
		}
	} else {
		if !allowed {
			return badRequest("Only image and video files are supported")
		}
		if r.Size > maxMediaBytes {
			return badRequest("File size must be less than 50MB")
		}
	}
	if r.Size <= 0 {
		return badRequest("The file is empty")
	}
	return nil
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len([]rune(s)) > n {
		return string([]rune(s)[:n])
	}
	return s
}

// POST /api/media creates a PENDING record and a URL to PUT the bytes to.
// The object key is chosen here: the client's path is kept only as a label.
func (s *Server) apiCreateMedia(c echo.Context) error {
	user, err := requireUser(c)
	if err != nil {
		return err
	}
	var req mediaRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.MediaKey == "" {
		req.MediaKey = "post"
	}
	if !mediaKeyPattern.MatchString(req.MediaKey) {
		return badRequest("Invalid mediaKey")
	}
	if err := checkUploadRequest(&req); err != nil {
		return err
	}
	if err := s.limitWrite(c, "media", user.ID); err != nil {
		return err
	}
	id := store.NewID()
	key := "users/" + user.ID + "/" + req.MediaKey + "/" + id + mediaTypes[req.MimeType]
	var appID *string
	// SPEC.md's profile-picture upload sends the app's id too: the picture
	// is the account's all the same (one picture in every app), so it is
	// stored as account media and the upload makes it the picture.
	if req.MediaKey == "profile" {
		req.AppID = ""
	}
	if req.AppID != "" {
		sc, err := s.scopeOf(c, req.AppID)
		if err != nil {
			return err
		}
		view := sc.App
		if !sc.Can.CanUpload {
			return forbidden("You must follow this app to upload files")
		}
		appID = &view.ID
		key = "apps/" + view.ID + "/" + req.MediaKey + "/" + id + mediaTypes[req.MimeType]
	} else if req.MediaKey != "profile" {
		return badRequest("appId is required")
	}
	m := &store.Media{ID: id, AppID: appID, OwnerID: user.ID, Name: clip(req.Name, 200), Type: mediaTypeOf(req.MimeType),
		Size: req.Size, MimeType: req.MimeType, Path: key, Description: clip(req.Description, 500), MediaKey: req.MediaKey,
		CreatedAt: time.Now().UTC()}
	ctx := c.Request().Context()
	view, err := s.store.CreateMedia(ctx, m)
	if err != nil {
		return fmt.Errorf("create media record: %w", err)
	}
	if _, local := s.files.(*media.Local); !local && isProfilePicture(m) {
		// The upload goes straight to the bucket; a job makes it the
		// picture once it lands (local uploads do it in their PUT).
		if err := jobs.Enqueue(ctx, s.store.DB(), jobs.AdoptProfilePictureArgs{MediaID: m.ID}); err != nil {
			return err
		}
	}
	uploadURL, err := s.files.PresignPut(ctx, key, req.MimeType, req.Size, uploadURLTTL)
	if err != nil {
		return fmt.Errorf("presign upload: %w", err)
	}
	// The spec reads presignedUploadUrl and media.id; both places answer.
	return respond(c, http.StatusCreated, MediaCreated{Media: view, PresignedUploadURL: uploadURL})
}

const (
	msgUploadSize = "Uploaded file does not match its declared size"
	msgUploadType = "Uploaded file does not match its declared type"
)

var (
	errUploadSize = badRequest(msgUploadSize)
	errUploadType = badRequest(msgUploadType)
)

// verifyUpload checks the stored bytes of a PENDING media record (S3 uploads
// go straight to the bucket, so this is the first time the server sees them)
// and marks it UPLOADED. A file that fails is deleted.
func (s *Server) verifyUpload(ctx context.Context, m *store.Media) error {
	if m.Status == store.MediaUploaded {
		return nil
	}
	switch err := media.Verify(ctx, s.files, m.Path, m.Size, m.MimeType); {
	case errors.Is(err, media.ErrSizeMismatch), errors.Is(err, media.ErrTypeMismatch):
		s.discardUpload(ctx, m)
		return answer(err, nil)
	case err != nil:
		return answer(err, nil)
	}
	// The bytes are in the bucket, not here: a job makes the resized copies.
	if err := s.store.MarkMediaUploaded(ctx, m.ID, func(ctx context.Context, tx bun.IDB) error {
		if m.Type != store.MediaImage {
			return nil
		}
		return jobs.Enqueue(ctx, tx, jobs.MediaVariantsArgs{MediaID: m.ID})
	}); err != nil {
		return err
	}
	m.Status = store.MediaUploaded
	return nil
}

func (s *Server) discardUpload(ctx context.Context, m *store.Media) {
	if err := s.files.Delete(ctx, m.Path); err != nil {
		s.logger.Warn("discard rejected upload", "media", m.ID, "err", err)
	}
}

// PUT /media-upload/{key}?exp&sig receives a browser upload for local disk
// storage. The first bytes are checked before anything is written; the file
// is kept only when exactly the declared size arrives.
func (s *Server) mediaUpload(c echo.Context) error {
	local, key, err := s.localObject(c)
	if err != nil {
		return err
	}
	contentType := c.Request().Header.Get("Content-Type")
	if err := local.Verify("PUT", key, contentType, c.QueryParam("exp"), c.QueryParam("sig")); err != nil {
		return answer(err, wording{media.ErrBadSignature: "Invalid or expired upload URL"})
	}
	ctx := c.Request().Context()
	m, err := s.store.MediaByPath(ctx, key)
	if err != nil {
		return wrapLoad(err, "Not found")
	}
	if m.Status == store.MediaUploaded {
		return errorf(http.StatusConflict, "This file was already uploaded")
	}
	if media.BaseMime(contentType) != m.MimeType {
		return errUploadType
	}
	// Check the first bytes before anything is written, then stream the rest
	// to disk: holding up to 50 MB per upload in memory is not affordable.
	body := c.Request().Body
	head := make([]byte, min(m.Size, 512))
	if _, err := io.ReadFull(body, head); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errUploadSize
		}
		return badRequest("Upload interrupted")
	}
	if !media.SniffMatches(m.MimeType, head) {
		return errUploadType
	}
	err = local.Put(ctx, key, io.MultiReader(bytes.NewReader(head), body), m.Size, m.MimeType)
	if err != nil {
		return answer(fmt.Errorf("store upload %s: %w", m.ID, err), nil)
	}
	if err := s.store.MarkMediaUploaded(ctx, m.ID); err != nil {
		return err
	}
	m.Status = store.MediaUploaded
	// The file is on this disk: resize it now, so the page that shows it
	// next already lists the copies. Should that fail, a job tries again.
	if err := jobs.ResizeImage(ctx, s.store, s.files, m, s.logger); err != nil {
		s.logger.Warn("resize upload", "media", m.ID, "err", err)
		if err := jobs.Enqueue(ctx, s.store.DB(), jobs.MediaVariantsArgs{MediaID: m.ID}); err != nil {
			return err
		}
	}
	// SPEC.md's profile flow is create (mediaKey profile) then upload: the
	// upload itself makes the image the owner's picture, no extra call.
	if isProfilePicture(m) {
		if err := s.store.SetProfilePicture(ctx, m.OwnerID, m.ID); err != nil {
			return err
		}
	}
	return respondDone(c, "Uploaded")
}

// GET /api/media/{id}/content redirects to a fresh signed URL of the file.
func (s *Server) apiMediaContent(c echo.Context) error {
	ctx := c.Request().Context()
	m, err := s.store.MediaForServing(ctx, c.Param("id"))
	if err != nil {
		return wrapLoad(err, "Media not found")
	}
	if m.Status != store.MediaUploaded {
		return notFound("Media not found")
	}
	// The signed URL is as good as the file: a gated app's media is only
	// signed for those who may see it.
	if ok, err := s.mayLoadMedia(c, m); err != nil || !ok {
		return errOr(err, notFound("Media not found"))
	}
	if m.Restricted {
		// A locked post's file is never signed (a signed URL opens for
		// anyone it is passed to): its stable URL checks every load.
		c.Response().Header().Set("Cache-Control", "private, max-age=300")
		return c.Redirect(http.StatusFound, store.PublicMediaPath(m.ID, "original"))
	}
	u, err := s.files.PresignGet(ctx, m.Path, media.URLTTL)
	if err != nil {
		return fmt.Errorf("sign media %s: %w", m.ID, err)
	}
	c.Response().Header().Set("Cache-Control", "private, max-age=300")
	return c.Redirect(http.StatusFound, u)
}

// isProfilePicture: an account-level image uploaded as the profile picture
// (app media with the key is not the account's picture).
func isProfilePicture(m *store.Media) bool {
	return m.MediaKey == "profile" && m.AppID == nil && m.Type == store.MediaImage
}

// POST /api/auth/profile-picture {mediaId} makes an uploaded image the
// signed-in user's profile picture.
func (s *Server) apiProfilePicture(c echo.Context) error {
	user, err := requireUser(c)
	if err != nil {
		return err
	}
	var req struct {
		MediaID string `json:"mediaId"`
	}
	if err := c.Bind(&req); err != nil || req.MediaID == "" {
		return badRequest("mediaId is required")
	}
	ctx := c.Request().Context()
	m, err := s.store.MediaRecord(ctx, req.MediaID)
	if err != nil || m.OwnerID != user.ID {
		return notFound("Media not found")
	}
	if m.MediaKey != "profile" || m.Type != store.MediaImage {
		return badRequest("Please select an image file")
	}
	if err := s.verifyUpload(ctx, m); err != nil {
		return err
	}
	if err := s.store.SetProfilePicture(ctx, user.ID, m.ID); err != nil {
		return err
	}
	view, err := s.store.MediaViewOf(ctx, m)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, ProfilePictureSet{ProfilePicture: view})
}

// MediaCreated is data of POST /api/media: the record and where its bytes go.
type MediaCreated struct {
	atTop
	Media              store.MediaView `json:"media"`
	PresignedUploadURL string          `json:"presignedUploadUrl"`
}

// ProfilePictureSet is data of POST /api/auth/profile-picture.
type ProfilePictureSet struct {
	ProfilePicture store.MediaView `json:"profilePicture"`
}
