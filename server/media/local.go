package media

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Local keeps files under Dir and signs its own URLs with an HMAC key. The
// URLs point at this server: GET /media/{key} and PUT /media-upload/{key}.
type Local struct {
	Dir     string
	BaseURL string // public URL of the main site, e.g. http://localhost:3000
	Key     []byte
	Now     func() time.Time
}

var ErrBadSignature = errors.New("media: bad or expired signature")

func (l *Local) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Local) path(key string) (string, error) {
	clean := filepath.Clean("/" + key)
	if clean == "/" || strings.Contains(key, "..") {
		return "", fmt.Errorf("media: invalid key %q", key)
	}
	return filepath.Join(l.Dir, clean), nil
}

// expiry rounds up to the next window boundary so URLs repeat within a window.
func (l *Local) expiry(ttl time.Duration) int64 {
	window := int64(ttl / time.Second)
	if window <= 0 {
		window = 1
	}
	now := l.now().Unix()
	return (now/window + 2) * window
}

func (l *Local) sign(method, key string, exp int64, contentType string) string {
	mac := hmac.New(sha256.New, l.Key)
	fmt.Fprintf(mac, "%s\n%s\n%d\n%s", method, key, exp, contentType)
	return hex.EncodeToString(mac.Sum(nil))
}

func (l *Local) url(prefix, method, key, contentType string, ttl time.Duration) string {
	exp := l.expiry(ttl)
	q := url.Values{}
	q.Set("exp", strconv.FormatInt(exp, 10))
	q.Set("sig", l.sign(method, key, exp, contentType))
	return strings.TrimRight(l.BaseURL, "/") + prefix + escapeKey(key) + "?" + q.Encode()
}

func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// PresignPut signs key and content type only: the upload handler holds the
// body to the media record's declared size.
func (l *Local) PresignPut(_ context.Context, key, contentType string, _ int64, ttl time.Duration) (string, error) {
	return l.url("/media-upload/", "PUT", key, contentType, ttl), nil
}

func (l *Local) PresignGet(_ context.Context, key string, ttl time.Duration) (string, error) {
	return l.url("/media/", "GET", key, "", ttl), nil
}

// Verify checks a signature made by PresignPut or PresignGet.
func (l *Local) Verify(method, key, contentType, expParam, sig string) error {
	exp, err := strconv.ParseInt(expParam, 10, 64)
	if err != nil || exp < l.now().Unix() {
		return ErrBadSignature
	}
	want := l.sign(method, key, exp, contentType)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return ErrBadSignature
	}
	return nil
}

// ErrSize means the bytes given to Put were more or fewer than the declared size.
var ErrSize = errors.New("media: size differs from the declared size")

// ErrRead marks a failure to read the bytes being stored (a client that went
// away mid-upload), as opposed to a failure to write them to disk.
var ErrRead = errors.New("media: read failed")

type readTagger struct{ r io.Reader }

func (t readTagger) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", ErrRead, err)
	}
	return n, err
}

// Put streams exactly size bytes from r into a temporary file beside the
// final one and renames it into place only when complete, so readers never
// see a partial file and a failed upload leaves nothing behind. It reads at
// most size+1 bytes: one more than declared is enough to tell a larger file.
func (l *Local) Put(_ context.Context, key string, r io.Reader, size int64, _ string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	err = writeAtomically(p, func(tmp *os.File) error {
		n, err := io.Copy(tmp, io.LimitReader(readTagger{r}, size+1))
		if err == nil && n != size {
			err = ErrSize
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("media: write %s: %w", key, err)
	}
	return nil
}

// writeAtomically writes the file at p through fill into a temporary file
// beside it, flushed and renamed into place only when fill succeeds: a
// reader never sees a partial file, and a failure leaves nothing behind.
func writeAtomically(p string, fill func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("create folder: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	err = fill(tmp)
	if err == nil {
		// Flush before the rename so a crash cannot leave a short file under the final name.
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

func (l *Local) Open(_ context.Context, key string) (io.ReadCloser, int64, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, fmt.Errorf("media: open %s: %w", key, notFound(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("media: stat %s: %w", key, err)
	}
	return f, st.Size(), nil
}

// notFound marks a missing file as ErrNotFound, keeping the file error.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

func (l *Local) Stat(_ context.Context, key string) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0, fmt.Errorf("media: stat %s: %w", key, notFound(err))
	}
	return st.Size(), nil
}

func (l *Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("media: delete %s: %w", key, err)
	}
	return nil
}

// SweepTemp removes upload temp files older than age: what a crash in the
// middle of Put leaves behind. A live upload's file is younger than any
// sensible age, so it is never touched.
func (l *Local) SweepTemp(age time.Duration) (int, error) {
	cutoff := time.Now().Add(-age)
	removed := 0
	err := filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasPrefix(d.Name(), ".upload-") {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.ModTime().After(cutoff) {
			return nil //nolint:nilerr // gone meanwhile or too young: leave it
		}
		if err := os.Remove(p); err == nil {
			removed++
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("media: sweep temp files: %w", err)
	}
	return removed, nil
}

// Ready reports whether the media folder is there (GET /readyz).
func (l *Local) Ready(context.Context) error {
	if fi, err := os.Stat(l.Dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("not a folder")
		}
		return fmt.Errorf("media folder: %w", err)
	}
	return nil
}
