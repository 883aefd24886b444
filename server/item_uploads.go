package server

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/media"
	"marquee/store"
)

// The resumable upload of a DIGITAL item's file (issue 27, item 3), for
// files too large for one request: the studio starts an upload, sends the
// file in numbered parts of partSize bytes (each streamed to the storage,
// any order, sent again when one fails), asks which parts are stored after
// an interruption, and completes it into the item's file, or aborts it.
// On S3 the parts are S3's multipart upload; on local disk, files of their
// own joined at the end.

const msgUploadGone = "Upload not found"

// itemUploadPart reports whether a request is one part of an upload, whose
// body (up to DOWNLOAD_PART_MB) is the file's bytes, streamed as it comes.
func itemUploadPart(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/api/store/items/") &&
		strings.Contains(r.URL.Path, "/uploads/") && strings.Contains(r.URL.Path, "/parts/")
}

type itemUploadRequest struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// POST /api/store/items/:itemId/uploads {name, size}: starts an upload.
func (s *Server) apiItemUploadCreate(c echo.Context) error {
	sc, item, err := s.scopeOfManagedItem(c)
	if err != nil {
		return err
	}
	if item.Type != store.ItemDigital {
		return badRequest(msgDownloadDigital)
	}
	var req itemUploadRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	name := clip(path.Base(strings.TrimSpace(req.Name)), 200)
	mimeType, err := s.checkDeliverable(name, req.Size)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	id := store.NewID()
	u := &store.ItemUpload{ID: id, AppID: item.AppID, StoreItemID: item.ID, UserID: sc.User.ID, Name: name, MimeType: mimeType,
		Size: req.Size, PartSize: s.cfg.downloadPartBytes(), Path: itemFileKey(item, id, name), CreatedAt: time.Now().UTC()}
	if u.StorageUploadID, err = s.files.CreateMultipart(ctx, u.Path, mimeType); err != nil {
		return fmt.Errorf("start item upload: %w", err)
	}
	if err := s.store.AddItemUpload(ctx, u); err != nil {
		_ = s.files.AbortMultipart(ctx, u.Path, u.StorageUploadID)
		return err
	}
	return respond(c, http.StatusCreated, uploadView(u))
}

// itemUploadView is an upload as the studio sees it: what to send next.
type itemUploadView struct {
	*store.ItemUpload
	PartCount int `json:"partCount"`
}

func uploadView(u *store.ItemUpload) itemUploadView {
	return itemUploadView{ItemUpload: u, PartCount: u.PartCount()}
}

// managedUpload loads the upload of the path, of an item the viewer manages.
func (s *Server) managedUpload(c echo.Context) (*store.StoreItem, *store.ItemUpload, error) {
	_, item, err := s.scopeOfManagedItem(c)
	if err != nil {
		return nil, nil, err
	}
	u, err := s.store.ItemUploadByID(c.Request().Context(), c.Param("uploadId"))
	if err != nil || u.StoreItemID != item.ID {
		return nil, nil, wrapLoad(orNotFound(err), msgUploadGone)
	}
	return item, u, nil
}

// orNotFound is err, or ErrNotFound when there is none (found, but not
// where the path says).
func orNotFound(err error) error {
	if err == nil {
		return store.ErrNotFound
	}
	return err
}

// GET /api/store/items/:itemId/uploads/:uploadId: the upload and the parts
// stored so far, to resume after an interruption.
func (s *Server) apiItemUpload(c echo.Context) error {
	_, u, err := s.managedUpload(c)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, uploadView(u))
}

// PUT /api/store/items/:itemId/uploads/:uploadId/parts/:number (the part's
// bytes, exactly its size): stores one part, replacing an earlier copy.
func (s *Server) apiItemUploadPart(c echo.Context) error {
	_, u, err := s.managedUpload(c)
	if err != nil {
		return err
	}
	number, _ := strconv.Atoi(c.Param("number"))
	want := u.PartBytes(number)
	if want == 0 {
		return badRequest(fmt.Sprintf("This upload has parts 1 to %d", u.PartCount()))
	}
	r := c.Request()
	if r.ContentLength != want {
		return badRequest(fmt.Sprintf("Part %d must be %d bytes", number, want))
	}
	ctx := r.Context()
	etag, err := s.files.PutPart(ctx, u.Path, u.StorageUploadID, number, r.Body, want)
	if err != nil {
		if errors.Is(err, media.ErrRead) || errors.Is(err, media.ErrSize) || ctx.Err() != nil {
			return badRequest("The part did not arrive whole: send it again")
		}
		return fmt.Errorf("store part: %w", err)
	}
	part := &store.ItemUploadPart{UploadID: u.ID, Number: number, Size: want, ETag: etag}
	if err := s.store.SaveUploadPart(ctx, part); err != nil {
		return wrapLoad(err, msgUploadGone)
	}
	return respond(c, http.StatusOK, part)
}

// POST /api/store/items/:itemId/uploads/:uploadId/complete: joins the
// parts into the item's file, once every part is stored.
func (s *Server) apiItemUploadComplete(c echo.Context) error {
	item, u, err := s.managedUpload(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	file, err := s.store.FinishItemUpload(ctx, u.ID, func(u *store.ItemUpload) (*store.ItemFile, error) {
		if missing := u.PartCount() - len(u.Parts); missing > 0 {
			return nil, badRequest(fmt.Sprintf("%d of %d parts are missing", missing, u.PartCount()))
		}
		parts := make([]media.Part, len(u.Parts))
		for i, p := range u.Parts {
			if p.Number != i+1 || p.Size != u.PartBytes(p.Number) {
				return nil, badRequest(fmt.Sprintf("Part %d is not as the upload declared: send it again", i+1))
			}
			parts[i] = media.Part{Number: p.Number, ETag: p.ETag}
		}
		if err := s.files.CompleteMultipart(ctx, u.Path, u.StorageUploadID, parts); err != nil {
			return nil, fmt.Errorf("complete item upload: %w", err)
		}
		if size, err := s.files.Stat(ctx, u.Path); err != nil || size != u.Size {
			_ = s.files.Delete(ctx, u.Path)
			return nil, fmt.Errorf("complete item upload: stored %d bytes of %d: %w", size, u.Size, err)
		}
		return &store.ItemFile{ID: u.ID, AppID: u.AppID, StoreItemID: item.ID, Name: u.Name, MimeType: u.MimeType,
			Size: u.Size, Path: u.Path, CreatedAt: time.Now().UTC()}, nil
	})
	if err != nil {
		return wrapLoad(err, msgUploadGone)
	}
	return respondMessage(c, http.StatusCreated, file, "Added "+file.Name)
}

// DELETE /api/store/items/:itemId/uploads/:uploadId: gives the upload up;
// the stored parts are removed.
func (s *Server) apiItemUploadAbort(c echo.Context) error {
	_, u, err := s.managedUpload(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	_, err = s.store.FinishItemUpload(ctx, u.ID, func(u *store.ItemUpload) (*store.ItemFile, error) {
		return nil, s.files.AbortMultipart(ctx, u.Path, u.StorageUploadID)
	})
	if err != nil {
		return wrapLoad(err, msgUploadGone)
	}
	return respondDone(c, "Upload cancelled")
}
