package media

import (
	"context"
	"mime"
	"path"
	"strings"
)

// Signer adapts a Storage to the store's URLSigner.
type Signer struct{ Storage Storage }

func (s Signer) SignedURL(ctx context.Context, key string) (string, error) {
	return s.Storage.PresignGet(ctx, key, URLTTL)
}

// SafeContentType is the type user files are served with: images, video and
// audio keep theirs; anything else becomes a download, never HTML or script.
func SafeContentType(key string) (contentType string, inline bool) {
	ct := mime.TypeByExtension(strings.ToLower(path.Ext(key)))
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	switch {
	case ct == "image/svg+xml":
		return "application/octet-stream", false // SVG can carry script
	case strings.HasPrefix(ct, "image/"), strings.HasPrefix(ct, "video/"), strings.HasPrefix(ct, "audio/"):
		return ct, true
	default:
		return "application/octet-stream", false
	}
}
