package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/media"
	"marquee/store"
)

// What a DIGITAL item delivers: files the creator uploads (private, never
// item media), downloaded by the buyers of a paid order through links
// signed for them that expire; each download is counted, a refund revokes.

// downloadLinkTTL is how long a download link works after the order page
// made it.
const downloadLinkTTL = 15 * time.Minute

// presignedDownloadTTL is how long the storage's own link, which a
// counted download redirects to, works: long enough to start the transfer.
const presignedDownloadTTL = time.Minute

// defaultDownloadTypes are the file types creators may deliver unless the
// operator sets DOWNLOAD_TYPES (extensions, comma separated).
const defaultDownloadTypes = ".pdf,.epub,.zip,.flac,.mp3,.wav,.ogg,.m4a,.aac,.mp4,.mov,.webm,.jpg,.jpeg,.png,.gif,.webp,.txt"

// maxFormItemFileBytes bounds the plain form's file (JavaScript off): the
// form is spooled to a temporary file on disk past its first megabyte
// (never held in memory), then streamed to the storage. Larger files, up to
// DOWNLOAD_MAX_MB, go through the resumable upload (item_uploads.go).
const maxFormItemFileBytes = 2 << 30

// downloadMaxBytes is the operator's largest deliverable (DOWNLOAD_MAX_MB).
func (c Config) downloadMaxBytes() int64 {
	if c.DownloadMaxBytes > 0 {
		return c.DownloadMaxBytes
	}
	return 2 << 30
}

// downloadPartBytes is the part size of a resumable upload (DOWNLOAD_PART_MB).
func (c Config) downloadPartBytes() int64 {
	if c.DownloadPartBytes > 0 {
		return c.DownloadPartBytes
	}
	return 8 << 20
}

// checkDeliverable answers the type a deliverable named name of size bytes
// is served as, or why the operator does not allow it.
func (s *Server) checkDeliverable(name string, size int64) (string, error) {
	mimeType, ok := s.cfg.downloadTypes()[strings.ToLower(path.Ext(name))]
	if !ok {
		return "", badRequest(msgDownloadType)
	}
	if size <= 0 {
		return "", badRequest("The file is empty")
	}
	if size > s.cfg.downloadMaxBytes() {
		return "", badRequest(msgDownloadSize)
	}
	return mimeType, nil
}

// itemFileKey is the private storage key of an item's file.
func itemFileKey(item *store.StoreItem, id, name string) string {
	return "private/apps/" + item.AppID + "/items/" + item.ID + "/" + id + strings.ToLower(path.Ext(name))
}

// itemFileUpload reports whether a request is the upload of an item's
// deliverable, which gets maxItemFileBytes instead of the media limit.
func itemFileUpload(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/apps/") && strings.Contains(r.URL.Path, "/store/items/") && strings.HasSuffix(r.URL.Path, "/files")
}

const (
	msgDownloadType    = "This file type is not allowed for downloads"
	msgDownloadSize    = "The file is too large"
	msgDownloadDigital = "Only DIGITAL items deliver files"
	msgDownloadLink    = "This download link is not valid"
	msgDownloadExpired = "This download link has expired: open the order again for a new one"
	msgDownloadRevoked = "This order no longer includes the download"
)

// downloadTypes maps the allowed extensions to the type the file is served as.
func (c Config) downloadTypes() map[string]string {
	list := c.DownloadTypes
	if strings.TrimSpace(list) == "" {
		list = defaultDownloadTypes
	}
	out := map[string]string{}
	for _, ext := range strings.Split(list, ",") {
		ext = strings.ToLower(strings.TrimSpace(ext))
		if ext == "" {
			continue
		}
		if !strings.HasPrefix(ext, ".") {
			ext = "." + ext
		}
		t := mime.TypeByExtension(ext)
		if t == "" {
			t = "application/octet-stream"
		}
		out[ext] = t
	}
	return out
}

// POST /apps/:app/store/items/:itemId/files (multipart "file"): the
// creator adds a file the item delivers; back to the edit page.
func (s *Server) formItemFileUpload(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireManage(); err != nil {
		return err
	}
	back := appBasePath(c.Request(), sc.App.Name) + "/store/items/" + url.PathEscape(c.Param("itemId")) + "/edit"
	f, err := s.addItemFile(c, sc, c.Param("itemId"))
	if err != nil {
		return formError(c, err, back)
	}
	return c.Redirect(http.StatusSeeOther, back+"?notice="+url.QueryEscape("Added "+f.Name))
}

// addItemFile streams the uploaded file into storage under a private key
// and records it.
func (s *Server) addItemFile(c echo.Context, sc *Scope, itemID string) (*store.ItemFile, error) {
	ctx := c.Request().Context()
	item, err := s.store.ItemByID(ctx, itemID)
	if err != nil || item.StoreID != sc.App.Store.ID {
		return nil, notFound("Item not found")
	}
	if item.Type != store.ItemDigital {
		return nil, badRequest(msgDownloadDigital)
	}
	fh, err := c.FormFile("file")
	if err != nil {
		return nil, badRequest("Choose a file to upload")
	}
	mimeType, err := s.checkDeliverable(fh.Filename, fh.Size)
	if err != nil {
		return nil, err
	}
	src, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("open upload: %w", err)
	}
	defer src.Close()
	id := store.NewID()
	file := &store.ItemFile{ID: id, AppID: sc.App.ID, StoreItemID: item.ID, Name: clip(path.Base(fh.Filename), 200),
		MimeType: mimeType, Size: fh.Size, Path: itemFileKey(item, id, fh.Filename), CreatedAt: time.Now().UTC()}
	if err := s.files.Put(ctx, file.Path, src, fh.Size, mimeType); err != nil {
		return nil, fmt.Errorf("store item file: %w", err)
	}
	if err := s.store.AddItemFile(ctx, file); err != nil {
		_ = s.files.Delete(context.WithoutCancel(ctx), file.Path)
		return nil, err
	}
	return file, nil
}

// downloadKey is the key download links are signed with, kept in the
// database so every process agrees.
func (s *Server) downloadKey(ctx context.Context) ([]byte, error) {
	k, err := s.store.StoredSecret(ctx, "download-links", func() (string, error) {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return hex.EncodeToString(b), nil
	})
	if err != nil {
		return nil, fmt.Errorf("download key: %w", err)
	}
	return []byte(k), nil
}

func downloadSig(key []byte, fileID, orderID, userID string, exp int64) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s\n%s\n%s\n%d", fileID, orderID, userID, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// downloadURL is a link for the buyer of order to file, valid until exp.
func downloadURL(key []byte, appName, fileID, orderID, userID string, exp time.Time) string {
	e := exp.Unix()
	return "/apps/" + url.PathEscape(appName) + "/downloads/" + url.PathEscape(fileID) + "?order=" + url.QueryEscape(orderID) +
		"&exp=" + strconv.FormatInt(e, 10) + "&sig=" + downloadSig(key, fileID, orderID, userID, e)
}

// signDownloads fills in the links of the orders' downloads, signed for
// each order's buyer (whoever else opens one gets 403).
func (s *Server) signDownloads(ctx context.Context, appName string, orders ...*store.OrderView) error {
	var key []byte
	exp := time.Now().Add(downloadLinkTTL)
	for _, o := range orders {
		for i := range o.Items {
			for j := range o.Items[i].Downloads {
				if key == nil {
					k, err := s.downloadKey(ctx)
					if err != nil {
						return err
					}
					key = k
				}
				d := &o.Items[i].Downloads[j]
				d.URL = downloadURL(key, appName, d.ID, o.ID, o.UserID, exp)
			}
		}
	}
	return nil
}

// GET /apps/:app/downloads/:fileId?order&exp&sig: the file, streamed, for
// the buyer the link was signed for, while it is fresh and the order still
// grants it; each download is counted.
func (s *Server) downloadItemFile(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return unauthorized("Authentication required")
	}
	ctx := c.Request().Context()
	key, err := s.downloadKey(ctx)
	if err != nil {
		return err
	}
	fileID, orderID := c.Param("fileId"), c.QueryParam("order")
	exp, perr := strconv.ParseInt(c.QueryParam("exp"), 10, 64)
	want := downloadSig(key, fileID, orderID, sc.User.ID, exp)
	if perr != nil || !hmac.Equal([]byte(want), []byte(c.QueryParam("sig"))) {
		// A link signed for someone else fails here too.
		return forbidden(msgDownloadLink)
	}
	if time.Now().Unix() > exp {
		return errorf(http.StatusGone, msgDownloadExpired)
	}
	f, err := s.store.ItemFileByID(ctx, fileID)
	if err != nil || f.AppID != sc.App.ID {
		return notFound("File not found")
	}
	if err := s.store.CountDownload(ctx, orderID, sc.User.ID, f); err != nil {
		if errors.Is(err, store.ErrDownloadRevoked) {
			return errorf(http.StatusGone, msgDownloadRevoked)
		}
		return err
	}
	// On S3 the bytes come from S3 itself, through a link that works for a
	// moment only: the counted, checked request above is the only way to one.
	if p, ok := s.files.(media.Presigner); ok {
		u, err := p.PresignDownload(ctx, f.Path, f.Name, f.MimeType, presignedDownloadTTL)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "private, no-store")
		return c.Redirect(http.StatusFound, u)
	}
	r, size, err := s.files.Open(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("open item file: %w", err)
	}
	defer r.Close()
	h := c.Response().Header()
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	c.Response().Header().Set("Content-Type", f.MimeType)
	c.Response().WriteHeader(http.StatusOK)
	_, err = io.Copy(c.Response(), r)
	return err
}
