package server

import (
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
)

// builtFiles serves the build output (public/build, at /static/build/):
// the islands runtime, its chunks and the stylesheet. Their names carry a
// content hash and they are cached for a year, so each is compressed once,
// at the best levels (brotli, else gzip), and kept in memory. The general
// gzip middleware compresses per request at level 1 (right for JSON): the
// runtime went out as 80 KB there against 62 KB in brotli (level 9), and on a slow
// phone link those bytes are on the way to the first paint (Lighthouse).
type builtFiles struct {
	dir   string
	mu    sync.Mutex
	files map[string]*builtFile
}

// builtFile is one file in its three encodings; size and mod tell a file
// rewritten in place (a rebuild in development) from the one kept.
type builtFile struct {
	size              int64
	mod               time.Time
	identity, gz, br  []byte
	contentType, etag string
}

func newBuiltFiles(dir string) *builtFiles {
	return &builtFiles{dir: dir, files: map[string]*builtFile{}}
}

// get reads and compresses the file at rel (a clean path under dir) the
// first time, and again when it changed on disk.
func (b *builtFiles) get(rel string) (*builtFile, error) {
	full := filepath.Join(b.dir, filepath.FromSlash(rel))
	info, err := os.Stat(full)
	if err != nil || info.IsDir() {
		return nil, echo.ErrNotFound
	}
	b.mu.Lock()
	f := b.files[rel]
	b.mu.Unlock()
	if f != nil && f.size == info.Size() && f.mod.Equal(info.ModTime()) {
		return f, nil
	}
	body, err := os.ReadFile(full)
	if err != nil {
		return nil, echo.ErrNotFound
	}
	ct := mime.TypeByExtension(path.Ext(rel))
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	f = &builtFile{size: info.Size(), mod: info.ModTime(), identity: body, contentType: ct,
		gz: gzipBytes(body, gzip.BestCompression), br: brotliBytes(body, 0), // once per file and process: the widest window
		etag: `"` + info.ModTime().UTC().Format("20060102150405.000000000") + "-" + strconv.FormatInt(info.Size(), 10) + `"`}
	b.mu.Lock()
	b.files[rel] = f
	b.mu.Unlock()
	return f, nil
}

// GET /static/build/* answers a build file in the best encoding the client
// accepts (brotli, gzip, else as is), cached for a year (staticCache).
func (s *Server) staticBuild(c echo.Context) error {
	rel := path.Clean("/" + c.Param("*"))[1:]
	if rel == "" || strings.HasPrefix(rel, "..") {
		return echo.ErrNotFound
	}
	f, err := s.built.get(rel)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Vary", "Accept-Encoding")
	body, enc := f.identity, ""
	switch req := c.Request(); {
	case acceptsEncoding(req, "br"):
		body, enc = f.br, "br"
	case acceptsEncoding(req, "gzip"):
		body, enc = f.gz, "gzip"
	}
	etag := strings.TrimSuffix(f.etag, `"`) + map[string]string{"": "", "br": "-br", "gzip": "-gz"}[enc] + `"`
	h.Set("ETag", etag)
	if c.Request().Header.Get("If-None-Match") == etag {
		return c.NoContent(http.StatusNotModified)
	}
	if enc != "" {
		h.Set("Content-Encoding", enc)
	}
	sendInOnePiece(c.Request())
	return c.Blob(http.StatusOK, f.contentType, body)
}
