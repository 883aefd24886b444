package media

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// exactReader reads exactly size bytes of r: ending early or going on
// longer is ErrSize, so a short or long part is never stored as complete.
type exactReader struct {
	r    io.Reader
	left int64
}

func exactly(r io.Reader, size int64) io.Reader { return &exactReader{r: readTagger{r}, left: size} }

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		// One byte more than declared tells a longer body.
		var one [1]byte
		if n, _ := io.ReadFull(e.r, one[:]); n > 0 {
			return 0, ErrSize
		}
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if e.left > 0 {
			return n, ErrSize
		}
		err = nil
	}
	return n, err
}

// The local disk keeps a multipart upload's parts in a folder of their own,
// .multipart/<uploadID>/<number>, outside any key (keys never start with a
// dot folder the server serves).
var uploadIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func (l *Local) partsDir(uploadID string) (string, error) {
	if !uploadIDPattern.MatchString(uploadID) {
		return "", fmt.Errorf("media: invalid upload id %q", uploadID)
	}
	return filepath.Join(l.Dir, ".multipart", uploadID), nil
}

func (l *Local) CreateMultipart(_ context.Context, key, _ string) (string, error) {
	if _, err := l.path(key); err != nil {
		return "", err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("media: upload id: %w", err)
	}
	id := hex.EncodeToString(b)
	dir, _ := l.partsDir(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("media: create upload folder: %w", err)
	}
	return id, nil
}

// PutPart writes the part to a temporary file and renames it into place
// once it is whole, so a part cut off mid-way is simply missing.
func (l *Local) PutPart(_ context.Context, key, uploadID string, number int, r io.Reader, size int64) (string, error) {
	dir, err := l.partsDir(uploadID)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("media: upload %s of %s: %w", uploadID, key, err)
	}
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return "", fmt.Errorf("media: create part file: %w", err)
	}
	defer os.Remove(tmp.Name())
	sum := md5.New()
	_, err = io.Copy(io.MultiWriter(tmp, sum), exactly(r, size))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("media: write part %d of %s: %w", number, key, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, fmt.Sprint(number))); err != nil {
		return "", fmt.Errorf("media: store part %d of %s: %w", number, key, err)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// CompleteMultipart joins the parts in the order given into a temporary
// file beside the final one, renames it into place, then removes the parts.
func (l *Local) CompleteMultipart(_ context.Context, key, uploadID string, parts []Part) error {
	dir, err := l.partsDir(uploadID)
	if err != nil {
		return err
	}
	p, err := l.path(key)
	if err != nil {
		return err
	}
	err = writeAtomically(p, func(tmp *os.File) error {
		for _, part := range parts {
			if err := appendPart(tmp, filepath.Join(dir, fmt.Sprint(part.Number)), part.ETag); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("media: complete %s: %w", key, err)
	}
	_ = os.RemoveAll(dir)
	return nil
}

// appendPart copies one part to w, checking it is the copy the ETag names.
func appendPart(w io.Writer, name, etag string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("part: %w", err)
	}
	defer f.Close()
	sum := md5.New()
	if _, err := io.Copy(io.MultiWriter(w, sum), f); err != nil {
		return fmt.Errorf("part %s: %w", filepath.Base(name), err)
	}
	if hex.EncodeToString(sum.Sum(nil)) != etag {
		return fmt.Errorf("part %s: not the copy %s", filepath.Base(name), etag)
	}
	return nil
}

func (l *Local) AbortMultipart(_ context.Context, _, uploadID string) error {
	dir, err := l.partsDir(uploadID)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("media: abort upload %s: %w", uploadID, err)
	}
	return nil
}
