package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Why an uploaded file is not (yet) usable.
var (
	ErrIncomplete   = errors.New("media: upload not complete")
	ErrSizeMismatch = errors.New("media: file does not match its declared size")
	ErrTypeMismatch = errors.New("media: file does not match its declared type")
)

// Verify checks a stored upload against what its record declared: the
// exact size, and first bytes that fit the declared type's family. Uploads
// to S3 go straight to the bucket, so this is the first time the server
// sees their bytes. The caller decides what to do with a file that fails.
func Verify(ctx context.Context, files Storage, key string, size int64, mimeType string) error {
	got, err := files.Stat(ctx, key)
	if err != nil {
		return ErrIncomplete
	}
	if got != size {
		return ErrSizeMismatch
	}
	f, _, err := files.Open(ctx, key)
	if err != nil {
		return fmt.Errorf("open upload %s: %w", key, err)
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read upload %s: %w", key, err)
	}
	if !SniffMatches(mimeType, head[:n]) {
		return ErrTypeMismatch
	}
	return nil
}

// BaseMime lowercases a content type and drops parameters ("; charset=").
func BaseMime(ct string) string {
	if t, _, err := mime.ParseMediaType(ct); err == nil {
		return t
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// SniffMatches reports whether the first bytes of a file fit its declared
// type's family. HTML or script pretending to be an image fails here.
func SniffMatches(declared string, head []byte) bool {
	detected := BaseMime(http.DetectContentType(head))
	switch {
	case strings.HasPrefix(declared, "image/"):
		return strings.HasPrefix(detected, "image/") && detected != "image/svg+xml"
	case strings.HasPrefix(declared, "video/"):
		// Go's sniffer knows mp4, webm, avi and ogg only; other containers
		// (QuickTime) come back as octet-stream, which is still not markup.
		return strings.HasPrefix(detected, "video/") || detected == "application/ogg" || detected == "application/octet-stream"
	}
	return false
}
